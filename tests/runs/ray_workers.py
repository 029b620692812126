"""A Ray actor body for the tests: every chunk kills its worker process (importable, so
Ray workers can load it)."""

from __future__ import annotations

import os
from typing import Any


class CrashingWorker:
    def __init__(self, *args: Any) -> None:
        pass

    def judge_chunk(self, items: list) -> list:
        os._exit(1)

    def ping(self) -> int:
        return os.getpid()
