"""One question through the whole RAG system: retrieve -> generate -> judge -> score.

The :class:`~rag_eval.schema.EvalItem` the judge sees is built from the retrieved
chunks (one document per chunk, in rank order) and the generated answer, so TRACe
measures this system's own context and answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_eval.judges.base import Judge
from rag_eval.metrics.report_fields import report_fields
from rag_eval.metrics.trace import score_item
from rag_eval.rag.config import JudgeConfig, RagConfig
from rag_eval.rag.generate import Generation, generate
from rag_eval.rag.retrieve import RetrievedChunk, retrieve
from rag_eval.rag.store import VectorStore
from rag_eval.schema import METRIC_NAMES, EvalItem, JudgeResult, JudgeStatus, TraceScores
from rag_eval.text.sentences import item_from_texts


@dataclass(slots=True)
class AskResult:
    question: str
    chunks: list[RetrievedChunk]
    generation: Generation
    item: EvalItem
    judge_result: JudgeResult | None = None
    scores: TraceScores | None = None
    config_hash: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    judge_error: str | None = None  # the judge could not be built (e.g. model missing)

    @property
    def answer(self) -> str:
        return self.generation.text

    def report_fields(self) -> dict[str, Any]:
        """The original project's per-evaluation fields (``average``, ``rmse_aggregation``,
        ``overall_supported`` and the sentence support counts); all None when not judged."""
        values = {name: getattr(self.scores, name) for name in METRIC_NAMES} if self.scores else None
        labels = self.judge_result.labels if self.judge_result is not None else None
        return report_fields(values, labels, self.item.response_keys)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.report_fields(),
            "question": self.question,
            "chunks": [c.to_dict() for c in self.chunks],
            "generation": self.generation.to_dict(),
            "judge_result": self.judge_result.to_dict() if self.judge_result else None,
            "scores": self.scores.to_dict() if self.scores else None,
            "config_hash": self.config_hash,
            "timings": dict(self.timings),
            "judge_error": self.judge_error,
        }


def make_judge_from_config(config: JudgeConfig) -> Judge:
    """The judge a configuration names, built through the judges' registry."""
    from rag_eval.judges.registry import make_judge

    options: dict[str, Any] = {}
    if config.kind == "llm":
        options = {k: v for k, v in {
            "model": config.model, "base_url": config.base_url, "prompt_id": config.prompt_id,
            "concurrency": config.concurrency, "api_key_env": config.api_key_env,
        }.items() if v is not None}
    elif config.calibration:
        options = {"calibration": config.calibration}
    return make_judge(config.kind, **options)


def build_item(item_id: str, question: str, chunks: Sequence[RetrievedChunk], answer: str,
               metadata: dict[str, Any] | None = None, response_sentences: Sequence[str] | None = None) -> EvalItem:
    """The judge's view: the retrieved chunks as documents (split into the sentences
    ingestion recorded for them), the answer as the response (``response_sentences``:
    the sentences a generator chose, e.g. the extractive one's)."""
    meta = {"doc_ids": [c.doc_id for c in chunks], "chunk_ids": [c.id for c in chunks],
            "sources": [c.location for c in chunks]}
    meta.update(metadata or {})
    return item_from_texts(item_id, question, [c.text for c in chunks], answer, metadata=meta,
                           units=[c.sentences or None for c in chunks], response_sentences=response_sentences)


def score_result(item: EvalItem, result: JudgeResult, config: RagConfig) -> TraceScores | None:
    """TRACe from usable labels; ``None`` when the judgement failed (never a zero)."""
    if not result.status.usable or result.labels is None:
        return None
    scores = score_item(item, result.labels, config.scoring_mode)
    if result.extra.get("label_repairs"):
        scores.diagnostics["label_repairs"] = result.extra["label_repairs"]
    return scores


def judge_items(judge: Judge, items: Sequence[EvalItem], cancel=None) -> list[JudgeResult]:
    """The judge's results; a judge that breaks its never-raise contract still yields
    one explicit ``provider_error`` per item instead of losing the batch."""
    try:
        return judge.judge(list(items), cancel=cancel)
    except Exception as err:  # a contract breach by a judge must not lose rows
        return [JudgeResult(item_id=i.id, status=JudgeStatus.PROVIDER_ERROR, error=f"{type(err).__name__}: {err}",
                            judge=getattr(judge, "name", "")) for i in items]


def ask(
    question: str,
    collection: str,
    config: RagConfig,
    judge: Judge | None = None,
    client: VectorStore | None = None,
    llm_client=None,
    evaluate: bool = True,
) -> AskResult:
    """Answer ``question`` from ``collection`` and, with ``evaluate``, judge and score it
    (``judge`` defaults to the one the configuration names). Raises ``ValueError`` for
    an empty question or an unusable collection."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    chunks = retrieve(question, collection, config, client=client)
    timings["retrieve_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    generation = generate(question, chunks, config.generator, client=llm_client)
    timings["generate_s"] = time.perf_counter() - t1
    item = build_item("ask", question, chunks, generation.text, {"generator": generation.kind},
                      response_sentences=generation.sentences or None)
    result = AskResult(question=question, chunks=chunks, generation=generation, item=item,
                       config_hash=config.config_hash, timings=timings)
    if evaluate and generation.status == "ok":
        if judge is None:
            try:
                judge = make_judge_from_config(config.judge)
            except (ValueError, OSError) as err:  # the answer is still worth showing
                result.judge_error = f"judge unavailable: {err}"
                timings["total_s"] = time.perf_counter() - t0
                return result
        t2 = time.perf_counter()
        result.judge_result = judge_items(judge, [item])[0]
        timings["judge_s"] = time.perf_counter() - t2
        result.scores = score_result(item, result.judge_result, config)
    timings["total_s"] = time.perf_counter() - t0
    return result
