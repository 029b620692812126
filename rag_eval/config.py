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


def data_dir() -> Path:
    """Root of the workbench's own files (qdrant/, runs.sqlite, cache/, models/).
    ``RAG_EVAL_HOME`` overrides the platform default."""
    root = os.environ.get("RAG_EVAL_HOME") or platformdirs.user_data_dir(APP_NAME)
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


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
