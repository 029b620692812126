"""One engine, one record, one factory, read from the source with ``ast``: only
``runs/engine.py`` drives the streaming executor (the only loop over items), only
``runs/records.py`` builds an ``ItemRecord`` or a record dict, and no entry point builds a
judge but through ``judges/factory.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "rag_eval").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py",
                  ROOT / "dashboard.py"])
RECORD_KEYS = {"labels", "scores"}  # with an id and a status: a dict literal that is an item record


def _calls(tree: ast.AST, name: str) -> int:
    found = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                found += 1
    return found


def _record_dicts(tree: ast.AST) -> int:
    found = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            found += bool("id" in keys and "status" in keys and keys & RECORD_KEYS)
    return found


def _where(name: str, count) -> list[str]:
    out = []
    for path in SOURCES:
        if count(ast.parse(path.read_text(encoding="utf-8")), name):
            out.append(str(path.relative_to(ROOT)))
    return out


def test_only_the_engine_drives_the_executor():
    assert _where("stream_judge", _calls) == ["rag_eval/runs/engine.py"]


#: dict literals that look like records but are not one: a cached JudgeResult, the report's
#: projection of a stored item for display, the synthetic items of the benchmark store
NOT_RECORDS = {"rag_eval/runs/row_cache.py", "rag_eval/ui/report_html.py", "rag_eval/report/html.py",
               "rag_eval/runs/sample_store.py"}


def test_only_the_record_builder_makes_records():
    assert _where("ItemRecord", _calls) == ["rag_eval/runs/records.py"]
    assert set(_where("", lambda tree, _: _record_dicts(tree))) - NOT_RECORDS == {"rag_eval/runs/records.py"}


@pytest.mark.parametrize("builder", ["LocalJudge", "LLMJudge", "RayJudge"])
def test_judges_are_built_only_by_the_factory(builder):
    # the factory, and the built-in judge kinds' builders it looks up (judges/kinds.py)
    allowed = {"rag_eval/judges/factory.py", "rag_eval/judges/kinds.py", "rag_eval/judges/ray.py",
               "rag_eval/labels/calibrate.py"}
    assert set(_where(builder, _calls)) <= allowed
