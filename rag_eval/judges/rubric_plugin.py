"""This package's own plugin in group ``rag_eval.metrics``
(:data:`rag_eval.metrics.registry.OWN_PLUGINS`, loaded by name: a requirements-only
install has no entry points): the rubrics ``rag-eval metrics add`` installed, registered
through the same door as any plugin's metrics, so every entry point (CLI, Python API,
Batch page, Ray) sees them.

``RUBRICS`` is read from the rubrics folder each time the entry point is loaded (a module
``__getattr__``, PEP 562), not once per process: when the registry looks at its entry
points again (:meth:`~rag_eval.metrics.registry.MetricRegistry.reload_plugins`), a
long-running dashboard sees a rubric installed after it started."""

from __future__ import annotations

from typing import Any

from rag_eval.judges.rubric import installed_rubrics


def __getattr__(name: str) -> Any:
    if name == "RUBRICS":
        return installed_rubrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
