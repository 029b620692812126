"""Background jobs: result, error message and cancel reach the page's state."""

from __future__ import annotations

from rag_eval.ui.jobs import Job, format_eta, start_job


def test_job_result_and_progress():
    def work(progress, cancel):
        for i in range(1, 4):
            progress(i, 3)
        return "run-1"

    job = start_job("t", work)
    job.wait(10)
    assert not job.running and job.result == "run-1" and job.error is None
    assert job.fraction == 1.0 and job.eta_s() is None


def test_job_error_is_a_message():
    def work(progress, cancel):
        raise ValueError("collection 'x' does not exist")

    job = start_job("t", work)
    job.wait(10)
    assert job.error == "collection 'x' does not exist" and job.result is None


def test_cancel_event_reaches_the_work():
    def work(progress, cancel):
        cancel.wait(10)
        return "stopped" if cancel.is_set() else "timeout"

    job = start_job("t", work)
    job.cancel.set()
    job.wait(10)
    assert job.result == "stopped"


def test_eta_from_rate():
    job = Job("t", done=2, total=6, started=0.0)
    assert job.eta_s(now=4.0) == 8.0
    assert format_eta(None) == "estimating…" and format_eta(30) == "30s left" and format_eta(120) == "2.0 min left"
