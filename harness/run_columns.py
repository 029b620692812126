"""Age or rewrite a stored run's columns directly (a heartbeat 90 s old, a creation time
an hour earlier, a summary as an older version stored it), through the store's tables."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from rag_eval.runs.store import RunStore
from rag_eval.runs.store.tables import runs


def set_run_columns(store: RunStore, run_id: str, **values: Any) -> None:
    """``UPDATE runs SET <values> WHERE id = run_id``."""
    store.db.write(update(runs).where(runs.c.id == run_id).values(**values))
