"""The docs name only what exists: every repository path (``rag_eval/runs/engine.py``,
``runs/sources.py``, ``tests/runs/test_paths_agree.py``, ``runs/store/``), every dotted
symbol (``runs/records.build_record``, ``schema.ScoringMode``, ``rag_eval.runs.engine.evaluate``)
and every call written out with its parameters (``build_record(source, result, mode)``)
in the README, CONTRIBUTING and docs/ is checked against the code, read with ``ast`` (no
import). And no file of the repository points outside it (``../shared/DESIGN.md``).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rag_eval"
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
ROOMS = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()} | {
    p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
TOP_DIRS = {"rag_eval", "tests", "harness", "bench", "scripts", "pages", "docs"}

#: a path with a folder: ``a/b.py``, ``a/b/`` (``<placeholders>`` and globs are not paths)
PATH = re.compile(r"(?<![\w./<-])((?:[A-Za-z_][\w-]*/)+(?:[\w-]+\.(?:py|md|toml|yaml|yml|json|jsonl|sql|txt))?)(?![\w<*])")
#: a dotted symbol in backticks, optionally after a module path: ``runs/records.build_record``, ``schema.ScoringMode``
SYMBOL = re.compile(r"^((?:[a-z_][\w]*/)*[a-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(.*\))?$")
#: a call with its parameters in backticks: ``build_record(source, result, mode)``
CALL = re.compile(r"^(?:[\w.]+\.)?([a-z_]\w*)\(([^()]*)\)(?:\s*->.*)?$")
CODE = re.compile(r"`([^`\n]+)`")
#: a fenced block without a language (the architecture pictures), where calls are written out bare
PICTURE = re.compile(r"^```\s*\n(.*?)^```", re.S | re.M)
BARE_CALL = re.compile(r"\b([a-z_]\w*\([^()\n]*\))")
#: paths the docs name on purpose although this repository does not hold them: a file the reader
#: adds (the migration example), the reader's own golden set (docs/ci.md), a benchmark's output folder
NOT_HERE = {"rag_eval/runs/store/migrations/versions/0008_run_tags_table.py", "tests/golden.jsonl", "bench/out/vectors/"}
#: dotted names that are not ours although they start like a room: OpenInference span attributes,
#: Hugging Face's ``datasets.Dataset``
FOREIGN = {"llm.model_name", "llm.output_messages", "llm.token_count.prompt", "datasets.Dataset"}
PLACEHOLDER = re.compile(r"NNNN|NAME|<")


def _doc_texts() -> list[tuple[str, str]]:
    return [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in DOCS]


def _resolve_path(token: str) -> bool:
    if token in NOT_HERE or PLACEHOLDER.search(token):
        return True
    token = token.rstrip("/") or token
    first = token.split("/", 1)[0]
    if first in TOP_DIRS or first in {".github"}:
        return (ROOT / token).exists()
    if first in ROOMS:
        return (PACKAGE / token).exists()
    return True  # not a repository path (e.g. a URL's path, a folder of the user's)


def _paths(text: str) -> set[str]:
    found = set()
    for token in PATH.findall(text):
        first = token.split("/", 1)[0]
        if first in TOP_DIRS or first in ROOMS:
            found.add(token)
    return found


def test_every_path_the_docs_name_exists():
    missing = [f"{doc}: {token}" for doc, text in _doc_texts()
               for token in sorted(_paths(re.sub(r"https?://\S+", "", text))) if not _resolve_path(token)]
    assert missing == []


@functools.cache
def _module_tree(module: str) -> ast.Module | None:
    """``rag_eval.a.b`` -> the parsed module (a package's ``__init__``), or None."""
    parts = module.split(".")
    base = ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return ast.parse(path.read_text(encoding="utf-8"))
    return None


def _top_names(tree: ast.Module) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        names[n.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.If):  # TYPE_CHECKING blocks and the like
            names.update(_top_names(ast.Module(body=node.body, type_ignores=[])))
    return names


def _class_has(node: ast.ClassDef, name: str) -> bool:
    for child in ast.walk(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child.name == name:
            return True
        if isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name) and child.target.id == name:
            return True
        if isinstance(child, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in child.targets):
            return True
    return False


def _resolve_symbol(dotted: str) -> bool | None:
    """True/False when ``dotted`` names something in rag_eval (found or not); None when it
    is not a rag_eval name at all (a column such as ``metadata.trace``, a library's name)."""
    if dotted in FOREIGN:
        return None
    dotted = dotted.replace("/", ".").removesuffix(".py")
    if dotted.startswith("rag_eval."):
        dotted = dotted[len("rag_eval."):]
    parts = dotted.split(".")
    if parts[0] not in ROOMS:
        return None
    for cut in range(len(parts), 0, -1):
        tree = _module_tree(".".join(["rag_eval", *parts[:cut]]))
        if tree is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        node = _top_names(tree).get(rest[0])
        if node is None:
            return False
        if len(rest) > 1 and isinstance(node, ast.ClassDef):
            return _class_has(node, rest[1])
        return True
    return False


def _symbols(text: str) -> set[str]:
    found = set()
    for code in CODE.findall(text):
        code = code.strip()
        match = SYMBOL.match(code)
        if match and not re.search(r"\.(py|md|toml|yaml|yml|json|jsonl|sql|sqlite|db|txt|csv|parquet|html)$", match.group(1)):
            found.add(match.group(1))
    return found


def test_every_symbol_the_docs_name_exists():
    missing = [f"{doc}: {symbol}" for doc, text in _doc_texts() for symbol in sorted(_symbols(text))
               if _resolve_symbol(symbol) is False]
    assert missing == []


@functools.cache
def _functions() -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(node.name, []).append(node)
    return out


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    return names | ({a.vararg.arg} if a.vararg else set()) | ({a.kwarg.arg} if a.kwarg else set())


def test_every_signature_the_docs_write_out_matches_the_code():
    """``name(a, b, *, c=None)`` in backticks, for a function rag_eval defines: each named
    parameter is one of the function's (any definition of that name)."""
    wrong = []
    for doc, text in _doc_texts():
        pictures = [call for block in PICTURE.findall(text) for call in BARE_CALL.findall(block)]
        for code in [*CODE.findall(text), *pictures]:
            match = CALL.match(code.strip())
            if not match or match.group(1) not in _functions():
                continue
            params = [p.strip().split("=")[0].split(":")[0].strip() for p in match.group(2).split(",")]
            params = [p.lstrip("*") for p in params if p and p not in ("*", "/", "...", "…")]
            if any(re.fullmatch(r"[a-z]+(?: [a-z]+)+", p) for p in params):
                wrong.append(f"{doc}: {code} (parameters in words)")  # ``build_record(item, judge result)``
                continue
            if not params or not all(p.isidentifier() for p in params):
                continue  # a call with values (``evaluate(df)``), not a signature
            if not any(set(params) <= _parameters(fn) for fn in _functions()[match.group(1)]):
                if any(set(params) & _parameters(fn) for fn in _functions()[match.group(1)]):
                    wrong.append(f"{doc}: {code}")
    assert wrong == []


@pytest.mark.parametrize("name", [".importlinter", "README.md", "CONTRIBUTING.md", "tests/test_layering.py"])
def test_no_file_points_outside_the_repository(name):
    assert "../shared/DESIGN" not in (ROOT / name).read_text(encoding="utf-8")


def test_nothing_in_the_repository_names_the_design_file_outside_it():
    offenders = []
    for path in [*ROOT.glob("*.md"), *ROOT.glob(".*"), *(ROOT / "docs").glob("*.md"),
                 *(p for d in ("rag_eval", "tests", "bench", "scripts", "pages") for p in (ROOT / d).rglob("*.py"))]:
        if path.is_file() and path != Path(__file__) and "shared/DESIGN.md" in path.read_text(encoding="utf-8",
                                                                                              errors="replace"):
            offenders.append(path.relative_to(ROOT).as_posix())
    assert offenders == []


def test_the_checks_find_what_they_look_for():
    """Guard against a pattern that matches nothing."""
    text = "see `rag_eval/runs/engine.py`, `runs/store.py`, `runs/records.build_record`, `schema.NO_SUCH_NAME`"
    assert {"rag_eval/runs/engine.py", "runs/store.py"} <= _paths(text)
    assert not _resolve_path("runs/store.py") and _resolve_path("runs/store/")
    assert _resolve_symbol("runs/records.build_record") is True
    assert _resolve_symbol("schema.NO_SUCH_NAME") is False
    assert _resolve_symbol("metadata.trace") is None
