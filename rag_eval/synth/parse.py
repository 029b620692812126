"""Parsing a reply into a :class:`Candidate` with a status, the rule checks that drop
a candidate with a reason, and a checked candidate as a dataset row."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from rag_eval.datasets.schema import CANNOT_ANSWER, DatasetRow, Provenance, QueryType
from rag_eval.judges.parsing import find_json
from rag_eval.schema import JudgeStatus
from rag_eval.synth.plan import SynthOptions, Task
from rag_eval.synth.prompts import PROMPT_ID

RAW_KEEP_CHARS = 600  # how much of a bad reply a dropped row keeps, for diagnosis


@dataclass(slots=True)
class Candidate:
    """A parsed reply for a task (fields empty when the reply could not be parsed)."""

    task: Task
    status: JudgeStatus
    question: str = ""
    answer: str = ""
    support: list[str] = field(default_factory=list)  # chunk labels as written by the model
    negative: str | None = None
    difficulty: str | None = None
    error: str | None = None
    raw: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    cached: bool = False


@dataclass(slots=True)
class DroppedRow:
    """A task that did not become a row, and why. ``stage`` is one of ``generation``
    (the call or the reply failed), ``check`` (the reply broke a rule), ``near_duplicate``
    or ``answerability``."""

    task: int
    query_type: str
    stage: str
    reason: str
    status: str
    question: str = ""
    chunk_ids: list[str] = field(default_factory=list)
    raw: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def parse_reply(task: Task, text: str | None, finish_reason: str | None = None) -> Candidate:
    """A reply text as a :class:`Candidate` with a status. A reply cut off by the token
    limit is ``truncated`` even when its prefix happens to parse."""
    raw = (text or "")[:RAW_KEEP_CHARS]
    if finish_reason == "length":
        return Candidate(task, JudgeStatus.TRUNCATED, error="the reply hit the token limit", raw=raw)
    if finish_reason == "content_filter":
        return Candidate(task, JudgeStatus.REFUSED, error="the provider's content filter stopped the reply", raw=raw)
    found = find_json(text or "")  # the reply as a JSON object, or the first one in it (code fences, prose): repaired
    obj, repaired = found.value, found.how != "json"
    if obj is None:
        return Candidate(task, JudgeStatus.PARSE_ERROR, error="the reply is not a JSON object", raw=raw)
    support = obj.get("supporting_chunks", obj.get("supporting_chunk_ids", []))
    if isinstance(support, str):
        support = [support]
    negative = _text(obj.get("negative_answer")) or None
    return Candidate(
        task, JudgeStatus.REPAIRED if repaired else JudgeStatus.OK,
        question=_text(obj.get("question")), answer=_text(obj.get("answer")),
        support=[str(s).strip().strip("[]").upper() for s in support if isinstance(s, (str, int))] if isinstance(support, list) else [],
        negative=negative, difficulty=_text(obj.get("difficulty")).lower() or None, raw=raw,
    )


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .!?")


def check_candidate(c: Candidate) -> str | None:
    """The reason to drop a parsed candidate, or ``None`` when it is fine."""
    if not c.status.usable:
        return c.error or c.status.value
    if not c.question:
        return "the reply has no question"
    qtype = c.task.query_type
    if qtype is QueryType.UNANSWERABLE:
        return None  # the answer is set to CANNOT_ANSWER; cited chunks are ignored
    if not c.answer:
        return "the reply has no answer"
    labels = c.task.labels
    unknown = [s for s in c.support if s not in labels]
    if unknown:
        return f"the reply cites chunk ids that were not given: {', '.join(unknown)} (given: {', '.join(labels)})"
    cited = set(c.support)
    if not cited:
        return "the reply cites no supporting chunk"
    if qtype in (QueryType.MULTI_HOP, QueryType.COMPARISON) and len(cited) < 2:
        return f"a {qtype.value} question must cite both chunks; the reply cites {', '.join(sorted(cited))}"
    if qtype is QueryType.DISTRACTING and "C2" in cited:
        return "a distracting question must not be answered by the near-miss chunk C2"
    if c.negative and _norm(c.negative) == _norm(c.answer):
        return "the negative answer equals the reference answer"
    return None


def question_id(question: str, chunk_ids: Iterable[str]) -> str:
    digest = hashlib.sha1((question + "\x00" + "\x00".join(chunk_ids)).encode("utf-8")).hexdigest()
    return f"syn-{digest[:12]}"


def candidate_row(c: Candidate, options: SynthOptions) -> DatasetRow:
    """A checked candidate as a dataset row (``provenance: synthetic``)."""
    task = c.task
    labels = task.labels
    unanswerable = task.query_type is QueryType.UNANSWERABLE
    gold = [] if unanswerable else [labels[s] for s in dict.fromkeys(c.support)]
    extra: dict[str, Any] = {"prompt_id": PROMPT_ID, "shown_chunk_ids": [ch.id for ch in task.chunks]}
    if options.collection:
        extra["collection"] = options.collection
    if task.distractor is not None:
        extra["distractor_chunk_ids"] = [task.distractor.id]
    if unanswerable:
        extra["topic_chunk_ids"] = [task.chunks[0].id]
    return DatasetRow.model_validate({
        "id": question_id(c.question, [ch.id for ch in task.chunks]),
        "question": c.question,
        "reference_answers": [CANNOT_ANSWER if unanswerable else c.answer],
        "negative_answers": [c.negative] if c.negative and options.negatives else [],
        "gold_contexts": [ch.text for ch in gold],
        "gold_pointers": [{"source": ch.source or ch.doc_id, "start": ch.start, "end": ch.end,
                           "doc_id": ch.doc_id, "chunk_id": ch.id} for ch in gold],
        "gold_doc_ids": list(dict.fromkeys(ch.doc_id for ch in gold)),
        "metadata": {"query_type": task.query_type.value, "difficulty": c.difficulty,
                     "question_source": f"synth:{options.model}" if options.model else "synth"},
        "provenance": Provenance.SYNTHETIC.value,
        **extra,
    })


def dropped(c: Candidate, stage: str, reason: str) -> DroppedRow:
    return DroppedRow(
        task=c.task.index, query_type=c.task.query_type.value, stage=stage, reason=reason,
        status=c.status.value, question=c.question, chunk_ids=[ch.id for ch in c.task.chunks], raw=c.raw,
    )
