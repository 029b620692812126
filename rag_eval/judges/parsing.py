"""Turning an LLM's text into validated RAGBench labels.

Real judge output is messy: JSON inside markdown fences, prose before and after it,
keys written "0A" or "[1b]", keys that do not exist, a missing field. This module is
pure (no I/O), so each rule is tested on plain strings:

1. :func:`find_json`: the whole text as JSON, else the first balanced ``{...}`` inside
   a code fence, else the first balanced object anywhere (string-aware brace matching);
2. :class:`TraceOutput` (pydantic): the schema, with lenient coercion of types;
3. :func:`labels_from_output`: keys normalised and checked against the item's real
   keys; everything dropped is recorded with a reason, never silently.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from rag_eval.schema import SPECIAL_SUPPORT_TOKENS, EvalItem, Labels, SentenceSupport
from rag_eval.text.keys import normalize_key

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.S)

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)

_REFUSAL = re.compile(
    r"^\s*(i'?m sorry|sorry|i cannot|i can'?t|i am unable|i'?m unable|i won'?t|as an ai)\b", re.I
)


def strip_code_fences(text: str) -> str:
    """The content of the first markdown code block holding a ``{``; ``text`` otherwise."""
    for match in _FENCE.finditer(text):
        if "{" in match.group(1):
            return match.group(1)
    return text


def iter_balanced_objects(text: str) -> Iterator[str]:
    """Every top-level balanced ``{...}`` substring, left to right. Braces inside JSON
    strings (with escapes) do not count."""
    i = 0
    n = len(text)
    while i < n:
        start = text.find("{", i)
        if start < 0:
            return
        depth = 0
        in_string = False
        escaped = False
        for j in range(start, n):
            ch = text[j]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    yield text[start : j + 1]
                    i = j + 1
                    break
        else:
            return  # unbalanced to the end: truncated
    return


@dataclass(frozen=True, slots=True)
class Extraction:
    """``value`` is the parsed object or None; ``how`` says where it was found:
    "json" (the whole text), "fenced", "prose" (inside other text) or "none"."""

    value: dict[str, Any] | None
    how: str


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (reasoning models served by Ollama,
    vLLM, llama.cpp put them before the answer, often with braces inside)."""
    text = _THINK.sub("", text)
    if "<think>" in text and "</think>" not in text:  # unterminated: everything after it is thought
        text = text.split("<think>", 1)[0]
    return text


def iter_json_objects(text: str) -> Iterator[Extraction]:
    """Every JSON object in ``text``, best guess first: the whole text, then objects in
    the first code fence, then objects anywhere. Reasoning blocks are ignored."""
    stripped = strip_reasoning(text or "").strip()
    if not stripped:
        return
    with contextlib.suppress(json.JSONDecodeError):
        value = json.loads(stripped)
        if isinstance(value, dict):
            yield Extraction(value, "json")
            return
    fenced = strip_code_fences(stripped)
    sources = [(fenced, "fenced"), (stripped, "prose")] if fenced is not stripped else [(stripped, "prose")]
    seen: set[str] = set()
    for source, how in sources:
        for candidate in iter_balanced_objects(source):
            if candidate in seen:
                continue
            seen.add(candidate)
            try:
                value = json.loads(candidate)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                yield Extraction(value, how)


def find_json(text: str) -> Extraction:
    """The first JSON object in ``text`` (see :func:`iter_json_objects`)."""
    return next(iter_json_objects(text), Extraction(None, "none"))


def looks_like_refusal(text: str) -> bool:
    """A reply with no JSON that opens like a refusal ("I'm sorry, I can't...")."""
    return bool(_REFUSAL.match(text or "")) and "{" not in (text or "")


def looks_truncated(text: str) -> bool:
    """An object was opened but never closed (the usual sign of a cut-off answer)."""
    text = text or ""
    return "{" in text and next(iter_balanced_objects(text), None) is None


# -- schema -------------------------------------------------------------------------------
def _as_key_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError("must be a list of sentence keys")
    return [str(v) for v in value if v is not None]


def text_or_empty(value: Any) -> str:
    """A judge's free text as a string (a null explanation is an empty one)."""
    return "" if value is None else str(value)


class SupportEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    response_sentence_key: str
    explanation: str = ""
    supporting_sentence_keys: list[str] = []
    fully_supported: bool | None  # required, but null happens (RAGBench's own GPT-4 labels have it)

    _keys = field_validator("supporting_sentence_keys", mode="before")(lambda cls, v: _as_key_list(v))
    _key = field_validator("response_sentence_key", mode="before")(lambda cls, v: str(v))
    _text = field_validator("explanation", mode="before")(lambda cls, v: text_or_empty(v))


class TraceOutput(BaseModel):
    """The judge's answer (RAGBench field names). ``overall_supported`` and
    ``all_utilized_sentence_keys`` may be missing: they are then derived from the
    sentence labels (and the result is marked repaired)."""

    model_config = ConfigDict(extra="ignore")

    relevance_explanation: str = ""
    all_relevant_sentence_keys: list[str]
    overall_supported_explanation: str = ""
    overall_supported: bool | None = None
    sentence_support_information: list[SupportEntry]
    all_utilized_sentence_keys: list[str] | None = None

    _keys = field_validator("all_relevant_sentence_keys", mode="before")(lambda cls, v: _as_key_list(v))
    _ukeys = field_validator("all_utilized_sentence_keys", mode="before")(
        lambda cls, v: None if v is None else _as_key_list(v)
    )
    _text = field_validator("relevance_explanation", "overall_supported_explanation", mode="before")(
        lambda cls, v: text_or_empty(v))


def validation_message(err: ValidationError) -> str:
    """A short, model-readable list of what is wrong ("field.path: problem")."""
    parts = []
    for e in err.errors()[:8]:
        loc = ".".join(str(p) for p in e["loc"]) or "(root)"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


# -- labels -------------------------------------------------------------------------------
@dataclass(slots=True)
class ParsedTrace:
    labels: Labels
    dropped: list[dict[str, str]] = field(default_factory=list)
    missing_response_keys: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)  # fields filled in by us
    how: str = "json"

    @property
    def repaired(self) -> bool:
        return bool(self.dropped or self.missing_response_keys or self.derived)


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """Why a reply could not be used: kind is "no_json", "truncated", "refusal" or "schema"."""

    kind: str
    message: str


def _filter(
    raw: list[str], known: set[str], field_name: str, dropped: list[dict[str, str]], allow_special: bool = False
) -> list[str]:
    out: list[str] = []
    for value in raw:
        key = normalize_key(value)
        if key in known or (allow_special and key in SPECIAL_SUPPORT_TOKENS):
            if key not in out:
                out.append(key)
        else:
            dropped.append({"field": field_name, "key": str(value), "reason": "special_token_not_allowed_here"
                            if key in SPECIAL_SUPPORT_TOKENS else "unknown_key"})
    return out


def labels_from_output(output: TraceOutput, item: EvalItem, how: str = "json") -> ParsedTrace:
    """Labels with every key checked against ``item``; dropped keys and missing
    response sentences recorded. Sentences the judge did not label are counted as
    not supported (grounding is never assumed)."""
    doc_keys = {normalize_key(k) for k in item.document_keys}
    resp_order = [normalize_key(k) for k in item.response_keys]
    dropped: list[dict[str, str]] = []
    derived: list[str] = []
    relevant = _filter(output.all_relevant_sentence_keys, doc_keys, "all_relevant_sentence_keys", dropped)
    entries: dict[str, SentenceSupport] = {}
    for entry in output.sentence_support_information:
        key = normalize_key(entry.response_sentence_key)
        if key not in resp_order:
            dropped.append({"field": "sentence_support_information", "key": entry.response_sentence_key,
                            "reason": "unknown_response_key"})
            continue
        if key in entries:
            dropped.append({"field": "sentence_support_information", "key": entry.response_sentence_key,
                            "reason": "duplicate_entry"})
            continue
        supporting = _filter(entry.supporting_sentence_keys, doc_keys,
                             f"sentence_support_information[{key}].supporting_sentence_keys", dropped, True)
        fully = entry.fully_supported
        if fully is None:
            # No verdict: supported only when it cites support and the judge did not
            # call the response unsupported overall (RAGBench reads these rows this way).
            fully = bool(supporting) and output.overall_supported is not False
            derived.append(f"sentence_support_information[{key}].fully_supported")
        entries[key] = SentenceSupport(key, supporting, fully, entry.explanation)
    missing = [k for k in resp_order if k not in entries]
    support = [entries[k] for k in resp_order if k in entries]
    unsupported = [s.response_sentence_key for s in support if not s.fully_supported] + missing
    unsupported = [k for k in resp_order if k in set(unsupported)]
    if output.all_utilized_sentence_keys is None:
        derived.append("all_utilized_sentence_keys")
        utilized = [k for s in support for k in s.supporting_sentence_keys if k in doc_keys]
        utilized = list(dict.fromkeys(utilized))
    else:
        utilized = _filter(output.all_utilized_sentence_keys, doc_keys, "all_utilized_sentence_keys", dropped)
    overall = output.overall_supported
    if overall is None:
        derived.append("overall_supported")
        overall = not unsupported
    labels = Labels(
        all_relevant_sentence_keys=relevant,
        all_utilized_sentence_keys=utilized,
        sentence_support_information=support,
        unsupported_response_sentence_keys=unsupported,
        overall_supported=overall,
        relevance_explanation=output.relevance_explanation,
        overall_supported_explanation=output.overall_supported_explanation,
    )
    return ParsedTrace(labels, dropped, missing, derived, how)


def parse_trace(text: str, item: EvalItem) -> ParsedTrace | ParseProblem:
    """Text -> validated labels, or the problem to report / re-ask about. When the
    text holds several objects (an echoed example, then the answer), the first one
    that fits the schema wins; otherwise the first object's problem is reported."""
    first_error: str | None = None
    for extraction in iter_json_objects(text):
        try:
            output = TraceOutput.model_validate(extraction.value)
        except ValidationError as err:
            first_error = first_error or f"wrong schema: {validation_message(err)}"
            continue
        return labels_from_output(output, item, extraction.how)
    if first_error is not None:
        return ParseProblem("schema", first_error)
    if looks_like_refusal(text):
        return ParseProblem("refusal", f"the model declined: {text.strip()[:200]}")
    if looks_truncated(strip_reasoning(text or "")):
        return ParseProblem("truncated", "the JSON object is not closed (the answer was cut off)")
    return ParseProblem("no_json", "no JSON object found in the answer")
