"""A run killed with ``kill -9`` does not stay "running" forever: it shows as
"interrupted" (its process no longer holds the run's lock), and resumes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness.run_columns import set_run_columns
from rag_eval.runs.liveness import RunLock, is_alive
from rag_eval.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys, time
from rag_eval.runs.store import RunStore
store = RunStore(sys.argv[1])
print(store.create_run({"name": "victim"}, name="victim", n_items=3), flush=True)
time.sleep(600)
"""


def test_a_killed_run_shows_as_interrupted(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, db], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        run_id = proc.stdout.readline().strip()
        store = RunStore(db)
        assert store.get_run(run_id)["status"] == "running"  # its process is alive
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert store.get_run(run_id)["status"] == "interrupted"
    assert [r["status"] for r in store.list_runs()] == ["interrupted"]
    store.claim_run(run_id, lease_s=-1)  # resumed here (its holder is dead: no lease to wait out)
    assert store.get_run(run_id)["status"] == "running"
    store.finish_run(run_id)
    assert store.get_run(run_id)["status"] == "finished"


def test_lock_semantics(tmp_path):
    db = str(tmp_path / "x.sqlite")
    assert is_alive(db, "r1") is None  # no lock file: unknown (an older run)
    lock = RunLock(db, "r1")
    assert lock.acquire() and is_alive(db, "r1") is True
    lock.release(remove=False)
    assert is_alive(db, "r1") is False
    assert is_alive(":memory:", "r1") is None


def test_runs_in_this_process_stay_running(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.create_run({"name": "x"})
    assert store.get_run(run_id)["status"] == "running"
    store.finish_run(run_id, "cancelled")
    assert store.get_run(run_id)["status"] == "cancelled"
    assert not list((tmp_path / "runs.sqlite.locks").glob("*.lock"))


def test_a_killed_run_shows_interrupted_with_its_silence_on_both_backends(store_url):
    """SQLite knows at once (the lock file); on both backends, once the holder's heartbeat
    is older than the 60 s lease the run reads ``interrupted (no heartbeat for N s)``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, store_url], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        run_id = proc.stdout.readline().strip()
        store = RunStore(store_url)
        assert store.get_run(run_id)["status"] == "running"  # its process is alive and beating
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    if store.backend == "sqlite":
        assert store.get_run(run_id)["status"] == "interrupted"
        assert store.get_run(run_id)["status_detail"].startswith("its process is gone; no heartbeat for")
    else:
        assert store.get_run(run_id)["status"] == "running"  # within its lease, a server cannot tell yet
    # 90 s of silence later (the heartbeat aged rather than waited for)
    set_run_columns(store, run_id,
                    heartbeat_at=(datetime.now(UTC) - timedelta(seconds=90)).isoformat(timespec="seconds"))
    for run in (store.get_run(run_id), store.list_runs()[0]):
        assert run["status"] == "interrupted"
        assert re.search(r"no heartbeat for (9\d|1\d\d) s$", run["status_detail"]), run["status_detail"]
    store.claim_run(run_id, lease_s=-1)  # resumed here (its holder is dead: no lease to wait out), whatever the old heartbeat said
    assert store.get_run(run_id)["status"] == "running" and "status_detail" not in store.get_run(run_id)
    store.finish_run(run_id)
    assert store.get_run(run_id)["status"] == "finished"
    store.close()
