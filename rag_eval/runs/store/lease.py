"""Who holds a running run: this process's claims, kept alive by a heartbeat thread, and
(on SQLite) a lock file the operating system releases when the process ends.

Resume is an atomic claim (:meth:`RunStore.claim_run`): one conditional ``UPDATE`` that
succeeds for exactly one of several processes racing to resume a run; the winner keeps a
heartbeat while it runs, so a run whose process died can be claimed again once its lease
has lapsed.

A run that says ``running`` but whose process is gone (killed, crashed, host lost) is
shown as ``interrupted`` with the reason in ``status_detail``: on both backends once its
heartbeat is older than the lease (``no heartbeat for N s``), and on SQLite at once when
nobody holds its lock file beside the store (:mod:`rag_eval.runs.liveness`); ``--resume``
continues it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from rag_eval.runs.liveness import RunLock, lock_path
from rag_eval.runs.liveness import is_alive as run_id_alive

LEASE_S = 60.0  # a claimed run whose heartbeat is older than this may be claimed by another process
HEARTBEAT_S = 15.0


def age_s(stamp: Any) -> float | None:
    """Seconds since an ISO timestamp the store wrote, or None when there is none."""
    if not stamp:
        return None
    try:
        then = datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - then).total_seconds())


class Holdings:
    """The runs this process holds. ``beat(run_id)`` refreshes one run's heartbeat in the
    database; it is called every :data:`HEARTBEAT_S` from a daemon thread while any run is
    held, and the thread ends when none is. ``path`` is the SQLite file (lock files go
    beside it), None for a server."""

    def __init__(self, beat: Callable[[str], None], path: str | None) -> None:
        self._beat_one = beat
        self.path = path
        self._lock = threading.Lock()
        self._claimed: set[str] = set()
        self._locks: dict[str, RunLock] = {}
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None

    # ---------------------------------------------------------------- claims + heartbeat
    def hold(self, run_id: str) -> None:
        with self._lock:
            self._claimed.add(run_id)
            if self.thread is None:  # the beating thread clears this, under the lock, as it exits
                self._stop.clear()
                self.thread = threading.Thread(target=self._beat, name="run-store-heartbeat", daemon=True)
                self.thread.start()

    def release(self, run_id: str) -> None:
        with self._lock:
            self._claimed.discard(run_id)

    def holds(self, run_id: str) -> bool:
        return run_id in self._claimed

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with self._lock:
                claimed = list(self._claimed)
                if not claimed:
                    self.thread = None
                    return
            for run_id in claimed:
                try:
                    self._beat_one(run_id)
                except Exception:  # noqa: BLE001 - a missed beat only shortens the lease; the run goes on
                    time.sleep(1)

    def stop(self) -> None:
        self._stop.set()
        thread = self.thread
        if thread is not None:
            thread.join(timeout=5)

    # ---------------------------------------------------------------- lock files (SQLite)
    def lock(self, run_id: str) -> None:
        if self.path is None:
            return
        self._locks.setdefault(run_id, RunLock(self.path, run_id)).acquire()

    def unlock(self, run_id: str) -> None:
        lock = self._locks.pop(run_id, None)
        if lock is not None:
            lock.release()

    def forget(self, run_id: str) -> None:
        """A deleted run: let go of it, and remove its lock file when its process is gone."""
        self.release(run_id)
        self.unlock(run_id)
        stale = lock_path(self.path, run_id) if self.path is not None else None
        if stale is not None and self.path is not None and run_id_alive(self.path, run_id) is False:
            stale.unlink(missing_ok=True)

    # ---------------------------------------------------------------- others' runs
    def stale(self, run: Mapping[str, Any]) -> str | None:
        """Why a run stored as ``running`` is not running any more, or None while it may
        be. On both backends: its holder's heartbeat is older than the lease; on SQLite
        also, at once: nobody holds its lock file (the process ended)."""
        run_id = str(run["id"])
        if self.holds(run_id):
            return None  # this process is running it
        alive = run_id_alive(self.path, run_id) if self.path is not None else None
        if alive is True:
            return None
        age = age_s(run.get("heartbeat_at"))
        silent = f"no heartbeat for {age:.0f} s" if age is not None else "no heartbeat"
        if alive is False:
            return f"its process is gone; {silent}"
        if age is not None and age > LEASE_S:
            return silent
        return None  # unknown (an older run without a heartbeat) or within its lease
