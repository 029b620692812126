"""A content-addressed on-disk cache of LLM answers.

The key is the SHA-256 of the canonical JSON of everything that determines an answer
(model, endpoint, messages, parameters, namespace); never the API key. Each entry is
one JSON file under ``<dir>/<2 hex>/<hash>.json`` written atomically (temp file +
``os.replace``), so concurrent writers (threads, processes, two CLI runs) cannot leave
a torn file, and an interrupted batch resumes from whatever was written.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import threading
from pathlib import Path
from typing import Any

_counter = itertools.count()


def cache_key(payload: dict[str, Any]) -> str:
    """Stable hash of ``payload`` (key order and whitespace do not matter)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LLMCache:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._made: set[Path] = set()  # shard folders known to exist (saves a syscall per put)

    def _path(self, key: str) -> Path:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or None when absent or unreadable (a corrupt entry is a miss)."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                value = json.load(fh)
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        if path.parent not in self._made:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        data = json.dumps(value, ensure_ascii=False).encode("utf-8")  # one write, not many
        # A name unique to this process, thread and call: O_EXCL never collides with
        # another writer, and os.replace makes the finished file appear atomically.
        tmp = path.parent / f".tmp-{os.getpid()}-{threading.get_ident()}-{next(_counter)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def __contains__(self, key: str) -> bool:
        return self._path(key).is_file()

    def __len__(self) -> int:
        if not self.directory.is_dir():
            return 0
        return sum(1 for _ in self.directory.glob("??/*.json"))
