"""One question through the whole RAG system (retrieve -> generate -> judge -> score), as one item of
:func:`rag_eval.runs.engine.evaluate` (the RAG source, a memory sink). The judge sees the retrieved chunks
(one document per chunk, in rank order) and the generated answer, so TRACe measures this system's own
context and answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rag_eval.judges.base import Judge
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.metrics.report_fields import report_fields
from rag_eval.rag.config import RagConfig
from rag_eval.rag.generate import Generation
from rag_eval.rag.retrieve import RetrievedChunk
from rag_eval.runs.sources import build_item
from rag_eval.schema import EvalItem, JudgeResult, TraceScores


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
        values = {name: getattr(self.scores, name) for name in TRACE_METRICS} if self.scores else None
        labels = self.judge_result.labels if self.judge_result is not None else None
        return report_fields(values, labels, self.item.response_keys)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.report_fields(),
            "question": self.question,
            "chunks": [c.to_record() for c in self.chunks],
            "generation": self.generation.to_dict(),
            "judge_result": self.judge_result.to_dict() if self.judge_result else None,
            "scores": self.scores.to_dict() if self.scores else None,
            "config_hash": self.config_hash,
            "timings": dict(self.timings),
            "judge_error": self.judge_error,
        }


def ask(
    question: str,
    collection: str,
    config: RagConfig,
    judge: Judge | None = None,
    evaluate: bool = True,
) -> AskResult:
    """Answer ``question`` from ``collection`` and, with ``evaluate``, judge and score it
    (``judge`` defaults to the one the configuration names): one item through
    :func:`rag_eval.runs.engine.evaluate`. Raises ``ValueError`` for an empty question or
    an unusable collection."""
    from rag_eval.judges.factory import JudgeUsageError, build_judge
    from rag_eval.runs.engine import evaluate as evaluate_items
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.runs.sources import RagSource

    if not question or not question.strip():
        raise ValueError("the question is empty")
    t0 = time.perf_counter()
    judge_error = None
    if evaluate and judge is None:
        try:
            judge = build_judge(config.judge)
        except JudgeUsageError as err:  # the answer is still worth showing
            judge_error = f"judge unavailable: {err}"
    source = RagSource([{"id": "ask", "question": question}], config, collection)
    sink = MemorySink()
    evaluate_items(source, judge if evaluate else None, sink, config=config)
    record = sink.records[0]
    found = record.source
    if record.status == "retrieval_error":
        raise ValueError(record.error)
    if found.item is None and found.objects.get("generation") is None:
        raise ValueError(record.error or "no answer")
    result_of_judge = record.judge_result
    timings = {k: v for k, v in record.timings.items() if k != "judge_s"}
    if result_of_judge is not None:
        timings["judge_s"] = record.timings.get("judge_s") or 0.0
    timings["total_s"] = time.perf_counter() - t0
    item = found.item if found.item is not None else build_item(
        "ask", question, found.objects.get("chunks") or [], found.answer or "", {"generator": None},
        language=config.language)
    scores = TraceScores(**record.trace) if record.trace is not None else None
    return AskResult(question=question, chunks=list(found.objects.get("chunks") or []),
                     generation=found.objects["generation"], item=item, judge_result=result_of_judge, scores=scores,
                     config_hash=config.config_hash, timings=timings, judge_error=judge_error)
