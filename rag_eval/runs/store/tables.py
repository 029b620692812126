"""The run store's tables as SQLAlchemy Core ``Table`` objects: what every query is
written against. They describe the schema at the newest migration
(``rag_eval/runs/store/migrations/versions``); a migration that changes a table changes
it here too (tests/runs/test_store.py compares the two on both backends).

Items are stored as one JSON record each (question, retrieved chunks with scores,
answer, labels, scores, status, error, tokens, cost, latency) plus indexed columns for
the fields queried directly. Timestamps are ISO-8601 text, as the first versions wrote them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, MetaData, Table, Text

metadata = MetaData()


def now() -> str:
    """The time as the store writes it (UTC, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


runs = Table(
    "runs", metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("finished_at", Text),
    Column("status", Text, nullable=False),
    Column("config_name", Text, nullable=False),
    Column("config_hash", Text, nullable=False),
    Column("config_json", Text, nullable=False),
    Column("collection", Text),
    Column("dataset_path", Text),
    Column("dataset_fingerprint", Text),
    Column("n_items", Integer, nullable=False, server_default="0"),
    Column("summary_json", Text),
    Column("error", Text),
    Column("meta_json", Text),
    Column("owner", Text),  # the process holding a running run (claims, heartbeat)
    Column("heartbeat_at", Text),
    Column("tags_json", Text),
    Column("note", Text),
    Index("runs_created", "created_at"),
    Index("runs_config", "config_hash"),
)

items = Table(
    "items", metadata,
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("id", Text, primary_key=True),  # the item's id (renamed from item_id: revision 0007)
    Column("position", Integer, nullable=False),
    Column("status", Text, nullable=False),
    Column("error", Text),
    Column("question", Text),
    Column("record_json", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    Index("items_status", "run_id", "status"),
    # a run's items in dataset order (every item read orders by position) from the index alone
    Index("items_position", "run_id", "position", "id"),
)

# Human label sets (rag_eval.labels): append-only, one row per save, beside the judge's
# labels in ``items`` (never overwriting them). ``run_id`` is a run's id or
# ``adhoc:<source>`` for rows reviewed outside a run (an Ask result, a dataset row).
human_labels = Table(
    "human_labels", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("run_id", Text, nullable=False),
    Column("item_id", Text, nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("record_json", Text, nullable=False),
    Index("human_labels_item", "run_id", "item_id", "reviewer"),
    sqlite_autoincrement=True,  # ids are never reused after a delete, as PostgreSQL's sequence
)
