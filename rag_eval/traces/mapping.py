"""The one mapping from a trace's spans to an evaluation row (documented in docs/traces.md).

OpenInference (what Phoenix, the OpenInference instrumentations and LangChain / LlamaIndex
tracers write):

- **question**: the root span's ``input.value``. With ``input.mime_type`` =
  ``application/json`` the value is parsed and the question read at a key path
  (:attr:`MappingConfig.question_key`; by default the first of ``question``, ``query``,
  ``input``, ``text`` that holds text).
- **response**: the root span's ``output.value`` (JSON likewise, :attr:`MappingConfig.response_key`).
- **documents**: ``retrieval.documents.{i}.document.content`` of the RETRIEVER spans under the
  root, in start order, with ``document.id``, ``document.score`` and ``document.metadata``; when a
  RERANKER span is there, the last one's ``reranker.output_documents`` win.
- **fallback**: when the root lacks its input (output), the last LLM span's
  ``llm.input_messages`` (``llm.output_messages``) decide: the last ``user`` (``assistant``) message.

TruLens (``ai.observability.*``): the ``record_root`` span's ``record_root.input`` / ``.output``;
the ``retrieval`` spans' ``retrieval.retrieved_contexts`` (and ``retrieved_scores``).

Every trace ends with a status (:class:`TraceStatus`): ``ok`` or the first problem found, with
a reason naming the span and attribute. A trace that is not ``ok`` is still written as a row,
*without* its ``response``, so every judge path stores it as ``invalid_input`` (never a score of
0) while ``metadata.trace.status`` / ``reason`` say what was wrong. Bounds
(:class:`MappingConfig`) cut huge documents and long document lists; each cut is recorded in
``metadata.trace.cuts`` and does not change the status.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rag_eval.io.rows import json_problem
from rag_eval.traces.spans import Span, as_number, as_text, indexed, iso

JSON_MIME = "application/json"
DEFAULT_QUESTION_KEYS = ("question", "query", "input", "text", "content")
DEFAULT_RESPONSE_KEYS = ("answer", "response", "output", "text", "content", "result")

# OpenInference span kinds (``openinference.span.kind``) and TruLens span types.
RETRIEVER, RERANKER, LLM = "RETRIEVER", "RERANKER", "LLM"
TRULENS = "ai.observability."
TRULENS_TYPE = TRULENS + "span_type"


class TraceStatus(str, Enum):
    """What became of one trace. Anything but ``ok`` is kept as a row that no judge scores."""

    OK = "ok"
    CYCLIC_PARENTS = "cyclic_parents"  # a parent chain loops back on itself
    ORPHAN_PARENTS = "orphan_parents"  # spans name a parent the trace does not hold (root missing)
    TRUNCATED = "truncated"  # the tracer dropped attributes, or the root never ended
    UNPARSEABLE_VALUE = "unparseable_value"  # a JSON input/output that does not parse or lacks the key
    NO_QUESTION = "no_question"
    NO_ANSWER = "no_answer"
    NO_RETRIEVER = "no_retriever"  # no RETRIEVER (or TruLens retrieval) span
    NO_DOCUMENTS = "no_documents"  # retriever spans that returned no document text


# The order in which problems decide a trace's status (the first one found wins).
PRECEDENCE = tuple(TraceStatus)[1:]


@dataclass(frozen=True, slots=True)
class MappingConfig:
    """Where to read JSON values and how much of a trace a row may hold."""

    question_key: str | None = None  # dotted key path into a JSON input (e.g. "messages.-1.content")
    response_key: str | None = None
    max_documents_per_span: int = 100  # documents read from one retriever/reranker span
    max_documents: int = 100  # documents in one row
    max_document_chars: int = 20_000  # characters of one document
    max_text_chars: int = 100_000  # characters of the question and of the response

    def __post_init__(self) -> None:
        for name in ("max_documents_per_span", "max_documents", "max_document_chars", "max_text_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


@dataclass(slots=True)
class MappedTrace:
    """A trace as a row (always), its status and why."""

    row: dict[str, Any]
    status: TraceStatus
    reason: str | None = None
    complete: bool = True  # the root span is there and ended (an incremental import retries the others)


@dataclass(slots=True)
class _Problems:
    found: list[tuple[TraceStatus, str]] = field(default_factory=list)

    def add(self, status: TraceStatus, reason: str) -> None:
        self.found.append((status, reason))

    def first(self) -> tuple[TraceStatus, str | None]:
        for status in PRECEDENCE:
            for found, reason in self.found:
                if found is status:
                    return status, reason
        return TraceStatus.OK, None


class _Unparseable(ValueError):
    pass


def key_path(value: Any, path: str) -> Any:
    """``value`` at a dotted key path (list positions as numbers, ``-1`` for the last)."""
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(part)
    return value


def _json_text(raw: str, configured: str | None, defaults: Sequence[str], where: str) -> str | None:
    """The text at the key path of a JSON value; raises :class:`_Unparseable` naming ``where``."""
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as err:
        raise _Unparseable(f"{where} is declared {JSON_MIME}: {json_problem(err)}") from None
    if isinstance(parsed, str):
        return parsed
    paths = [configured] if configured else list(defaults)
    for path in paths:
        try:
            found = key_path(parsed, path)
        except KeyError:
            continue
        text = as_text(found)
        if text is not None:
            return text
    tried = configured or " / ".join(defaults)
    raise _Unparseable(f"{where} is JSON without text at key path {tried!r}")


def _value(span: Span, prefix: str, configured: str | None, defaults: Sequence[str]) -> str | None:
    raw = as_text(span.attributes.get(f"{prefix}.value"))
    if raw is None:
        return None
    mime = str(span.attributes.get(f"{prefix}.mime_type") or "").lower()
    if mime.startswith(JSON_MIME):
        return _json_text(raw, configured, defaults, f"{prefix}.value of span {span.span_id}")
    return raw


def _message_text(message: Mapping[str, Any]) -> str | None:
    text = as_text(message.get("message.content"))
    if text is not None:
        return text
    parts = [as_text(c.get("message_content.text")) for c in indexed(message, "message.contents")]
    joined = "\n".join(p for p in parts if p)
    return joined or None


def _last_message(span: Span, prefix: str, role: str) -> str | None:
    messages = indexed(span.attributes, prefix)
    for message in reversed(messages):
        if str(message.get("message.role") or "").lower() == role:
            return _message_text(message)
    return None


def _kind(span: Span) -> str:
    kind = str(span.attributes.get("openinference.span.kind") or span.kind or "").upper()
    trulens = str(span.attributes.get(TRULENS_TYPE) or "").lower()
    if trulens == "retrieval":
        return RETRIEVER
    if trulens == "reranking":
        return RERANKER
    if trulens == "generation":
        return LLM
    return kind


# -- structure ----------------------------------------------------------------------------------
def _structure(spans: list[Span], problems: _Problems) -> tuple[Span | None, list[Span]]:
    """The root span (None when there is none) and the spans under it (all spans when the
    structure is broken, so what can be read still is)."""
    by_id = {s.span_id: s for s in spans}
    looped: set[str] = set()
    for span in spans:
        seen: list[str] = []
        node: Span | None = span
        while node is not None and node.parent_id:
            if node.span_id in seen:
                looped.update(seen[seen.index(node.span_id):])
                break
            seen.append(node.span_id)
            node = by_id.get(node.parent_id)
    if looped:
        problems.add(TraceStatus.CYCLIC_PARENTS, f"parent ids loop through span(s) {', '.join(sorted(looped)[:5])}")
    orphans = [s for s in spans if s.parent_id and s.parent_id not in by_id]
    if orphans:
        missing = sorted({str(s.parent_id) for s in orphans})
        problems.add(TraceStatus.ORPHAN_PARENTS,
                     f"{len(orphans)} span(s) name parent(s) not in the trace ({', '.join(missing[:5])}): "
                     "the root or part of the chain was never received")
    roots = sorted((s for s in spans if not s.parent_id), key=_start_key)
    trulens_roots = [s for s in spans if str(s.attributes.get(TRULENS_TYPE) or "").lower() == "record_root"]
    root = trulens_roots[0] if trulens_roots else (roots[0] if roots else None)
    if root is None or looped or orphans:
        return root, sorted(spans, key=_start_key)
    children: dict[str, list[Span]] = {}
    for span in spans:
        if span.parent_id:
            children.setdefault(span.parent_id, []).append(span)
    under, stack = [], [root]
    while stack:
        node = stack.pop()
        under.append(node)
        stack.extend(children.get(node.span_id, []))
    if root.end is None:
        problems.add(TraceStatus.TRUNCATED, f"root span {root.span_id} has no end time (still running or cut off)")
    return root, sorted(under, key=_start_key)


def _start_key(span: Span) -> tuple[float, str]:
    return (span.start.timestamp() if span.start else float("inf"), span.span_id)


# -- documents ----------------------------------------------------------------------------------
def _clip(text: str, limit: int, what: str, cuts: list[dict[str, Any]]) -> str:
    if len(text) <= limit:
        return text
    cuts.append({"field": what, "kept": limit, "total": len(text), "unit": "chars"})
    return text[:limit]


def _bounded(entries: list[Any], what: str, config: MappingConfig, cuts: list[dict[str, Any]]) -> list[Any]:
    """At most ``max_documents_per_span`` of a span's documents, the cut recorded."""
    if len(entries) <= config.max_documents_per_span:
        return entries
    cuts.append({"field": what, "kept": config.max_documents_per_span, "total": len(entries), "unit": "documents"})
    return entries[: config.max_documents_per_span]


def _read_documents(span: Span, prefix: str, config: MappingConfig, cuts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries = _bounded(indexed(span.attributes, prefix), f"{prefix} of span {span.span_id}", config, cuts)
    docs = []
    for i, entry in enumerate(entries):
        text = as_text(entry.get("document.content"))
        if text is None:
            continue
        metadata = entry.get("document.metadata")
        if metadata is None:  # Phoenix parses it and its keys come flattened
            nested = {k[len("document.metadata."):]: v for k, v in entry.items() if k.startswith("document.metadata.")}
            metadata = nested or None
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except json.JSONDecodeError:
                pass
        docs.append({"text": _clip(text, config.max_document_chars, f"{prefix}.{i} of span {span.span_id}", cuts),
                     "id": as_text(entry.get("document.id")), "score": as_number(entry.get("document.score")),
                     "metadata": metadata, "span_id": span.span_id})
    return docs


def _array(attributes: Mapping[str, Any], key: str) -> Any:
    """An array attribute as given, or rebuilt from ``key.0``, ``key.1``... (Phoenix's REST
    API flattens lists of plain values too)."""
    if key in attributes:
        return attributes[key]
    found = {int(k[len(key) + 1:]): v for k, v in attributes.items()
             if k.startswith(key + ".") and k[len(key) + 1:].isdigit()}
    return [found[i] for i in sorted(found)] if found else None


def _nested(attributes: Mapping[str, Any], key: str) -> Any:
    """An object attribute given as JSON text, or as ``key.*`` keys (Phoenix parses and flattens it)."""
    value = attributes.get(key)
    if value is None:
        found = {k[len(key) + 1:]: v for k, v in attributes.items() if k.startswith(key + ".")}
        return found or None
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _as_list(value: Any) -> list[Any]:
    """An array attribute (a JSON-encoded list counts too: TruLens writes either)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value]
    return list(value) if isinstance(value, (list, tuple)) else ([] if value is None else [value])


def _trulens_documents(span: Span, config: MappingConfig, cuts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    texts = _as_list(_array(span.attributes, TRULENS + "retrieval.retrieved_contexts"))
    scores = _as_list(_array(span.attributes, TRULENS + "retrieval.retrieved_scores"))
    texts = _bounded(texts, f"retrieved_contexts of span {span.span_id}", config, cuts)
    docs = []
    for i, raw in enumerate(texts):
        text = as_text(raw)
        if text is not None:
            docs.append({"text": _clip(text, config.max_document_chars, f"retrieved_contexts.{i} of span {span.span_id}",
                                       cuts),
                         "id": None, "score": as_number(scores[i]) if i < len(scores) else None,
                         "metadata": None, "span_id": span.span_id})
    return docs


def _documents(spans: list[Span], config: MappingConfig, problems: _Problems,
               cuts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    retrievers = [s for s in spans if _kind(s) == RETRIEVER]
    rerankers = [s for s in spans if _kind(s) == RERANKER]
    span_ids = {"retriever": [s.span_id for s in retrievers], "reranker": [s.span_id for s in rerankers]}
    docs: list[dict[str, Any]] = []
    reranked = [d for s in rerankers[-1:] for d in _read_documents(s, "reranker.output_documents", config, cuts)]
    if reranked:
        docs = reranked
    else:
        for span in retrievers:
            if str(span.attributes.get(TRULENS_TYPE) or "").lower() == "retrieval":
                docs.extend(_trulens_documents(span, config, cuts))
            else:
                docs.extend(_read_documents(span, "retrieval.documents", config, cuts))
    if not retrievers and not rerankers:
        problems.add(TraceStatus.NO_RETRIEVER, "no RETRIEVER span in the trace (nothing to ground the answer on)")
    elif not docs:
        problems.add(TraceStatus.NO_DOCUMENTS,
                     f"retriever span(s) {', '.join((span_ids['retriever'] + span_ids['reranker'])[:5])} "
                     "returned no document text")
    if len(docs) > config.max_documents:
        cuts.append({"field": "documents", "kept": config.max_documents, "total": len(docs), "unit": "documents"})
        docs = docs[: config.max_documents]
    return docs, span_ids


# -- the row ------------------------------------------------------------------------------------
def _first_attr(spans: Sequence[Span], *names: str) -> Any:
    for span in spans:
        for name in names:
            value = span.attributes.get(name)
            if value not in (None, ""):
                return value
    return None


def _tokens(llm_spans: Sequence[Span]) -> dict[str, int]:
    totals = {"prompt": 0, "completion": 0, "total": 0}
    seen = False
    for span in llm_spans:
        for key in totals:
            number = as_number(span.attributes.get(f"llm.token_count.{key}"))
            if number is not None:
                totals[key] += int(number)
                seen = True
    if seen and not totals["total"]:
        totals["total"] = totals["prompt"] + totals["completion"]
    return totals if seen else {}


def _root_text(root: Span | None, llm: Span | None, problems: _Problems, config: MappingConfig,
               which: str) -> tuple[str | None, str | None]:
    """(text, where it came from) for the question (``which`` = "input") or response ("output")."""
    configured = config.question_key if which == "input" else config.response_key
    defaults = DEFAULT_QUESTION_KEYS if which == "input" else DEFAULT_RESPONSE_KEYS
    if root is not None:
        trulens = as_text(root.attributes.get(f"{TRULENS}record_root.{which}"))
        if trulens is not None:
            return trulens, f"{TRULENS}record_root.{which}"
        try:
            text = _value(root, which, configured, defaults)
        except _Unparseable as err:
            problems.add(TraceStatus.UNPARSEABLE_VALUE, str(err))
            return None, None
        if text is not None:
            return text, f"{which}.value"
    if llm is not None:
        prefix, role = ("llm.input_messages", "user") if which == "input" else ("llm.output_messages", "assistant")
        text = _last_message(llm, prefix, role)
        if text is not None:
            return text, f"{prefix} ({role}) of span {llm.span_id}"
    return None, None


def map_trace(spans: Sequence[Span], config: MappingConfig | None = None, *, source: str = "otlp",
              project: str | None = None) -> MappedTrace:
    """The row of one trace (all its spans, any order). Never raises on what the spans hold:
    every problem becomes the trace's status and reason."""
    config = config or MappingConfig()
    unique = list({s.span_id: s for s in spans}.values())  # a span delivered twice counts once
    trace_id = unique[0].trace_id if unique else ""
    problems = _Problems()
    cuts: list[dict[str, Any]] = []
    root, under = _structure(unique, problems)
    dropped = [s for s in under if s.dropped_attributes]
    if dropped:
        problems.add(TraceStatus.TRUNCATED,
                     f"the tracer dropped {sum(s.dropped_attributes for s in dropped)} attribute(s) of span(s) "
                     f"{', '.join(s.span_id for s in dropped[:5])} (its attribute limit)")
    llm_spans = [s for s in under if _kind(s) == LLM]
    last_llm = llm_spans[-1] if llm_spans else None
    question, question_from = _root_text(root, last_llm, problems, config, "input")
    response, response_from = _root_text(root, last_llm, problems, config, "output")
    if question is None and not any(p is TraceStatus.UNPARSEABLE_VALUE for p, _ in problems.found):
        problems.add(TraceStatus.NO_QUESTION, "neither the root span's input.value nor an LLM span's user message")
    if response is None:
        error = f" (the root span ended with status {root.status_code})" if root and root.status_code == "ERROR" else ""
        if not any(p is TraceStatus.UNPARSEABLE_VALUE and "output" in r for p, r in problems.found):
            problems.add(TraceStatus.NO_ANSWER, f"neither the root span's output.value nor an LLM span's assistant "
                                                f"message{error}")
    docs, span_ids = _documents(under, config, problems, cuts)
    if question is not None:
        question = _clip(question, config.max_text_chars, "question", cuts)
    if response is not None:
        response = _clip(response, config.max_text_chars, "response", cuts)
    status, reason = problems.first()
    ordered = [root] if root is not None else []
    ordered += [s for s in under if s is not root]
    latency = (root.end - root.start).total_seconds() if root and root.start and root.end else None
    model = _first_attr(list(reversed(llm_spans)), "llm.model_name", TRULENS + "cost.model")
    trace_meta: dict[str, Any] = {
        "trace_id": trace_id,
        "span_id": root.span_id if root else None,
        "source": source,
        "project": project,
        "status": status.value,
        "reason": reason,
        "problems": [{"status": p.value, "reason": r} for p, r in problems.found],
        "span_ids": {**span_ids, "llm": [s.span_id for s in llm_spans]},
        "model_name": as_text(model),
        "tokens": _tokens(llm_spans),
        "latency_s": latency,
        "start_time": iso(root.start if root else min((s.start for s in unique if s.start), default=None)),
        "end_time": iso(root.end) if root else None,
        "session_id": as_text(_first_attr(ordered, "session.id")),
        "user_id": as_text(_first_attr(ordered, "user.id")),
        "question_from": question_from,
        "response_from": response_from,
        "documents": [{k: d[k] for k in ("id", "score", "metadata", "span_id")} for d in docs],
        "cuts": cuts,
    }
    tags = next((v for v in (_array(sp.attributes, "tag.tags") for sp in ordered) if v), None)
    app_metadata = next((v for v in (_nested(sp.attributes, "metadata") for sp in ordered) if v), None)
    for name, value in (("tags", tags), ("app_metadata", app_metadata),
                        ("app_name", _first_attr(ordered, TRULENS + "app_name")),
                        ("app_version", _first_attr(ordered, TRULENS + "app_version"))):
        if value is not None:
            trace_meta[name] = value
    row: dict[str, Any] = {"id": trace_id, "question": question or ""}
    if status is TraceStatus.OK:
        row["response"] = response
    row["documents"] = [d["text"] for d in docs]
    row["metadata"] = {"question_source": f"trace:{source}", "trace": trace_meta}
    # a trace still arriving (root missing or not ended) may be complete next time
    arriving = root is None or root.end is None or any(p is TraceStatus.ORPHAN_PARENTS for p, _ in problems.found)
    return MappedTrace(row, status, reason, complete=not arriving)
