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
    rag_eval.ask("How do I make the screen black and white?")  # over the demo TV manual

What a plugin needs is here too: ``metric``/``Metric``/``MetricItem``/``Explained`` for a
metric, ``register_rubric`` for a rubric, ``JudgeKind``/``JUDGE_KINDS`` with ``EvalItem``,
``JudgeResult``, ``Labels`` and ``JudgeStatus`` for a judge (docs/plugins.md).

Importing the package imports nothing else: each name is loaded on first use (module
``__getattr__``, PEP 562), so ``rag-eval --help`` and ``import rag_eval`` stay cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_eval.api import Comparison, Evaluation, Summary, aevaluate, ask, compare, estimate, evaluate, load_run
    from rag_eval.judges.kinds import JUDGE_KINDS, JudgeKind
    from rag_eval.judges.rubric import register_rubric
    from rag_eval.metrics.registry import METRICS, Explained, Metric, MetricItem, metric
    from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels

#: public name -> the module that defines it (loaded on first use); plugins: a metric is one
#: decorated function, a judge kind one JudgeKind (docs/plugins.md)
_EXPORTS = {name: module for module, names in {
    "rag_eval.api": ("evaluate", "aevaluate", "estimate", "Evaluation", "Summary", "Comparison", "load_run", "compare",
                     "ask"),
    "rag_eval.metrics.registry": ("metric", "Metric", "MetricItem", "Explained", "METRICS"),
    "rag_eval.judges.rubric": ("register_rubric",),
    "rag_eval.judges.kinds": ("JudgeKind", "JUDGE_KINDS"),
    "rag_eval.schema": ("EvalItem", "JudgeResult", "JudgeStatus", "Labels"),
}.items() for name in names}

__all__ = ["JUDGE_KINDS", "METRICS", "Comparison", "EvalItem", "Evaluation", "Explained", "JudgeKind", "JudgeResult",
           "JudgeStatus", "Labels", "Metric", "MetricItem", "Summary", "aevaluate", "ask", "compare", "estimate",
           "evaluate", "load_run", "metric", "register_rubric"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rag_eval' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
