"""Where the run store is, and how to show that without its password.

``RAG_EVAL_DB_URL`` (any SQLAlchemy URL, e.g. ``postgresql+psycopg://user:password@host/db``)
puts runs on a server a team shares; otherwise ``RAG_EVAL_DB`` (a file path), else
``data_dir()/runs.sqlite``.
"""

from __future__ import annotations

import os
from pathlib import Path

from rag_eval.config import data_dir, redact, setting


def default_db_path() -> Path:
    env = os.environ.get("RAG_EVAL_DB")
    return Path(env) if env else data_dir() / "runs.sqlite"


def default_db_location() -> str:
    """``RAG_EVAL_DB_URL`` if set, else the SQLite file path (``RAG_EVAL_DB`` or the data dir)."""
    return setting("RAG_EVAL_DB_URL") or str(default_db_path())


def is_url(location: str) -> bool:
    return "://" in location


def url_password(location: str | None) -> str | None:
    """The password inside a database URL (to redact it), else None."""
    if not location or not is_url(location):
        return None
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(location).password
    except ArgumentError:
        return None


def display_location(location: str) -> str:
    """A store location fit for display: a URL with its password hidden."""
    if not is_url(location):
        return location
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(location).render_as_string(hide_password=True)
    except ArgumentError:
        password = url_password(location)
        return redact(location, password) if password else "<unparsable database URL>"
