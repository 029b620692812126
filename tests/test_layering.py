"""The package's layering: the rooms and the direction imports may go are the contracts
of ``.importlinter`` (import-linter, run here so the README's test command holds them);
every room has its place in them; no import cycles between modules (read from the source
with ``ast``, every import including those inside functions); and the settings that hold
secrets are listed in one place."""

from __future__ import annotations

import ast
import configparser
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rag_eval"
CONTRACTS = ROOT / ".importlinter"


def lint_imports() -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is not installed (requirements-dev.txt)"
    return subprocess.run([exe, "--config", str(CONTRACTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)})


def test_import_linter_contracts_are_kept():
    """The layers of .importlinter (top to bottom: entry points cli | api | testing, the
    dashboard, the report, their shared look (display), labels, runs, judges | rag | traces,
    datasets | metrics | llm | encoders, io | text, schema | config | plugins) and its forbidden imports."""
    out = lint_imports()
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout


def _layer_rooms() -> set[str]:
    config = configparser.ConfigParser()
    config.read(CONTRACTS, encoding="utf-8")
    layers = config["importlinter:contract:layers"]["layers"]
    return {name.strip().strip("()") for line in layers.splitlines() for name in line.replace(":", "|").split("|")
            if name.strip()}


def test_every_room_has_a_place_in_the_layers():
    """A new package or top-level module under rag_eval/ is placed in .importlinter's layers
    (otherwise nothing would say what it may import)."""
    rooms = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    rooms |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert rooms - _layer_rooms() == set()


def test_secret_settings_are_listed_once():
    """rag_eval.config.KNOWN_SECRET_SETTINGS is the one list: no other module spells out
    two or more secret setting names in a tuple, list or set (they call configured_secrets)."""
    from rag_eval.config import KNOWN_SECRET_SETTINGS

    names = set(KNOWN_SECRET_SETTINGS)
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "config.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                spelled = {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names}
                if len(spelled) >= 2:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {sorted(spelled)}")
    assert offenders == []


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
    assert "rag_eval.runs.records" in GRAPH["rag_eval.runs.engine"]
    assert "rag_eval.encoders.onnx" in GRAPH["rag_eval.encoders.embedder"]


def test_benchmarks_and_scripts_import_no_test_module():
    """bench/ and scripts/ share helpers with the tests through harness/, never by importing
    tests/ (a test module is free to change; what others rely on lives in harness/)."""
    offenders = []
    for path in [*(ROOT / "bench").glob("*.py"), *(ROOT / "scripts").glob("*.py"), *(ROOT / "harness").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] == "tests"]
    assert offenders == []
