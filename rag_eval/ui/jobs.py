"""Long work off the script thread, so a page can show progress, an ETA and a Cancel
button while it runs.

A :class:`Job` runs one function in a daemon thread with a progress callback and a
cancel event; the page keeps the job in session state and redraws from it (a
fragment that reruns every second). The thread never touches Streamlit.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)  # a job is itself, not its fields: kept in a weak set
class Job:
    """One background task and what the page needs to draw it.

    A job has two stages: ``preparing`` until the work reports its first progress (for a
    run, :func:`rag_eval.runs.engine.evaluate` reports ``0/N`` once the judge has started:
    the local judge loads its encoder then, ~19 s on a cold server), then ``working`` with
    ``done/total``. The ETA counts from the second stage only, so a slow warm-up neither
    reads "estimating…" for its whole length nor inflates the time left."""

    label: str
    done: int = 0
    total: int = 0
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None
    result: Any = None
    error: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    preparing: str = "preparing"
    working: str = "working"
    working_since: tuple[float, int] | None = None  # (time, items done) at the first progress report
    waiting_on: Callable[[], str | None] | None = None  # the rate limit the work waits on now, if any

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    def eta_s(self, now: float | None = None) -> float | None:
        """Seconds left at the rate since the work stage began (since the job started when
        no progress was reported); None before an item is done in it."""
        since, done_then = self.working_since or (self.started, 0)
        if self.done <= done_then or not self.total or self.finished is not None:
            return None
        elapsed = (now or time.perf_counter()) - since
        return elapsed / (self.done - done_then) * (self.total - self.done)

    def progress(self, done: int, total: int) -> None:
        if self.working_since is None:
            self.working_since = (time.perf_counter(), done)
        self.done, self.total = done, total

    def status_text(self, now: float | None = None) -> str:
        """The stage and how far it is: "warming up the judge…", "judging 8/20 · 3s left"."""
        if self.working_since is None:
            return f"{self.preparing}…"
        eta = self.eta_s(now)
        waiting = self.waiting_on() if self.waiting_on is not None else None
        return (f"{self.working} {self.done}/{self.total}" + (f" · {format_eta(eta)}" if eta is not None else "")
                + (f" · waiting on {waiting}" if waiting else ""))

    def wait(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)


_jobs: weakref.WeakSet[Job] = weakref.WeakSet()  # every job started in this process and still referenced


def running_jobs() -> list[Job]:
    """The jobs of this process whose thread still works (any page, any visitor)."""
    return [job for job in list(_jobs) if job.running]


def stop_all(timeout_s: float = 120.0) -> list[Job]:
    """Cancel every running job and wait up to ``timeout_s`` in all for their threads;
    the jobs still running then. A job's thread holds the embedded store (``lease``) and
    reads the process's settings as it goes: a server shutting down, or a test handing
    the process to the next one, stops them first."""
    jobs = running_jobs()
    for job in jobs:
        job.cancel.set()
    deadline = time.monotonic() + timeout_s
    for job in jobs:
        job.wait(max(0.0, deadline - time.monotonic()))
    return running_jobs()


def start_job(label: str, work: Callable[[Callable[[int, int], None], threading.Event], Any], total: int = 0,
              preparing: str = "preparing", working: str = "working",
              waiting_on: Callable[[], str | None] | None = None) -> Job:
    """Run ``work(progress, cancel)`` in a daemon thread; its return value becomes
    ``job.result`` and any exception ``job.error`` (message only). ``total``, when the
    caller knows it, is the progress bar's length from the start; ``preparing`` and
    ``working`` name the two stages (see :class:`Job`); ``waiting_on()`` names the rate
    limit the work waits on, shown beside the time left."""
    job = Job(label, total=total, preparing=preparing, working=working, waiting_on=waiting_on)

    def target() -> None:
        from rag_eval.rag.store import lease

        try:
            with lease():  # the embedded store is released when the job ends
                job.result = work(job.progress, job.cancel)
        except Exception as exc:  # noqa: BLE001 - the page shows it as a message
            job.error = str(exc) or type(exc).__name__
        finally:
            job.finished = time.perf_counter()

    job.thread = threading.Thread(target=target, name=f"rag-eval-job:{label}", daemon=True)
    _jobs.add(job)
    job.thread.start()
    return job


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "estimating…"
    if seconds < 60:
        return f"{seconds:.0f}s left"
    return f"{seconds / 60:.1f} min left"
