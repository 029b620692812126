"""The dashboard and the CLI side by side on the embedded Qdrant store (two processes).

The dashboard (driven here by Streamlit's AppTest, in this process) holds the store only
while a page runs or a job works (``rag_eval.rag.store.lease``); a command in another
process then opens it. While one process holds it, the other waits, then gives a clear
"busy, retry" message (exit 3); two writers at once never corrupt the store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "dashboard.py")


def _cli(*args: str, wait_s: float = 60, **extra_env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAG_EVAL_QDRANT_WAIT_S": str(wait_s), **extra_env}
    return subprocess.run([sys.executable, "-c", "from rag_eval.cli import cli; cli()", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def _docs(folder: Path, name: str, n: int) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{name}{i}.txt").write_text(f"Document {i} about {name}. The {name} number is {i}.", encoding="utf-8")
    return folder


def test_cli_works_while_the_dashboard_is_open(tmp_path):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/corpus.py").run()  # the page opened the store to list collections
    assert not at.exception
    ingest = _cli("ingest", str(_docs(tmp_path / "notes", "note", 3)), "--collection", "notes")
    assert ingest.returncode == 0, ingest.stderr
    ask = _cli("ask", "What is the note number?", "--collection", "notes", "--no-judge")
    assert ask.returncode == 0, ask.stderr
    from rag_eval.ui import data

    data.refresh()  # the dashboard's cached readers expire (TTL) or are refreshed by the user
    at.run()  # the dashboard sees what the CLI wrote
    assert not at.exception
    assert "notes" in set(at.dataframe[0].value["collection"])


def test_a_busy_store_is_a_clear_message_not_a_crash(tmp_path):
    from rag_eval.rag.store import lease, list_collections

    with lease():
        list_collections()  # the dashboard in the middle of an operation
        busy = _cli("ingest", str(_docs(tmp_path / "d", "x", 1)), "--collection", "x", wait_s=0.5)
    assert busy.returncode == 3, busy.stderr
    assert "busy" in busy.stderr and "retry" in busy.stderr and "Traceback" not in busy.stderr
    again = _cli("ingest", str(tmp_path / "d"), "--collection", "x")  # released: it works now
    assert again.returncode == 0, again.stderr


def test_two_writers_at_once_do_not_corrupt_the_store(tmp_path):
    env = {**os.environ, "RAG_EVAL_QDRANT_WAIT_S": "300"}
    code = "from rag_eval.cli import cli; cli()"
    procs = [subprocess.Popen([sys.executable, "-c", code, "ingest", str(_docs(tmp_path / name, name, 5)),
                               "--collection", name], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in ("alpha", "beta")]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-500:] for o in outs]
    from rag_eval.rag.store import lease, list_collections

    with lease():
        counts = {c.name: c.points for c in list_collections()}
    assert counts == {"alpha": 5, "beta": 5}
