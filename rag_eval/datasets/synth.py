"""Synthetic question generation from a chunk collection, with filters and reasons.

The flow, each step a small function over plain data:

1. **sample** chunks stratified over documents (every document gets its turn before
   any document gets a second chunk, so a long manual does not crowd out short notes);
2. **plan** one task per question, cycling over the requested question types; tasks
   that need a second chunk take a *related* one (nearest by embedding, from another
   document when there is one): a partner for ``multi_hop`` / ``comparison``, the
   near-miss for ``distracting``;
3. **prompt** an LLM (any OpenAI-compatible endpoint, through the project's client
   with its cache, limiter and retries) with passages labelled ``C1``, ``C2``, optional
   few-shot examples from a golden set, and the reply schema;
4. **parse** each reply to a status (``ok``, ``repaired``, ``parse_error``,
   ``truncated``, ``refused``, ``provider_error``, ``timeout``, ``cancelled``), then
   **check** it: a cited chunk label that was not given, a multi-hop question citing one
   chunk, or a distracting question citing the near-miss drops the row with that reason;
5. **filter** near-duplicate questions (cosine of MiniLM embeddings, also against the
   few-shot examples so they are not copied) and questions their reference chunks do not
   answer (a judge checks that the reference answer is supported by the chunks).

Nothing is lost: every task ends either as a kept row (``provenance: synthetic``,
until a reviewer marks it reviewed) or as a :class:`DroppedRow` with stage and reason.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from rag_eval.datasets.schema import CANNOT_ANSWER, DatasetRow, Provenance, QueryType, mark_reviewed
from rag_eval.judges.base import Judge
from rag_eval.schema import JudgeStatus

__all__ = [
    "Chunk", "Task", "SynthOptions", "SynthResult", "DroppedRow", "Candidate",
    "stratified_sample", "plan_tasks", "build_messages", "parse_reply", "check_candidate",
    "drop_near_duplicates", "answerability_filter", "synthesize", "mark_reviewed", "PROMPT_ID",
]

PROMPT_ID = "synth-v1"
ALL_TYPES: tuple[QueryType, ...] = tuple(QueryType)
TWO_CHUNK_TYPES = (QueryType.MULTI_HOP, QueryType.COMPARISON, QueryType.DISTRACTING)
RAW_KEEP_CHARS = 600  # how much of a bad reply a dropped row keeps, for diagnosis


# ---------------------------------------------------------------- data
@dataclass(frozen=True, slots=True)
class Chunk:
    """A stored chunk (the payload of :func:`rag_eval.rag.store.iter_chunks`)."""

    id: str
    doc_id: str
    text: str
    source: str | None = None
    title: str = ""
    chunk_index: int | None = None
    start: int | None = None
    end: int | None = None

    @classmethod
    def from_payload(cls, d: dict[str, Any]) -> "Chunk":
        return cls(
            id=str(d["id"]), doc_id=str(d.get("doc_id") or d["id"]), text=str(d.get("text") or ""),
            source=d.get("source"), title=str(d.get("title") or ""), chunk_index=d.get("chunk_index"),
            start=d.get("start"), end=d.get("end"),
        )


@dataclass(frozen=True, slots=True)
class Task:
    """One question to write: its type and the chunks shown, labelled C1, C2 in order.
    For ``distracting`` the last chunk is the near-miss that must not be cited."""

    index: int
    query_type: QueryType
    chunks: tuple[Chunk, ...]

    @property
    def labels(self) -> dict[str, Chunk]:
        return {f"C{i}": c for i, c in enumerate(self.chunks, start=1)}

    @property
    def distractor(self) -> Chunk | None:
        return self.chunks[-1] if self.query_type is QueryType.DISTRACTING and len(self.chunks) > 1 else None


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


@dataclass(slots=True)
class SynthOptions:
    """What to generate and how to filter. ``dedupe_threshold`` is the cosine at or
    above which a question counts as a near-duplicate of an earlier one."""

    n: int
    types: tuple[QueryType, ...] = ALL_TYPES
    seed: int = 0
    negatives: bool = False
    few_shot: tuple[DatasetRow, ...] = ()
    few_shot_k: int = 3
    dedupe_threshold: float = 0.9
    max_chunk_chars: int = 2000
    collection: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError(f"n must be > 0, got {self.n}")
        if not self.types:
            raise ValueError("at least one question type is needed")
        self.types = tuple(QueryType(t) for t in self.types)
        if not 0 < self.dedupe_threshold <= 1:
            raise ValueError(f"dedupe_threshold must be in (0, 1], got {self.dedupe_threshold}")


@dataclass(slots=True)
class SynthResult:
    rows: list[DatasetRow] = field(default_factory=list)
    dropped: list[DroppedRow] = field(default_factory=list)
    requested: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    cached: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "requested": self.requested, "kept": len(self.rows), "dropped": len(self.dropped),
            "dropped_by_stage": dict(Counter(d.stage for d in self.dropped)),
            "kept_by_type": dict(Counter(r.metadata.query_type for r in self.rows)),
            "tokens": self.tokens, "cost_usd": self.cost_usd, "cached_replies": self.cached,
        }


# ---------------------------------------------------------------- sampling and planning
def stratified_sample(chunks: Sequence[Chunk], k: int, rng: random.Random) -> list[Chunk]:
    """``k`` chunks spread over documents: documents in random order, round after round,
    each giving one random unused chunk per round. Fewer than ``k`` when the collection
    has fewer chunks; raises ``ValueError`` when it has none."""
    if not chunks:
        raise ValueError("the collection has no chunks to sample from")
    by_doc: dict[str, list[Chunk]] = defaultdict(list)
    for c in chunks:
        if c.text.strip():
            by_doc[c.doc_id].append(c)
    if not by_doc:
        raise ValueError("every chunk of the collection is empty")
    queues = []
    for doc_id in sorted(by_doc):
        items = sorted(by_doc[doc_id], key=lambda c: c.id)
        rng.shuffle(items)
        queues.append(items)
    rng.shuffle(queues)
    out: list[Chunk] = []
    while len(out) < k and any(queues):
        for queue in queues:
            if queue and len(out) < k:
                out.append(queue.pop())
    return out


NeighbourFn = Callable[[Chunk, int], list[Chunk]]


def embedding_neighbours(pool: Sequence[Chunk], encode: Callable[[list[str]], np.ndarray]) -> NeighbourFn:
    """``neighbours(chunk, k)``: the ``k`` most similar pool chunks (cosine), chunks of
    other documents first, never the chunk itself."""
    pool = list(pool)
    vectors = encode([c.text for c in pool]) if pool else np.zeros((0, 1), dtype=np.float32)
    index = {c.id: i for i, c in enumerate(pool)}

    def neighbours(chunk: Chunk, k: int) -> list[Chunk]:
        if chunk.id in index:
            query = vectors[index[chunk.id]]
        else:
            query = encode([chunk.text])[0]
        order = np.argsort(-(vectors @ query), kind="stable")
        others = [pool[i] for i in order if pool[i].id != chunk.id]
        ranked = [c for c in others if c.doc_id != chunk.doc_id] + [c for c in others if c.doc_id == chunk.doc_id]
        return ranked[:k]

    return neighbours


def plan_tasks(
    chunks: Sequence[Chunk], options: SynthOptions, neighbours: NeighbourFn | None, rng: random.Random
) -> list[Task]:
    """One task per requested question: types cycle in the given order, primary chunks
    come from :func:`stratified_sample` (cycled when the collection is smaller than
    ``n``). Two-chunk types take a partner from ``neighbours``: one of the 3 nearest for
    ``multi_hop``/``comparison``, the nearest (the near-miss) for ``distracting``. With no
    partner available (a one-chunk collection) the task becomes ``simple``."""
    primaries = stratified_sample(chunks, options.n, rng)
    tasks = []
    for i in range(options.n):
        qtype = options.types[i % len(options.types)]
        primary = primaries[i % len(primaries)]
        chosen: tuple[Chunk, ...] = (primary,)
        if qtype in TWO_CHUNK_TYPES:
            near = neighbours(primary, 3) if neighbours else []
            if not near:
                qtype = QueryType.SIMPLE
            else:
                partner = near[0] if qtype is QueryType.DISTRACTING else rng.choice(near)
                chosen = (primary, partner)
        tasks.append(Task(i, qtype, chosen))
    return tasks


# ---------------------------------------------------------------- prompts
SYSTEM_PROMPT = (
    "You write questions for evaluating a retrieval-augmented question answering system. "
    "Use only the passages you are given, never outside knowledge. "
    "Reply with one JSON object and nothing else."
)

TYPE_INSTRUCTIONS = {
    QueryType.SIMPLE: (
        "Write one factual question that passage C1 answers with a fact it states. "
        "The answer must be short and fully supported by C1."
    ),
    QueryType.MULTI_HOP: (
        "Write one question whose answer needs facts from both C1 and C2 (for example, a fact in one "
        "passage identifies what the other passage tells about). Neither passage alone may be enough. "
        "Cite both passages."
    ),
    QueryType.COMPARISON: (
        "Write one question that compares something described in C1 with something described in C2 "
        "(which is larger, earlier, different, shared...). The answer must follow from the two passages. "
        "Cite both passages."
    ),
    QueryType.DISTRACTING: (
        "C1 answers the question; C2 is on a similar topic but does not contain the answer. Write one "
        "question answered by C1 alone, phrased so that C2 also looks relevant. Cite only C1."
    ),
    QueryType.UNANSWERABLE: (
        "Write one question on the topic of C1 that a user could plausibly ask but that the passage does "
        f"not answer (the information is absent from it). The answer must be exactly \"{CANNOT_ANSWER}\" "
        "and supporting_chunks must be empty."
    ),
}


def _reply_schema(negatives: bool, qtype: QueryType) -> str:
    fields = {
        "question": "the question, as a user would type it",
        "answer": CANNOT_ANSWER if qtype is QueryType.UNANSWERABLE else "the reference answer, from the passages only",
        "supporting_chunks": "[] " if qtype is QueryType.UNANSWERABLE else "[labels of the passages that support the answer, e.g. \"C1\"]",
        "difficulty": "easy | medium | hard",
    }
    if negatives:
        fields["negative_answer"] = (
            "a plausible but wrong answer that the passages do not support (same form and length as a real answer)"
        )
    return "{" + ", ".join(f'"{k}": <{v}>' for k, v in fields.items()) + "}"


def few_shot_examples(rows: Sequence[DatasetRow], k: int, rng: random.Random) -> list[DatasetRow]:
    """Up to ``k`` golden rows as style examples, preferring rows with a reference answer."""
    pool = sorted(rows, key=lambda r: (not r.reference_answers, r.id))
    with_answer = [r for r in pool if r.reference_answers] or pool
    return rng.sample(with_answer, min(k, len(with_answer)))


def build_messages(
    task: Task, negatives: bool = False, examples: Sequence[DatasetRow] = (), max_chunk_chars: int = 2000
) -> list[dict[str, str]]:
    """The chat messages for one task (system + user)."""
    parts = [TYPE_INSTRUCTIONS[task.query_type]]
    if examples:
        lines = ["Match the style and length of these questions from real users:"]
        for ex in examples:
            lines.append(f"- Q: {ex.question}")
            if ex.reference_answer and task.query_type is not QueryType.UNANSWERABLE:
                lines.append(f"  A: {ex.reference_answer[:300]}")
        parts.append("\n".join(lines))
    passages = []
    for label, chunk in task.labels.items():
        title = f" ({chunk.title})" if chunk.title else ""
        passages.append(f"[{label}]{title}\n{chunk.text[:max_chunk_chars]}")
    parts.append("Passages:\n\n" + "\n\n".join(passages))
    parts.append("Reply with JSON: " + _reply_schema(negatives, task.query_type))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


# ---------------------------------------------------------------- parsing and checks
def _extract_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """(object, repaired): the reply as a JSON object, or the first balanced object in
    it (code fences, prose around it) with ``repaired=True``."""
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value, False
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        from rag_eval.judges.parsing import extract_json_object  # the judge's tolerant extractor
    except ImportError:  # pragma: no cover - the judge package is part of the project
        extract_json_object = _first_balanced_object
    value = extract_json_object(text)
    if isinstance(value, tuple):  # tolerate an extractor that returns (object, info)
        value = value[0]
    return (value, True) if isinstance(value, dict) else (None, False)


def _first_balanced_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


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
    obj, repaired = _extract_object(text or "")
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


def row_id(question: str, chunk_ids: Iterable[str]) -> str:
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
        "id": row_id(c.question, [ch.id for ch in task.chunks]),
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


# ---------------------------------------------------------------- filters
def drop_near_duplicates(
    rows: Sequence[DatasetRow], encode: Callable[[list[str]], np.ndarray], threshold: float,
    reference_questions: Sequence[str] = (),
) -> tuple[list[DatasetRow], list[tuple[DatasetRow, str]]]:
    """Greedy, in order: a row whose question has cosine >= ``threshold`` with an earlier
    kept question (or with a reference question, e.g. a few-shot example) is dropped."""
    if not rows:
        return [], []
    vectors = encode([r.question for r in rows])
    ref_vectors = encode(list(reference_questions)) if reference_questions else np.zeros((0, vectors.shape[1]), np.float32)
    kept: list[int] = []
    out_dropped: list[tuple[DatasetRow, str]] = []
    for i, row in enumerate(rows):
        reason = None
        if len(ref_vectors):
            sims = ref_vectors @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                reason = f"near-duplicate of a few-shot example (cosine {sims[j]:.3f}): {reference_questions[j]!r}"
        if reason is None and kept:
            sims = vectors[kept] @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                reason = f"near-duplicate of {rows[kept[j]].id} (cosine {sims[j]:.3f})"
        if reason:
            out_dropped.append((row, reason))
        else:
            kept.append(i)
    return [rows[i] for i in kept], out_dropped


def _supported(labels: Any) -> bool:
    """The judge's verdict that the response is grounded: ``overall_supported``, else
    ``adherence_probability >= 0.5``; plus at least one relevant chunk sentence."""
    supported = labels.overall_supported
    if supported is None and labels.adherence_probability is not None:
        supported = labels.adherence_probability >= 0.5
    return bool(supported) and bool(labels.all_relevant_sentence_keys)


def answerability_filter(
    rows: Sequence[DatasetRow], judge: Judge, cancel: threading.Event | None = None,
    topic_texts: dict[str, list[str]] | None = None,
) -> tuple[list[DatasetRow], list[tuple[DatasetRow, str]]]:
    """Keep rows whose reference chunks answer the question: the judge labels the
    reference answer against the gold chunks, and the row stays when the judge finds
    the answer supported (``overall_supported``, else ``adherence_probability >= 0.5``)
    and at least one chunk sentence relevant.

    ``unanswerable`` rows are checked the other way round when they have a negative
    (tempting) answer and their topic chunk texts are given in ``topic_texts``: if the
    judge finds the topic chunk supports that answer, the question is answerable after
    all and the row is dropped. Without a negative answer there is nothing to check:
    the row passes, marked ``answerability: not applicable``. A judge failure drops the
    row with the judge's status: an unchecked row is never passed off as checked."""
    from rag_eval.text.sentences import item_from_texts

    topic_texts = topic_texts or {}
    checks: list[tuple[DatasetRow, bool]] = []  # (row, inverted)
    items = []
    for r in rows:
        if r.metadata.query_type != QueryType.UNANSWERABLE.value:
            checks.append((r, False))
            items.append(item_from_texts(r.id, r.question, r.gold_contexts, r.reference_answers[0]))
        elif r.negative_answers and topic_texts.get(r.id):
            checks.append((r, True))
            items.append(item_from_texts(r.id, r.question, topic_texts[r.id], r.negative_answers[0]))
    results = judge.judge(items, cancel=cancel) if items else []
    verdicts: dict[str, str | None] = {}
    for (row, inverted), result in zip(checks, results):
        if not result.status.usable or result.labels is None:
            verdicts[row.id] = f"answerability not checked: judge status {result.status.value}" + (
                f" ({result.error})" if result.error else "")
        elif inverted:
            verdicts[row.id] = (
                f"the topic chunk supports the tempting answer {row.negative_answers[0]!r}: the question is "
                f"answerable (judge {judge.name})" if _supported(result.labels) else None)
        elif not _supported(result.labels):
            verdicts[row.id] = f"the reference chunks do not support the answer (judge {judge.name})"
        else:
            verdicts[row.id] = None
    kept, out = [], []
    for row in rows:
        if row.id not in verdicts:
            row.metadata.answerability = "not applicable"  # type: ignore[attr-defined]
            kept.append(row)
        elif verdicts[row.id] is None:
            row.metadata.answerability = f"checked by {judge.name}"  # type: ignore[attr-defined]
            kept.append(row)
        else:
            out.append((row, verdicts[row.id]))
    return kept, out


# ---------------------------------------------------------------- orchestration
Completer = Callable[[list[list[dict[str, str]]]], list[Any]]


def candidate_from_completion(task: Task, result: Any) -> Candidate:
    """A completion (``text``, ``finish_reason``, ``usage``...) or an LLM error as a candidate."""
    if isinstance(result, BaseException):
        return Candidate(task, error_status(result), error=f"{type(result).__name__}: {result}")
    if getattr(result, "refusal", None):
        return Candidate(task, JudgeStatus.REFUSED, error=f"the model refused: {result.refusal}"[:300])
    c = parse_reply(task, getattr(result, "text", None), getattr(result, "finish_reason", None))
    usage = getattr(result, "usage", None) or {}
    c.tokens = {k: int(v) for k, v in dict(usage).items() if isinstance(v, (int, float))}
    c.cost_usd = getattr(result, "cost_usd", None)
    c.cached = bool(getattr(result, "cached", False))
    return c


def error_status(err: BaseException) -> JudgeStatus:
    from rag_eval.llm import errors

    if isinstance(err, errors.TimeoutError):
        return JudgeStatus.TIMEOUT
    if isinstance(err, errors.CancelledRequest):
        return JudgeStatus.CANCELLED
    return JudgeStatus.PROVIDER_ERROR


def synthesize(
    chunks: Sequence[Chunk],
    options: SynthOptions,
    complete: Completer,
    neighbours: NeighbourFn | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    judge: Judge | None = None,
    cancel: threading.Event | None = None,
) -> SynthResult:
    """Generate ``options.n`` questions from ``chunks``. ``complete`` sends a list of chat
    message lists and returns, in order, a completion or an error per list;
    ``neighbours`` finds related chunks for two-chunk types (``None``: those become
    ``simple``); ``encode`` embeds texts (normalised) for the near-duplicate filter
    (``None``: no such filter); ``judge`` checks answerability (``None``: skipped)."""
    rng = random.Random(options.seed)
    tasks = plan_tasks(chunks, options, neighbours, rng)
    examples = few_shot_examples(options.few_shot, options.few_shot_k, rng) if options.few_shot else []
    messages = [build_messages(t, options.negatives, examples, options.max_chunk_chars) for t in tasks]
    completions = complete(messages)
    if len(completions) != len(tasks):
        raise RuntimeError(f"the completer returned {len(completions)} results for {len(tasks)} requests")

    result = SynthResult(requested=options.n)
    tokens: Counter[str] = Counter()
    costs = []
    candidates: list[tuple[Candidate, DatasetRow]] = []
    for task, completion in zip(tasks, completions):
        c = candidate_from_completion(task, completion)
        tokens.update(c.tokens)
        if c.cost_usd is not None:
            costs.append(c.cost_usd)
        result.cached += c.cached
        reason = check_candidate(c)
        if reason:
            stage = "generation" if not c.status.usable else "check"
            result.dropped.append(dropped(c, stage, reason))
            continue
        row = candidate_row(c, options)
        if any(row.id == other.id for _, other in candidates):
            result.dropped.append(dropped(c, "near_duplicate", f"exact duplicate of {row.id}"))
            continue
        candidates.append((c, row))
    by_id = {row.id: c for c, row in candidates}
    rows = [row for _, row in candidates]

    if encode is not None:
        refs = [r.question for r in examples]
        rows, dups = drop_near_duplicates(rows, encode, options.dedupe_threshold, refs)
        result.dropped += [dropped(by_id[r.id], "near_duplicate", why) for r, why in dups]
    if judge is not None:
        topics = {r.id: [ch.text for ch in by_id[r.id].task.chunks] for r in rows
                  if r.metadata.query_type == QueryType.UNANSWERABLE.value}
        rows, unanswerable = answerability_filter(rows, judge, cancel, topics)
        result.dropped += [dropped(by_id[r.id], "answerability", why) for r, why in unanswerable]
    result.rows = rows
    result.dropped.sort(key=lambda d: d.task)
    result.tokens = dict(tokens)
    result.cost_usd = sum(costs) if costs else None
    return result


# ---------------------------------------------------------------- adapters
def qdrant_neighbours(client: Any, collection: str) -> NeighbourFn:
    """Neighbours from the collection's own dense vectors (Qdrant query by point id):
    no re-embedding, and the whole collection is searched. Chunks of other documents
    come first; the chunk's own document is the fallback."""
    from qdrant_client import models

    from rag_eval.rag.store import DENSE, chunk_payload

    def search(chunk: Chunk, k: int, query_filter: Any) -> list[Chunk]:
        found = client.query_points(collection, query=chunk.id, using=DENSE, limit=k, with_payload=True,
                                    query_filter=query_filter).points
        return [Chunk.from_payload(chunk_payload(str(p.id), p.payload or {})) for p in found]

    def neighbours(chunk: Chunk, k: int) -> list[Chunk]:
        doc = models.FieldCondition(key="doc_id", match=models.MatchValue(value=chunk.doc_id))
        out = search(chunk, k, models.Filter(must_not=[doc]))
        if len(out) < k:
            out += search(chunk, k - len(out), models.Filter(must=[doc]))
        return [c for c in out if c.text.strip()]

    return neighbours


def llm_completer(client: Any, progress: Callable[[int, int], None] | None = None,
                  cancel: threading.Event | None = None) -> Completer:
    """A :data:`Completer` over :class:`rag_eval.llm.client.LLMClient` (JSON mode, its
    cache under this prompt's id, its limiter, retries and error types)."""

    def complete(batch: list[list[dict[str, str]]]) -> list[Any]:
        return client.complete_many(batch, json_mode=True, cache_namespace=PROMPT_ID, progress=progress, cancel=cancel)

    return complete


def synthesize_from_collection(
    collection: str,
    options: SynthOptions,
    llm_config: Any,
    judge: Judge | None = None,
    qdrant: Any = None,
    dedupe: bool = True,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> SynthResult:
    """:func:`synthesize` over a Qdrant collection with the project's LLM client
    (``llm_config``: an :class:`~rag_eval.llm.config.LLMConfig`) and the packaged MiniLM
    for the near-duplicate filter. ``qdrant`` defaults to :func:`rag_eval.rag.store.open_qdrant`."""
    from rag_eval.embeddings import Embedder
    from rag_eval.llm.client import LLMClient
    from rag_eval.rag.store import iter_chunks, open_qdrant

    qdrant = qdrant or open_qdrant()
    chunks = [Chunk.from_payload(p) for p in iter_chunks(collection, limit=None, client=qdrant)]
    if options.collection is None:
        options.collection = collection
    if options.model is None:
        options.model = llm_config.model
    encode = Embedder().encode if dedupe else None
    return synthesize(
        chunks, options, llm_completer(LLMClient(llm_config), progress, cancel),
        neighbours=qdrant_neighbours(qdrant, collection), encode=encode, judge=judge, cancel=cancel,
    )


JUDGE_KINDS = ("auto", "llm", "local", "none")


def make_answer_judge(kind: str, llm_config: Any) -> Judge | None:
    """The judge of the answerability filter. ``auto`` takes the LLM judge (same endpoint
    and model as generation) when an LLM is configured (a base URL or an API key), else
    the offline local judge; ``none`` skips the filter."""
    if kind not in JUDGE_KINDS:
        raise ValueError(f"unknown judge {kind!r}; choose one of: {', '.join(JUDGE_KINDS)}")
    if kind == "none":
        return None
    if kind == "auto":
        kind = "llm" if (llm_config.base_url or llm_config.has_key()) else "local"
    from rag_eval.judges.registry import make_judge

    return make_judge("llm", config=llm_config) if kind == "llm" else make_judge("local")
