"""Is a run that says "running" still running? A process that runs a run holds an exclusive lock on a
small file beside the run store (``<db>.locks/<run id>.lock``), which the operating system releases when
the process ends, however it ends (``kill -9`` included): a run stored as ``running`` whose lock nobody
holds was interrupted. POSIX ``flock`` only; elsewhere (and for in-memory stores) liveness is unknown and
the stored status is shown as it is.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

INTERRUPTED = "interrupted"


def lock_path(db_path: str, run_id: str) -> Path | None:
    if db_path == ":memory:" or fcntl is None:
        return None
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)
    return Path(f"{db_path}.locks") / f"{safe}.lock"


class RunLock:
    """Held by the process that runs ``run_id``; released by :meth:`release` or by the
    operating system when the process dies."""

    def __init__(self, db_path: str, run_id: str) -> None:
        self.path = lock_path(db_path, run_id)
        self._fh: IO[str] | None = None

    def acquire(self) -> bool:
        """Take the lock (False when another process holds it, or when unsupported)."""
        if self.path is None or fcntl is None or self._fh is not None:
            return self._fh is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held open while the run runs
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return True

    def release(self, remove: bool = True) -> None:
        if self._fh is None:
            return
        if remove and self.path is not None:
            self.path.unlink(missing_ok=True)
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        self._fh.close()
        self._fh = None


def is_alive(db_path: str, run_id: str) -> bool | None:
    """True: a process holds the run's lock; False: nobody does (the run was
    interrupted); None: unknown (no lock file: an older run, or no flock here)."""
    path = lock_path(db_path, run_id)
    if path is None or fcntl is None or not path.is_file():
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            return False
    except OSError:
        return None
