"""Opening the Batch page loads neither the RAG pipeline's Qdrant client nor
scikit-learn (seconds of imports on a cold server): they load when a RAG dataset is
checked or run. No timing: a fresh interpreter runs the page's module-level imports and
reports which heavy libraries they loaded."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sklearn", "qdrant_client", "qdrant_edge", "torch", "onnxruntime", "ray")


def module_level_imports(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def test_batch_page_imports_no_pipeline_library():
    probe = module_level_imports(ROOT / "pages" / "batch.py") + (
        f"\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
