"""Incremental imports from a real Phoenix lose nothing and repeat nothing (issue 33, item 11).

An application sends 20 traces and they are imported; it then exports 5 more whose spans started
two minutes earlier (a batch exporter's retry, a long trace, a skewed clock), i.e. before the
state's watermark: the next run imports exactly those 5. A trace caught half-way (its retriever
span in Phoenix, its root still open) is written with its status, then written again, complete,
once its root has arrived, and never after that. A project of its own, so the other trace tests'
traffic does not mix in.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from rag_eval.traces.importer import ImportState, SeenTrace
from tests.traces.conftest import rag_eval, run_traced_app, traced_app_command, wait_for_traces

PROJECT = "late-traces"
NO_MODEL = "http://127.0.0.1:9/v1"  # the paging traces call no model


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _trace_spans(url: str, trace_id: str) -> int:
    response = httpx.get(f"{url}/v1/projects/{PROJECT}/spans", params={"trace_id": trace_id, "limit": 100},
                         timeout=30)
    return 0 if response.status_code == 404 else len(response.json()["data"])


def test_late_and_half_imported_traces_come_with_the_next_run_and_only_once(phoenix_server, tmp_path):
    state = tmp_path / "state.json"

    def incremental(name: str) -> tuple[list[dict], str]:
        out = tmp_path / f"{name}.jsonl"
        done = rag_eval("traces", "import", "--phoenix", phoenix_server.url, "--project", PROJECT, "--state",
                        str(state), "--out", str(out))
        assert done.returncode == 0, done.stderr
        return _rows(out), done.stdout

    first = run_traced_app(phoenix_server, NO_MODEL, tmp_path / "first.otlp", PROJECT, 20, "--only-paging")
    wait_for_traces(phoenix_server, PROJECT, 20)
    rows, _ = incremental("first")
    assert {r["id"] for r in rows} == set(first.kinds) and len(rows) == 20
    watermark = datetime.fromisoformat(json.loads(state.read_text())["watermark"])

    late = run_traced_app(phoenix_server, NO_MODEL, tmp_path / "late.otlp", PROJECT, 5, "--only-paging",
                          "--shift-seconds", "-120")
    wait_for_traces(phoenix_server, PROJECT, 25)
    rows, stdout = incremental("late")
    assert {r["id"] for r in rows} == set(late.kinds) and len(rows) == 5, stdout
    assert all(datetime.fromisoformat(r["metadata"]["trace"]["start_time"]) < watermark for r in rows)
    assert all(r["metadata"]["trace"]["status"] == "ok" and "update_of" not in r["metadata"]["trace"] for r in rows)
    assert "20 trace(s) imported before were skipped" in stdout

    # a trace caught half-way: its retriever span is in Phoenix, its root still open
    release = tmp_path / "release"
    held_app = subprocess.Popen(traced_app_command(phoenix_server, NO_MODEL, tmp_path / "held.otlp", PROJECT, 0,
                                                   "--only-paging", "--hold", str(release)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "OTEL_SDK_DISABLED": "false"})
    try:
        assert held_app.stdout is not None
        held = json.loads(held_app.stdout.readline())["held"]
        deadline = time.monotonic() + 120
        while _trace_spans(phoenix_server.url, held) < 1:
            assert time.monotonic() < deadline, "Phoenix never stored the held trace's retriever span"
            time.sleep(0.5)
        rows, stdout = incremental("half")
        assert [r["id"] for r in rows] == [held], stdout
        assert rows[0]["metadata"]["trace"]["status"] == "orphan_parents" and "response" not in rows[0]
        again, _ = incremental("half-again")
        assert again == []  # unchanged: not written twice
    finally:
        release.touch()
        _, err = held_app.communicate(timeout=120)
    assert held_app.returncode == 0, err
    wait_for_traces(phoenix_server, PROJECT, 26)
    rows, stdout = incremental("complete")
    assert [r["id"] for r in rows] == [held], stdout
    trace = rows[0]["metadata"]["trace"]
    assert trace["status"] == "ok" and rows[0]["response"] == "Held is a fact."
    assert trace["update_of"] == {"status": "orphan_parents", "spans": 1}
    assert "1 trace(s) imported before came again with more spans" in stdout

    rows, stdout = incremental("nothing-new")
    assert rows == []
    assert "26 trace(s) imported before were skipped" in stdout
    saved = json.loads(state.read_text())
    assert len(saved["traces"]) == 26 and saved["traces"][held][1:] == [2, "ok"]


def test_state_is_bounded_to_two_lookback_windows(tmp_path) -> None:
    """What the state remembers: traces started within 2 x lookback of the watermark; the
    watermark never runs ahead of the importer's clock (one trace from a fast clock cannot move
    the window past everyone else's)."""
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    state = ImportState("http://phoenix", "p")
    for hours_ago in range(10):
        state.remember(f"t{hours_ago}", now - timedelta(hours=hours_ago), 2, "ok")
    state.advance([now + timedelta(hours=3), now - timedelta(minutes=5)], now, timedelta(hours=1))
    assert state.watermark == now  # capped at the clock
    assert state.horizon == now - timedelta(hours=2)
    assert sorted(state.traces) == ["t0", "t1", "t2"]
    state.save(tmp_path / "state.json")
    loaded = ImportState.load(tmp_path / "state.json", "http://phoenix", "p")
    assert loaded.traces == state.traces and loaded.watermark == now and loaded.horizon == state.horizon


def test_a_version_1_state_file_still_loads(tmp_path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(json.dumps({"url": "http://phoenix", "project": "p", "latest_start": "2026-11-28T12:00:00+00:00",
                                "imported": ["a", "b"]}))
    state = ImportState.load(path, "http://phoenix", "p")
    assert state.traces["a"] == SeenTrace(datetime(2026, 11, 28, 12, tzinfo=UTC).timestamp(), None, "ok")
    assert state.watermark == datetime(2026, 11, 28, 12, tzinfo=UTC)
    with pytest.raises(ValueError, match="another --state"):
        ImportState.load(path, "http://phoenix", "q")

