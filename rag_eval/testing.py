"""Assertions for a project's own test suite: ``from rag_eval.testing import assert_trace``.

::

    def test_refund_answer_is_grounded():
        assert_trace(
            "How long do refunds take?",
            ["Refunds are issued within 14 days of the return arriving."],
            my_rag("How long do refunds take?"),
            adherence=1.0, context_relevance=0.3,
        )

The (question, documents, response) triple is one item of the engine
(:func:`rag_eval.runs.engine.evaluate`): split into keyed sentences, judged (the offline
local judge by default; pass ``judge=`` for an LLM judge or your own), scored with TRACe
and checked against the thresholds: each named metric must be at least its value.
Any metric of the row can be named: the four TRACe metrics (adherence as 0/1),
``adherence_score``, ``average``, and the support counts. On failure the message shows
every checked value and the support map as text (which response sentence is supported by
which document sentence), so a red test says why.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_eval.metrics.trace import DEFAULT_MODE
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, ScoringMode, TraceScores

__all__ = ["TraceCheck", "assert_trace", "check_trace"]


@functools.lru_cache(maxsize=1)
def _local_judge() -> Any:
    from rag_eval.judges.factory import build_judge

    return build_judge("local")


@dataclass(slots=True)
class TraceCheck:
    """What :func:`check_trace` found: the judged item, the judge's result, scores, the
    row's values (metrics and report fields) and the failed thresholds."""

    item: EvalItem
    result: JudgeResult
    scores: TraceScores | None
    values: dict[str, Any]
    thresholds: dict[str, float]
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def support_map(self) -> str:
        from rag_eval.display.support_map import support_map_text

        return support_map_text(self.item, self.result.labels)

    def message(self) -> str:
        head = [(f"TRACe check failed for question {self.item.question!r} (judge {self.result.judge or '?'}, "
                 f"status {self.result.status.value}):")]
        head += [f"  - {f}" for f in self.failures]
        shown = {k: v for k, v in self.values.items() if v is not None}
        head.append("  values: " + ", ".join(f"{k}={_fmt(v)}" for k, v in shown.items()))
        return "\n".join(head + ["", self.support_map()])


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def check_trace(
    question: str,
    documents: Sequence[str],
    response: str,
    thresholds: Mapping[str, float] | None = None,
    *,
    judge: Any = None,
    mode: ScoringMode | str = DEFAULT_MODE,
    **metric_thresholds: float,
) -> TraceCheck:
    """Judge and score one triple and compare with the thresholds; never raises for a
    low score (see :func:`assert_trace`). TypeError when ``documents`` is one string."""
    if isinstance(documents, str):
        raise TypeError("documents must be a list of texts, not one string")
    wanted = {**dict(thresholds or {}), **metric_thresholds}
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.runs.sources import RowsSource

    row = {"id": "assert_trace", "question": question, "documents": list(documents), "response": response}
    sink = MemorySink()
    evaluate(RowsSource([row]), judge if judge is not None else _local_judge(), sink, config=mode)
    record = sink.records[0]
    item = record.source.item if record.source.item is not None else EvalItem("assert_trace", question, [], [])
    result = record.judge_result or JudgeResult(
        "assert_trace", JudgeStatus(record.status), error=record.error)
    scores = TraceScores(**record.trace) if record.usable and record.trace is not None else None
    values: dict[str, Any] = ({**(record.scores or {}), **record.report, **(record.correctness or {})}
                              if scores is not None else {})
    check = TraceCheck(item, result, scores, values, wanted)
    if scores is None:
        check.failures.append(f"the judge gave no usable labels: {result.status.value}"
                              + (f" ({result.error})" if result.error else ""))
        return check
    for name, minimum in wanted.items():
        if name not in values:
            check.failures.append(f"unknown metric {name!r} (known: {', '.join(values)})")
        elif values[name] is None:
            check.failures.append(f"{name} is undefined for this row (needs >= {minimum:g})")
        elif float(values[name]) < minimum:
            check.failures.append(f"{name} = {float(values[name]):.3f} < {minimum:g}")
    return check


def assert_trace(*args: Any, **kwargs: Any) -> TraceCheck:
    """Judge (question, documents, response) and assert every threshold, e.g.
    ``assert_trace(q, docs, answer, adherence=1, context_relevance=0.3)`` (the arguments of
    :func:`check_trace`). Raises AssertionError with the values and the support map as
    text; returns the :class:`TraceCheck` when every threshold holds."""
    check = check_trace(*args, **kwargs)
    if not check.passed:
        raise AssertionError(check.message())
    return check
