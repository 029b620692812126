"""The dashboard shows a run whose process died as interrupted, with why, on SQLite
and on PostgreSQL alike (AppTest on the Runs page)."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamlit.testing.v1 import AppTest

from harness.run_columns import set_run_columns
from rag_eval.runs.store import RunStore, default_db_location
from tests.security.test_stale_runs import HOLDER, ROOT

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")


def test_runs_page_shows_a_silent_run_as_interrupted(dashboard_backend):
    location = default_db_location()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, location], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        run_id = proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait(timeout=30)
    store = RunStore(location)  # the killed holder's heartbeat, 75 s old (aged rather than waited for)
    set_run_columns(store, run_id,
                    heartbeat_at=(datetime.now(UTC) - timedelta(seconds=75)).isoformat(timespec="seconds"))
    store.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value.set_index("id")
    status = table.loc[run_id, "status"]
    # 75 s aged, plus however long this loaded machine took to get here
    assert status.startswith("interrupted (") and re.search(r"no heartbeat for (7[5-9]|[89]\d|1\d\d) s", status), status
