"""Background jobs: result, error message and cancel reach the page's state."""

from __future__ import annotations

from rag_eval.ui.jobs import Job, format_eta, start_job


def test_job_result_and_progress():
    def work(progress, cancel):
        for i in range(1, 4):
            progress(i, 3)
        return "run-1"

    job = start_job("t", work)
    job.wait(120)  # the first job of a process imports the vector store (its lease): slow on a loaded machine
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


def test_progress_names_the_stage_and_counts_the_eta_from_the_work():
    """Issue 33: "0/20 · estimating…" for 19 s of judge warm-up, then "8/20 · 29s left" two
    seconds before the end. Now: the warm-up stage by name, then the judged rows, with an
    ETA from the judging alone."""
    job = Job("run", total=20, started=0.0, preparing="warming up the judge", working="judging")
    assert job.status_text(now=19.0) == "warming up the judge…"
    job.progress(0, 20)  # the judge has started: judging begins
    since = job.working_since[0]
    assert job.status_text(now=since + 0.5) == "judging 0/20"
    job.progress(8, 20)
    assert job.status_text(now=since + 1.0) == "judging 8/20 · 2s left"  # 8 rows a second, 12 left


def test_progress_names_the_rate_limit_it_waits_on():
    """Issue 41: the time left grew while Batch waited on the 60 requests/minute cap, unnamed."""
    waiting: list[str | None] = [None]
    job = Job("run", total=20, started=0.0, working="judging", waiting_on=lambda: waiting[0])
    job.progress(0, 20)
    since = job.working_since[0]
    job.progress(8, 20)
    assert job.status_text(now=since + 1.0) == "judging 8/20 · 2s left"
    waiting[0] = "the 60 requests/minute limit"
    assert job.status_text(now=since + 1.0) == "judging 8/20 · 2s left · waiting on the 60 requests/minute limit"
