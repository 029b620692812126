"""The Python code blocks of the README and docs/python-api.md run as written (issue 42,
item 7): each file's blocks, in order, in one fresh interpreter, in an empty folder with
the test's data directory (the session's exported models shared), offline (no key, no endpoint: the local judge), against the source
tree. A block that stops working fails here, not in a reader's notebook."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(doc: Path) -> str:
    return "\n".join(BLOCK.findall(doc.read_text(encoding="utf-8")))


@pytest.mark.parametrize("doc", ["README.md", "docs/python-api.md"])
def test_python_blocks_run_as_written(doc, tmp_path):
    code = python_blocks(ROOT / doc)
    assert code.strip(), f"{doc} has no Python block"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAG_EVAL_LLM_"))}
    env.update(HF_HUB_OFFLINE="1",  # RAG_EVAL_HOME: the test's (conftest)
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    (tmp_path / "blocks.py").write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, "blocks.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"{doc}:\n{done.stderr[-3000:]}"
