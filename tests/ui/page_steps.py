"""Steps on the dashboard that several page tests share (the Batch page's run of the
labelled sample, the check that a page drew no exception or error)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
SAMPLE = "RAGBench labelled sample (judge the given responses)"


def no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def batch_of_sample(at: AppTest, rows: int) -> str:
    """On Batch, judge the first ``rows`` rows of the labelled sample; wait for the job and
    return the run's id."""
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value(SAMPLE).run()
    no_failure(at)
    at.number_input(key="batch.limit").set_value(rows).run()
    at.button(key="batch.run").click().run()
    job = at.session_state["batch.job"]
    job.wait(timeout=600)
    assert job.error is None, job.error
    at.run()
    no_failure(at)
    return str(at.session_state["batch.run_id"])
