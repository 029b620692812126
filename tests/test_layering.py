"""The package's layering, read from the source with ``ast`` (every import, including
those inside functions): which rooms may import which, and no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rag_eval"

# room -> rooms it must never import (a room is the first component under rag_eval)
FORBIDDEN: dict[str, set[str]] = {
    "rag": {"judges", "metrics", "runs", "cli", "ui", "synth", "datasets"},
    "judges": {"rag", "runs", "cli", "ui", "synth", "datasets"},
    "metrics": {"rag", "judges", "runs", "cli", "ui", "synth", "datasets", "llm", "encoders", "io"},
    "text": {"rag", "judges", "runs", "cli", "ui", "synth", "datasets", "llm", "encoders", "metrics", "io"},
    "encoders": {"rag", "judges", "runs", "cli", "ui", "synth", "datasets", "llm", "metrics"},
    "llm": {"rag", "judges", "runs", "cli", "ui", "synth", "datasets", "encoders", "metrics"},
    "datasets": {"rag", "judges", "runs", "cli", "ui", "synth", "llm", "encoders", "metrics"},
    "synth": {"runs", "cli", "ui"},
    "runs": {"cli", "ui"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every ``rag_eval`` module ``path`` imports (``from a import b`` counts ``a.b``
    when ``a.b`` is itself a module, else ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("rag_eval"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not base.startswith("rag_eval"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports_of(path) & set(MODULES) for name, path in MODULES.items()}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_rooms_import_only_downwards(module):
    banned = FORBIDDEN.get(room(module), set())
    bad = sorted(m for m in GRAPH[module] if room(m) in banned)
    assert not bad, f"{module} imports {bad} (room {room(module)!r} must not import {sorted(banned)})"


def test_no_import_cycles():
    """Between modules (a package's ``__init__`` importing its own submodules is not a cycle)."""
    edges = {m: {d for d in deps if d != m and not m.startswith(d + ".") and not d.startswith(m + ".")}
             for m, deps in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(edges[node]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_graph_is_read():
    """Guard against a walker that finds nothing: known edges are present."""
    assert "rag_eval.runs.engine" in GRAPH["rag_eval.runs.runner"]
    assert "rag_eval.encoders.onnx" in GRAPH["rag_eval.encoders.embedder"]
