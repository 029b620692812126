"""Metric names -> functions, and the one parser for names like ``"recall@5"``.

The CLI, the dashboard and run configurations refer to retrieval metrics by name.
Names are ``<metric>`` or ``<metric>@<k>``; the "unsupported metric" message is built
from :data:`RETRIEVAL_METRICS`, so it always lists exactly what exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

from rag_eval.metrics import retrieval
from rag_eval.metrics._common import check_k

# name -> scalar exact-match function (retrieved, relevant, *, k, ...) -> float
RETRIEVAL_METRICS: dict[str, Callable[..., float]] = {
    "precision": retrieval.precision_at_k,
    "recall": retrieval.recall_at_k,
    "f1": retrieval.f1_at_k,
    "hit_rate": retrieval.hit_rate_at_k,
    "mrr": retrieval.reciprocal_rank,
    "ndcg": retrieval.ndcg_at_k,
    "log_rank": retrieval.hybrid_log_rank,
}

# Parameters a metric accepts besides k, so options reach only the metrics that use them.
_METRIC_PARAMS: dict[str, frozenset[str]] = {
    "precision": frozenset({"denominator"}),
    "f1": frozenset({"denominator"}),
    "ndcg": frozenset({"gain"}),
    "log_rank": frozenset({"alpha", "gamma"}),
}

_NAME = re.compile(r"^\s*([a-z_0-9]+?)\s*(?:@\s*(\d+))?\s*$")


class MetricName(NamedTuple):
    metric: str
    k: int | None

    def __str__(self) -> str:
        return self.metric if self.k is None else f"{self.metric}@{self.k}"


def unsupported_message(name: str) -> str:
    return f"unsupported metric {name!r}; use one of {', '.join(sorted(RETRIEVAL_METRICS))}, optionally with @k (e.g. recall@5)"


def parse_metric_name(name: str) -> MetricName:
    """``"ndcg@10"`` -> ``MetricName("ndcg", 10)``; ``"MRR"`` -> ``("mrr", None)``.
    Raises ValueError for an unknown metric or a bad ``k``."""
    if not isinstance(name, str):
        raise ValueError(f"metric name must be a string, got {type(name).__name__}")
    match = _NAME.match(name.lower())
    if not match:
        raise ValueError(unsupported_message(name))
    metric, k = match.group(1), match.group(2)
    if metric not in RETRIEVAL_METRICS:
        raise ValueError(unsupported_message(name))
    return MetricName(metric, None if k is None else check_k(int(k), f"k in {name!r}"))


def resolve_metric(name: str, **params: Any) -> Callable[[Sequence[Any], Any], float]:
    """A one-query function ``f(retrieved, relevant) -> float`` for ``name``, with ``k``
    and whichever of ``params`` (denominator, gain, alpha, gamma) the metric takes."""
    parsed = parse_metric_name(name)
    allowed = _METRIC_PARAMS.get(parsed.metric, frozenset())
    kwargs = {key: value for key, value in params.items() if key in allowed}
    return partial(RETRIEVAL_METRICS[parsed.metric], k=parsed.k, **kwargs)


def evaluate_run(
    run: Mapping[str, Sequence[Any]],
    qrels: Mapping[str, Any],
    metrics: Sequence[str],
    **params: Any,
) -> dict[str, retrieval.BatchScore]:
    """Each named metric's mean over the queries of ``qrels`` (see :class:`BatchScore`)."""
    functions = {str(parse_metric_name(m)): resolve_metric(m, **params) for m in metrics}
    return {name: retrieval.mean_over_queries(fn, run, qrels) for name, fn in functions.items()}
