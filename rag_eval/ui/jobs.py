"""Long work off the script thread, so a page can show progress, an ETA and a Cancel
button while it runs.

A :class:`Job` runs one function in a daemon thread with a progress callback and a
cancel event; the page keeps the job in session state and redraws from it (a
fragment that reruns every second). The thread never touches Streamlit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Job:
    """One background task and what the page needs to draw it."""

    label: str
    done: int = 0
    total: int = 0
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None
    result: Any = None
    error: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    def eta_s(self, now: float | None = None) -> float | None:
        """Seconds left at the rate so far; None before the first item is done."""
        if not self.done or not self.total or self.finished is not None:
            return None
        elapsed = (now or time.perf_counter()) - self.started
        return elapsed / self.done * (self.total - self.done)

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def wait(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)


def start_job(label: str, work: Callable[[Callable[[int, int], None], threading.Event], Any], total: int = 0) -> Job:
    """Run ``work(progress, cancel)`` in a daemon thread; its return value becomes
    ``job.result`` and any exception ``job.error`` (message only). ``total``, when the
    caller knows it, is shown from the start (``0/20``) instead of waiting for the
    first progress call."""
    job = Job(label, total=total)

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
    job.thread.start()
    return job


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "estimating…"
    if seconds < 60:
        return f"{seconds:.0f}s left"
    return f"{seconds / 60:.1f} min left"
