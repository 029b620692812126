"""Nothing secret is written to the run store.

Before any text or JSON is stored, the values of the configured secrets
(:func:`rag_eval.config.configured_secrets`: the one list of secret settings, the
password of ``RAG_EVAL_DB_URL``, every setting whose name looks secret, visitors'
session keys) and the password of the store's own URL are replaced by ``***``, so an API key that slipped into an error message never
reaches the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rag_eval.config import configured_secrets, redact


def store_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """The secrets to keep out of the store: the configured ones and ``extra`` (the
    password of the store's own URL)."""
    values: list[str | None] = [*configured_secrets(), *extra]
    return [s for s in values if s]


def clean(text: str | None, secrets: Iterable[str]) -> str | None:
    """``text`` redacted, without NUL characters (PostgreSQL TEXT cannot hold them; SQLite
    can, but the two backends must store the same)."""
    return redact(text, *secrets).replace("\x00", "") if text else text


def dumps(value: Any, secrets: Iterable[str]) -> str:
    """``value`` as JSON, redacted. A record is a tree (built from JSON-like data), so the
    encoder's check for circular references, ~11% of its time, is skipped."""
    return redact(json.dumps(value, ensure_ascii=False, default=str, check_circular=False), *secrets)
