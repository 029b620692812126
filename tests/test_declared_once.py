"""A metric is declared once (issue 42): no module lists metric names again.

Every output reads its metric names from the registry (rag_eval/metrics/registry.py), by
family. This test reads the source of rag_eval/, pages/ and app.py and fails on a literal
list, tuple, set or dict (its keys) of three or more registered metric names or family
field names (``rmse:completeness`` and ``recall@5`` count as the metric they name) outside
the registry. The one other module allowed to spell them is rag_eval/schema.py: it defines
the TRACe record itself, in the layer below the registry; the test checks it agrees with
the registry instead.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from rag_eval.metrics.registry import FAMILY_FIELD, METRICS, TRACE_METRICS, TRACE_SCORES
from rag_eval.schema import RAGBENCH_TRUTH_COLUMNS, TraceScores

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {"rag_eval/metrics/registry.py", "rag_eval/schema.py"}
NAMES = {*(m.name for m in METRICS if m.origin == "rag_eval"), *FAMILY_FIELD, *FAMILY_FIELD.values()}


def _metric_name(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return None
    name = re.sub(r"@\d+$", "", node.value.rsplit(":", 1)[-1])
    return name if name in NAMES else None


def _lists(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            yield node, node.elts
        elif isinstance(node, ast.Dict):
            yield node, [k for k in node.keys if k is not None]


def test_no_literal_list_of_metric_names_outside_the_registry():
    files = [*ROOT.glob("rag_eval/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    found = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        for node, elements in _lists(ast.parse(path.read_text(encoding="utf-8"))):
            names = [n for e in elements if (n := _metric_name(e)) is not None]
            if len(names) >= 3:
                found.append(f"{rel}:{node.lineno}: {names}")
    assert not found, "metric names listed outside the registry (read them from METRICS):\n" + "\n".join(found)


def test_the_trace_record_agrees_with_the_registry():
    fields = {f.name for f in dataclasses.fields(TraceScores)}
    assert set(TRACE_SCORES) <= fields
    assert tuple(RAGBENCH_TRUTH_COLUMNS) == TRACE_METRICS


def test_the_check_sees_a_list_written_anywhere():
    tree = ast.parse('X = ("context_relevance", "rmse:completeness", "recall@5")\nY = {"scores": 1, "metrics": 2, "custom": 3}')
    counted = [sum(_metric_name(e) is not None for e in elements) for _, elements in _lists(tree)]
    assert counted == [3, 3]
