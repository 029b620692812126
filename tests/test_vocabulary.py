"""One vocabulary (docs/architecture.md, "Glossary"): an item's own id is ``id`` on every type,
key and column that carries an item or its outcome; ``item_id`` is only a reference to an item
from something that is not one (a human label set, a trace annotation, a variable); ``row_id``
is retired. This test reads the code and the docs, so a retired name cannot come back unseen."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = [*sorted((ROOT / "rag_eval").rglob("*.py")), *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py",
        *sorted((ROOT / "harness").glob("*.py")), *sorted((ROOT / "scripts").glob("*.py")),
        *sorted((ROOT / "bench").glob("*.py"))]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
        *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "benchmarks.md")]  # benchmarks: a dated log

RETIRED = re.compile(r"\brow_ids?\b")
#: where ``"item_id"`` is a key: the modules of things that refer to an item (label sets, annotations)
#: and the revisions that made and renamed the old column
REFERENCES = {"rag_eval/labels/", "rag_eval/runs/store/human_labels.py", "rag_eval/runs/store/tables.py",
              "rag_eval/runs/store/migrations/", "rag_eval/traces/annotate.py", "rag_eval/cli/labels.py",
              "pages/judges.py"}
#: stored data written before the rename, read as it was written (one place each)
LEGACY_READS = {("rag_eval/metrics/diagnosis.py", "row_ids")}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _is_reference_module(name: str) -> bool:
    return any(name == r or (r.endswith("/") and name.startswith(r)) for r in REFERENCES)


def test_no_item_type_has_an_item_id_or_row_id_field():
    found = []
    for path in CODE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                            and stmt.target.id in {"item_id", "row_id"}:
                        found.append(f"{_relative(path)}:{stmt.lineno} {node.name}.{stmt.target.id}")
            elif isinstance(node, ast.Attribute) and node.attr in {"item_id", "row_id", "row_ids"}:
                # a table's column object (``human_labels.c.item_id``) is the label set's reference
                if not (isinstance(node.value, ast.Attribute) and node.value.attr == "c"):
                    found.append(f"{_relative(path)}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.keyword) and node.arg in {"row_id"}:
                found.append(f"{_relative(path)}:{node.value.lineno} {node.arg}=")
    assert not found, "an item's id is `id` (docs/architecture.md, Glossary):\n" + "\n".join(found)


def test_retired_names_are_not_in_the_code():
    found = []
    for path in CODE:
        name = _relative(path)
        for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if token.type not in (tokenize.NAME, tokenize.STRING):
                continue
            for word in RETIRED.findall(token.string):
                if (name, word) not in LEGACY_READS:
                    found.append(f"{name}:{token.start[0]} {token.string[:60]}")
            if token.type == tokenize.STRING and re.fullmatch(r"[rbuf]*(['\"])item_id\1", token.string) \
                    and not _is_reference_module(name):
                found.append(f"{name}:{token.start[0]} the key \"item_id\" (an item's key is \"id\")")
    assert not found, "retired names (docs/architecture.md, Glossary):\n" + "\n".join(found)


def test_retired_names_are_not_in_the_docs():
    found = []
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("| retired |"):
                continue  # the glossary's own list of them
            if RETIRED.search(line) or ("item_id" in line and not re.search(r"label|annotat|reference", line)):
                found.append(f"{_relative(path)}:{number}: {line.strip()[:100]}")
    assert not found, "retired names in the docs:\n" + "\n".join(found)


def test_the_glossary_lists_the_retired_names():
    glossary = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    retired = next(line for line in glossary.splitlines() if line.startswith("| retired |"))
    assert "`row_id`" in retired and "`item_id`" in retired and "tests/test_vocabulary.py" in retired
