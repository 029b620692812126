"""rag-eval: evaluate RAG systems with TRACe (context relevance, context utilization,
completeness, adherence), offline by default.

The Python API (documented in ``docs/python-api.md``)::

    import rag_eval

    result = rag_eval.evaluate(df)        # a DataFrame, a list of dicts, a file or a datasets.Dataset
    result.to_pandas()                     # one row per item: id, status, TRACe scores, reasons
    result.summary                         # means with 95% intervals, coverage, statuses, judge error
    result.gate(fail_under={"adherence": 0.9}).passed
    result.save("nightly")                 # the dashboard's Runs page shows it

    rag_eval.load_run("nightly")           # a stored run, as an Evaluation
    rag_eval.compare("baseline", "nightly")
    rag_eval.ask("How long do refunds take?")

Importing the package imports nothing else: each name is loaded on first use (module
``__getattr__``, PEP 562), so ``rag-eval --help`` and ``import rag_eval`` stay cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_eval.api import Comparison, Evaluation, Summary, ask, compare, estimate, evaluate, known_metrics, load_run
    from rag_eval.judges.kinds import JUDGE_KINDS, JudgeKind
    from rag_eval.metrics.registry import METRICS, Explained, Metric, MetricItem, metric

#: public name -> the module that defines it (loaded on first use)
_EXPORTS = {
    "evaluate": "rag_eval.api",
    "estimate": "rag_eval.api",
    "Evaluation": "rag_eval.api",
    "Summary": "rag_eval.api",
    "Comparison": "rag_eval.api",
    "load_run": "rag_eval.api",
    "compare": "rag_eval.api",
    "ask": "rag_eval.api",
    "known_metrics": "rag_eval.api",
    # plugins: a metric is one decorated function, a judge kind one JudgeKind (docs/plugins.md)
    "metric": "rag_eval.metrics.registry",
    "Metric": "rag_eval.metrics.registry",
    "MetricItem": "rag_eval.metrics.registry",
    "Explained": "rag_eval.metrics.registry",
    "METRICS": "rag_eval.metrics.registry",
    "JudgeKind": "rag_eval.judges.kinds",
    "JUDGE_KINDS": "rag_eval.judges.kinds",
}

__all__ = ["JUDGE_KINDS", "METRICS", "Comparison", "Evaluation", "Explained", "JudgeKind", "Metric", "MetricItem",
           "Summary", "ask", "compare", "estimate", "evaluate", "known_metrics", "load_run", "metric"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rag_eval' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
