"""Sources of items for :func:`rag_eval.runs.engine.evaluate`.

A source yields one :class:`SourceItem` per input row, in input order, one at a time (in the
executor's preparing thread, so preparation overlaps judging): judgeable (``item`` set),
answered from the row cache (``result`` set), or ended before the judge with a ``status``
and an ``error`` naming file, row and field. :class:`RowsSource` reads rows that carry a
response (prepared by :func:`rag_eval.runs.prepare.prepare_row`); :class:`RagSource` sends
questions through the RAG system (retrieve + generate from a
:class:`~rag_eval.rag.config.RagConfig`). Ids: a row's ``id`` (``row-N`` when blank); a
repeated id's k-th occurrence is ``id#k`` (:func:`rag_eval.runs.join.occurrence_keys`).
"""

from __future__ import annotations

import copy
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_eval.datasets.schema import JUDGED_ROW_COLUMNS
from rag_eval.io.rows import RowError
from rag_eval.runs.prepare import default_id, id_of, prepare_row, row_question
from rag_eval.runs.truth import truth_of
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, _as_list

CANCELLED_ERROR = "run cancelled before this item"


@dataclass(slots=True)
class SourceItem:
    """One input row on its way through the engine (the input unit; see docs/architecture.md)."""

    position: int
    id: str
    question: str = ""
    item: EvalItem | None = None  # what the judge sees; None: the item ended before the judge
    status: str | None = None  # set when it ended before the judge (invalid_input, retrieval_error...)
    error: str | None = None
    result: JudgeResult | None = None  # a judgement from the row cache
    cache_key: str | None = None
    truth: dict[str, float | None] | None = None
    reference_answer: str | None = None
    gold_doc_ids: list[str] = field(default_factory=list)
    gold_contexts: list[str] = field(default_factory=list)  # gold passages (the RAG source's cosine retrieval metrics)
    answer: str | None = None
    chunks: list[dict[str, Any]] = field(default_factory=list)
    retrieved_doc_ids: list[str] = field(default_factory=list)
    generator: dict[str, Any] | None = None
    retrieval: dict[str, float | None] | None = None  # retrieval against gold passages (cosine; see retrieval_metrics)
    ranking: list[str] | None = None  # retrieved document ids in rank order (the retrieval metrics read it)
    k: int | None = None  # the run's top-k
    tokens: dict[str, int] = field(default_factory=dict)  # spent before the judge (generation)
    cost_usd: float | None = None
    timings: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    answer_match: float | None = None  # the LLM answer match against the reference (1.0 / 0.0)
    answer_match_error: str | None = None  # why the LLM answer match gave no verdict (its status and reason)
    answer_match_calls: dict[str, Any] | None = None  # what the answer match sent (calls, re-asks, retries...)
    objects: dict[str, Any] = field(default_factory=dict)  # not stored: retrieved chunks, the Generation (ask)


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What a run store records about the input: size, content hash, where it came from."""

    n_items: int
    fingerprint: str
    dataset_path: str | None
    collection: str | None = None
    kind: str | None = None  # "judge-given-responses" for rows that carry responses
    retrieval_mode: str | None = None  # the mode retrieval runs in (what ``auto`` resolved to)


class _Ids:
    """Occurrence keys on the fly: the k-th (k >= 2) occurrence of an id is ``id#k``
    (:func:`rag_eval.runs.join.occurrence_keys`, as a stream). Ids seen once are kept as
    their 64-bit hashes only, so a file of millions of rows streams in flat memory; the
    ids that do repeat are counted exactly."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.repeated: Counter[str] = Counter()

    def __call__(self, raw: str) -> str:
        digest = hash(raw)
        if digest not in self.seen:
            self.seen.add(digest)
            return raw
        self.repeated[raw] += 1
        return f"{raw}#{self.repeated[raw] + 1}"


def _named_language(value: Any) -> str | None:
    """The language a row names in its ``language`` column, if any."""
    if isinstance(value, dict) and isinstance(value.get("language"), str) and value["language"].strip():
        return str(value["language"]).strip()
    return None


def _metadata(value: Any) -> dict[str, Any]:
    """A row's ``metadata``, and its ``language`` when it names one (what the item is split,
    tokenized and judged in)."""
    meta = value.get("metadata") if isinstance(value, dict) else None
    out = dict(meta) if isinstance(meta, dict) else {}
    if language := _named_language(value):
        out["language"] = language
    return out


def match_answers(matcher: Any, found: Sequence[SourceItem]) -> None:
    """Set ``answer_match`` (1.0 when the LLM says the answer matches the reference, 0.0
    when not) on the items that have a reference and an answer; when it could not tell,
    ``answer_match_error`` says why, so the record shows the metric failed (never a missing column)."""
    from rag_eval.judges.answer_match import MatchItem

    todo = [s for s in found if s.item is not None and s.reference_answer and s.answer]
    if matcher is None or not todo:
        return
    results = matcher.match([MatchItem(s.id, s.question, str(s.reference_answer), str(s.answer)) for s in todo])
    for s, result in zip(todo, results):
        if result.status.usable and result.is_matching is not None:
            s.answer_match = 1.0 if result.is_matching else 0.0
        else:
            s.answer_match_error = f"{result.status.value}: {result.error or 'no verdict'}"
        s.answer_match_calls = {k: result.extra[k] for k in ("calls", "reasks", "retries", "cache_hits",
                                                             "cost_usd_spent") if k in result.extra}
        s.tokens = {k: s.tokens.get(k, 0) + int(v or 0) for k, v in {**s.tokens, **result.tokens}.items()}
        if result.cost_usd is not None:
            s.cost_usd = (s.cost_usd or 0.0) + result.cost_usd


def _strings(value: Any) -> list[str]:
    return [str(v) for v in _as_list(value) if v not in (None, "")]


def _references(value: dict[str, Any]) -> list[str]:
    """The row's reference answers, under any name a row to judge takes for them
    (``answer`` is not one: a judged row's ``answer`` is its response)."""
    for name in JUDGED_ROW_COLUMNS["reference_answer"]:
        found = _strings(value.get(name))
        if found:
            return found
    return []


def normalise_rows(rows: Iterable[Any]) -> list[tuple[int, dict[str, Any] | RowError]]:
    """``(row number, row or read error)`` pairs from pairs, rows or read errors."""
    out: list[tuple[int, dict[str, Any] | RowError]] = []
    for value in rows:
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int):
            out.append((value[0], value[1]))
        elif isinstance(value, RowError):
            out.append((value.row or len(out) + 1, value))
        elif isinstance(value, dict):
            out.append((len(out) + 1, value))
        else:
            out.append((len(out) + 1, RowError("dataset", len(out) + 1, None,
                                               f"expected an object, got {type(value).__name__}")))
    return out


class RowsSource:
    """Rows that carry a response and its contexts: ``rows`` as ``(row number, row)``
    pairs, or ``path`` read as a stream (:func:`rag_eval.datasets.io.iter_raw`). With a
    ``row_cache`` (see :class:`rag_eval.runs.row_cache.RowCache`) a row judged before
    with the same judge is neither prepared nor judged again. ``language``: the language of
    every row that names none (the configuration's, the caller's); a row's own wins."""

    kind = "judge-given-responses"

    def __init__(self, rows: Iterable[Any] | None = None, *, path: str | Path | None = None,
                 label: str | None = None, row_cache: Any = None, language: str | None = None) -> None:
        if (rows is None) == (path is None):
            raise ValueError("give rows or path")
        self.rows = None if rows is None else normalise_rows(rows)
        self.path = None if path is None else str(path)
        self.label = label or self.path or "dataset"
        self.row_cache = row_cache
        self.language = language
        self.answer_matcher: Any = None  # set by the engine when an LLM is configured

    def open(self) -> None:
        """Nothing to check: a file that cannot be read fails as the rows are read."""

    def size_hint(self) -> int:
        return len(self.rows) if self.rows is not None else 0

    def _pairs(self) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
        if self.rows is not None:
            return iter(self.rows)
        from rag_eval.datasets.io import iter_raw

        return iter(iter_raw(self.path))  # type: ignore[arg-type]

    def describe(self) -> SourceInfo:
        from rag_eval.datasets.fingerprint import fingerprint

        n = 0

        def counted() -> Iterator[dict[str, Any]]:  # one pass over a file: its rows are never all held
            nonlocal n
            for _, value in self._pairs():
                n += 1
                if isinstance(value, dict):
                    yield value

        digest = fingerprint(counted())
        return SourceInfo(n, digest, self.label if self.label != "dataset" else None, kind=self.kind)

    def items(self, skip: frozenset[str] = frozenset(), cancel: threading.Event | None = None
              ) -> Iterator[SourceItem]:
        ids = _Ids()
        for position, (number, value) in enumerate(self._pairs()):
            if self.language and isinstance(value, dict) and not _named_language(value):
                value = {**value, "language": self.language}  # as its own column would (the row cache keys it)
            raw_id = default_id(number) if isinstance(value, RowError) else id_of(value, number)
            key = ids(raw_id)
            if key in skip:
                continue
            question = row_question(value) if isinstance(value, dict) else None
            base = SourceItem(position, key, question.strip() if isinstance(question, str) else "",
                              metadata=_metadata(value))
            if cancel is not None and cancel.is_set():  # stop preparing: the rest is cancelled
                base.status, base.error = JudgeStatus.CANCELLED.value, CANCELLED_ERROR
                yield base
                continue
            if isinstance(value, dict):
                refs = _references(value)
                base.reference_answer = refs[0] if refs else None
                self._retrieval(base, value)
                if self.row_cache is not None and self._from_cache(base, value, raw_id):
                    match_answers(self.answer_matcher, [base])
                    yield base
                    continue
            prepared = prepare_row(value, number, self.label)
            if prepared.item is None:
                base.status, base.error = JudgeStatus.INVALID_INPUT.value, str(prepared.error)
            else:
                self._given(base, prepared.item)
                base.truth = prepared.truth
                match_answers(self.answer_matcher, [base])
            yield base

    @staticmethod
    def _retrieval(base: SourceItem, value: dict[str, Any]) -> None:
        """A row that says what its system retrieved (``retrieved_doc_ids``, in rank order)
        and what it should have (``gold_doc_ids``) gets the registry's retrieval metrics at
        its own k, as a RAG run's item does."""
        base.gold_doc_ids = _strings(value.get("gold_doc_ids"))
        retrieved = list(dict.fromkeys(_strings(value.get("retrieved_doc_ids"))))
        if retrieved:
            base.retrieved_doc_ids = base.ranking = retrieved
            base.k = len(retrieved)

    @staticmethod
    def _given(base: SourceItem, item: EvalItem) -> None:
        item.id = base.id
        base.item, base.answer = item, item.response
        texts = item.document_texts
        named = base.retrieved_doc_ids if len(base.retrieved_doc_ids) == len(texts) else None  # the row's own ids
        base.chunks = [{"id": f"{base.id}:{i}", "text": t, "doc_id": named[i] if named else f"doc-{i}", "source": "given",
                        "score": None, "chunk_index": i} for i, t in enumerate(texts)]

    def _from_cache(self, base: SourceItem, value: dict[str, Any], raw_id: str) -> bool:
        base.cache_key = self.row_cache.key(value, raw_id)
        hit = self.row_cache.get(base.cache_key)
        if hit is None:
            return False
        try:
            base.truth = truth_of(value)
        except ValueError:  # an unreadable truth column: the full preparation reports it
            return False
        self._given(base, hit[0])
        base.result = hit[1]
        return True


# ---------------------------------------------------------------- the RAG system
def parse_row(value: dict[str, Any] | RowError, row_number: int, source: str = "dataset",
              position: int | None = None) -> SourceItem:
    """A question of the RAG source from a dataset row (``position`` defaults to
    ``row_number - 1``); a row that cannot be used ends as ``invalid_input`` with an ``error``
    naming the file, the row and the field. The id rule is :func:`rag_eval.runs.prepare.id_of`'s."""
    position = row_number - 1 if position is None else position
    invalid = JudgeStatus.INVALID_INPUT.value
    if isinstance(value, RowError):
        return SourceItem(position, default_id(value.row or row_number), status=invalid, error=str(value))
    item_id = id_of(value, row_number)
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        return SourceItem(position, item_id, status=invalid, metadata=_metadata(value),
                          error=f"{source}: row {row_number}, field 'question': missing or empty")
    references = _references(value)
    return SourceItem(position, item_id, question.strip(), reference_answer=references[0] if references else None,
                      gold_doc_ids=_strings(value.get("gold_doc_ids")),
                      gold_contexts=_strings(value.get("gold_contexts")) or _strings(value.get("contexts")),
                      metadata=_metadata(value))


def retrieval_metrics(chunks: Sequence[Any], q: SourceItem, k: int, embed=None) -> dict[str, float | None] | None:
    """Per-item retrieval metrics, the registry's: against gold document ids (over the
    ranking) or, without them, gold passages (``recall_cosine``, ``precision_cosine``: one to
    one cosine of embeddings); ``None`` when the row has neither."""
    from rag_eval.metrics.registry import METRICS, MetricItem, compute_item_metrics

    vectors = None
    if not q.gold_doc_ids:
        if not q.gold_contexts or embed is None:
            return None
        vectors = (embed([c.text for c in chunks]) if chunks else [], embed(q.gold_contexts))
    item = MetricItem("", "", "", [], ranking=ranking(chunks), gold_ids=frozenset(q.gold_doc_ids), k=k,
                      passage_vectors=vectors)
    return compute_item_metrics(METRICS.built_in(), item).families.get("retrieval")


def ranking(chunks: Sequence[Any]) -> list[str]:
    """The retrieved chunks' document ids in rank order, each once."""
    return list(dict.fromkeys(c.doc_id for c in chunks))


def build_item(item_id: str, question: str, chunks: Sequence[Any], answer: str,
               metadata: dict[str, Any] | None = None, response_sentences: Sequence[str] | None = None,
               language: str | None = None) -> EvalItem:
    """The judge's view: the retrieved chunks as documents (split into the sentences
    ingestion recorded for them), the answer as the response (``response_sentences``:
    the sentences a generator chose, e.g. the extractive one's); ``language``: the question
    row's or the configuration's (None: detected)."""
    from rag_eval.text.sentences import item_from_texts

    meta = {"doc_ids": [c.doc_id for c in chunks], "chunk_ids": [c.id for c in chunks],
            "sources": [c.location for c in chunks]}
    meta.update(metadata or {})
    return item_from_texts(item_id, question, [c.text for c in chunks], answer, metadata=meta,
                           units=[c.sentences or None for c in chunks], response_sentences=response_sentences,
                           language=language)


def token_counts(*parts: dict[str, Any] | None) -> dict[str, int]:
    """Token counts summed over ``parts`` under one set of names (prompt, completion, total)."""
    names = {"prompt_tokens": "prompt", "completion_tokens": "completion", "total_tokens": "total"}
    out: dict[str, int] = {}
    for part in parts:
        for key, value in (part or {}).items():
            name = names.get(key, key)
            out[name] = out.get(name, 0) + int(value or 0)
    if "total" not in out and out:
        out["total"] = out.get("prompt", 0) + out.get("completion", 0)
    return out


class RagSource:
    """Questions through the RAG system: retrieve from ``collection``, generate with the
    configuration's generator (a batch at a time, so an LLM generator answers
    concurrently), then the judge sees the retrieved chunks and the answer."""

    kind = None
    row_cache = None  # questions go through retrieval and generation: nothing to answer from a cache
    batch_size = 8

    def __init__(self, rows: Iterable[Any], config: Any, collection: str, *, label: str | None = None,
                 client: Any = None, llm_client: Any = None) -> None:
        self.rows = normalise_rows(rows)
        self.config, self.collection = config, collection
        self.label = label or "dataset"
        self.client, self.llm_client = client, llm_client
        self.answer_matcher: Any = None  # set by the engine when an LLM is configured
        self.retrieval_mode: str | None = None  # what the configured mode resolves to here (set by open())
        self.questions = [parse_row(v, n, self.label, pos) for pos, (n, v) in enumerate(self.rows)]
        ids = _Ids()
        for q in self.questions:
            q.id = ids(q.id)

    def size_hint(self) -> int:
        return len(self.rows)

    def open(self) -> None:
        """Check the collection before anything is stored (``ValueError`` when unusable)."""
        from rag_eval.rag.retrieve import resolve_mode
        from rag_eval.rag.store import collection_metadata, open_qdrant, require_collection

        self.client = self.client or open_qdrant()
        require_collection(self.client, self.collection, self.config.embedder)
        self.retrieval_mode = resolve_mode(self.config, collection_metadata(self.client, self.collection) or {})

    def describe(self) -> SourceInfo:
        from rag_eval.datasets.fingerprint import fingerprint

        return SourceInfo(len(self.rows), fingerprint([v for _, v in self.rows if isinstance(v, dict)]),
                          self.label if self.label != "dataset" else None, collection=self.collection,
                          retrieval_mode=self.retrieval_mode)

    def items(self, skip: frozenset[str] = frozenset(), cancel: threading.Event | None = None
              ) -> Iterator[SourceItem]:
        todo = [q for q in self.questions if q.id not in skip]
        embed = None
        if any(q.gold_contexts and not q.gold_doc_ids for q in todo):
            from rag_eval.encoders.embedder import Embedder

            embed = Embedder().encode
        size = max(self.batch_size, 2 * int(getattr(self.config.judge, "concurrency", 4) or 4))
        for start in range(0, len(todo), size):
            batch = [copy.deepcopy(q) for q in todo[start:start + size]]  # the parsed questions serve every pass
            if cancel is not None and cancel.is_set():
                for s in batch:
                    if s.status is None:
                        s.status, s.error = JudgeStatus.CANCELLED.value, CANCELLED_ERROR
                yield from batch
                continue
            for s in batch:
                if s.status is None:
                    self._retrieve(s)
            self._generate(batch)
            match_answers(self.answer_matcher, batch)
            for s in batch:
                if s.objects.get("chunks") is not None and (s.item is not None or s.objects["chunks"]):
                    if s.gold_doc_ids:  # computed with the record, by the registry's retrieval metrics
                        s.ranking, s.k = ranking(s.objects["chunks"]), self.config.retrieval.k
                    else:
                        s.retrieval = retrieval_metrics(s.objects["chunks"], s, self.config.retrieval.k, embed)
                yield s

    def _retrieve(self, s: SourceItem) -> None:
        from rag_eval.rag.retrieve import retrieve

        try:
            t = time.perf_counter()
            chunks = retrieve(s.question, self.collection, self.config, client=self.client)
            s.timings["retrieve_s"] = time.perf_counter() - t
        except Exception as err:  # noqa: BLE001 - one question's retrieval failure must not stop the run
            s.status, s.error = "retrieval_error", f"{type(err).__name__}: {err}"
            return
        s.objects["chunks"] = chunks
        s.chunks = [c.to_record() for c in chunks]
        s.retrieved_doc_ids = list(dict.fromkeys(c.doc_id for c in chunks))

    def _generate(self, batch: list[SourceItem]) -> None:
        from rag_eval.rag.generate import generate_many

        ready = [s for s in batch if s.status is None]
        if not ready:
            return
        t = time.perf_counter()
        generations = generate_many([s.question for s in ready], [s.objects["chunks"] for s in ready],
                                    self.config.generator, client=self.llm_client)
        share = (time.perf_counter() - t) / len(ready)
        for s, generation in zip(ready, generations):
            s.objects["generation"] = generation
            s.timings["generate_s"] = generation.latency_s if generation.latency_s is not None else share
            s.answer = generation.text
            s.generator = {k: v for k, v in generation.to_dict().items() if k != "text"}
            s.tokens = token_counts(generation.tokens)
            s.cost_usd = generation.cost_usd
            if generation.status != "ok":
                s.status, s.error = "generation_error", generation.error
                continue
            s.item = build_item(s.id, s.question, s.objects["chunks"], generation.text,
                                {"generator": generation.kind}, response_sentences=generation.sentences or None,
                                language=s.metadata.get("language") or self.config.language)
