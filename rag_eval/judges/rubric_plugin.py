"""This package's own entry point in group ``rag_eval.metrics`` (pyproject.toml): the rubrics
``rag-eval metrics add`` installed, registered through the same door as any plugin's
metrics, so every entry point (CLI, Python API, Batch page, Ray) sees them."""

from __future__ import annotations

from rag_eval.judges.rubric import installed_rubrics

RUBRICS = installed_rubrics()
