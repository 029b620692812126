"""Where things live and how to reach services: environment first, then
``.streamlit/secrets.toml``, then explicit arguments (callers pass flags last).

Secrets are read here and handed to adapters; nothing in this module logs them.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "rag-eval"
# Where a Hugging Face Space mounts its persistent storage (when the owner attaches it).
SPACE_STORAGE = Path("/data")


def on_space() -> bool:
    """Whether this runs on a Hugging Face Space (the platform sets ``SPACE_ID``)."""
    return bool(os.environ.get("SPACE_ID"))


def _space_storage() -> Path | None:
    """``/data/rag-eval`` on a Space with persistent storage attached (and writable), else None."""
    if on_space() and SPACE_STORAGE.is_dir() and os.access(SPACE_STORAGE, os.W_OK | os.X_OK):
        return SPACE_STORAGE / APP_NAME
    return None


def data_dir() -> Path:
    """Root of the workbench's own files (qdrant/, runs.sqlite, cache/, models/).
    ``RAG_EVAL_HOME`` overrides; on a Space with persistent storage it is ``/data/rag-eval``;
    otherwise the platform default under the user's home (on a Space: the ephemeral disk)."""
    root = os.environ.get("RAG_EVAL_HOME") or _space_storage() or platformdirs.user_data_dir(APP_NAME)
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir_note() -> str:
    """One line for the Overview page: where runs and collections are kept, and for how long."""
    where = f"`{data_dir()}`"
    if os.environ.get("RAG_EVAL_HOME"):
        return f"Runs, collections and caches are kept in {where} (RAG_EVAL_HOME)."
    if _space_storage() is not None:
        return f"Runs, collections and caches are kept in {where}, on this Space's persistent storage."
    if on_space():
        return (f"Runs, collections and caches are kept in {where}, on this Space's ephemeral disk: they are lost "
                "when the Space restarts (attach persistent storage to keep them under /data).")
    return f"Runs, collections and caches are kept in {where}."


def shared_data_dir() -> Path:
    """The shared datasets (RAGBench parquet, BEIR collection...). ``RAG_EVAL_SHARED_DATA``
    overrides the default ``../shared/data`` next to the project root."""
    env = os.environ.get("RAG_EVAL_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@lru_cache(maxsize=1)
def _secrets() -> dict[str, Any]:
    for candidate in (Path.cwd() / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"):
        if candidate.is_file():
            try:
                return tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                return {}
    return {}


def setting(name: str, default: str | None = None) -> str | None:
    """An environment variable, else a top-level key of ``.streamlit/secrets.toml``."""
    value = os.environ.get(name)
    if value:
        return value
    value = _secrets().get(name)
    return str(value) if value not in (None, "") else default


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret replaced, for error messages and logs."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
