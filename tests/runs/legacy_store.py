"""Run stores as rag-eval left them before the schema moved to Alembic: the numbered
DDL steps of the old ``rag_eval/runs/store.py`` (``MIGRATIONS``, verbatim, recorded in
``schema_migrations``), so the tests can make a store at any old version on SQLite or
PostgreSQL and check that today's code opens, stamps and upgrades it.

``tests/data/run_store_v6.sql`` is a whole store (runs, items, human labels) written by
that code through its API and dumped with ``sqlite3 .iterdump``: :func:`load_dump`.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

DUMP_V6 = Path(__file__).resolve().parents[1] / "data" / "run_store_v6.sql"

LEGACY_STEPS: list[tuple[int, str]] = [
    (1, """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        config_name TEXT NOT NULL,
        config_hash TEXT NOT NULL,
        config_json TEXT NOT NULL,
        collection TEXT,
        dataset_path TEXT,
        dataset_fingerprint TEXT,
        n_items INTEGER NOT NULL DEFAULT 0,
        summary_json TEXT,
        error TEXT
    );
    CREATE INDEX runs_created ON runs(created_at);
    CREATE INDEX runs_config ON runs(config_hash);
    CREATE TABLE items (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        question TEXT,
        record_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, item_id)
    );
    CREATE INDEX items_status ON items(run_id, status)
    """),
    (2, "ALTER TABLE runs ADD COLUMN meta_json TEXT"),
    (3, "ALTER TABLE runs ADD COLUMN owner TEXT; ALTER TABLE runs ADD COLUMN heartbeat_at TEXT"),
    (4, """
    CREATE TABLE human_labels (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record_json TEXT NOT NULL
    );
    CREATE INDEX human_labels_item ON human_labels(run_id, item_id, reviewer)
    """),
    (5, "ALTER TABLE runs ADD COLUMN tags_json TEXT; ALTER TABLE runs ADD COLUMN note TEXT"),
    (6, "CREATE INDEX items_position ON items(run_id, position, item_id)"),
]


def legacy_statements(version: int, dialect: str = "sqlite") -> list[str]:
    """The old code's statements bringing an empty database to ``version`` (its own
    translation of the SQLite DDL for PostgreSQL included)."""
    out = ["CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"]
    for step, sql in LEGACY_STEPS[:version]:
        if dialect == "postgresql":
            sql = re.sub(r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", "BIGSERIAL PRIMARY KEY", sql)
        out += [s.strip() for s in sql.split(";") if s.strip()]
        out.append(f"INSERT INTO schema_migrations VALUES ({step}, '2026-01-01T00:00:00+00:00')")
    return out


def make_legacy_store(location: str | Path, version: int, runs: tuple[tuple[str, str, str], ...] = ()) -> None:
    """A store at an old schema ``version``: a SQLite file path or a database URL; on
    SQLite with ``runs`` in it, each ``(id, name, status)`` as the first schema's columns."""
    if "://" not in str(location):
        conn = sqlite3.connect(location)
        for statement in legacy_statements(version):
            conn.execute(statement)
        for run_id, name, status in runs:
            conn.execute("INSERT INTO runs (id, name, created_at, status, config_name, config_hash, config_json) "
                         "VALUES (?, ?, '2026-01-01', ?, 'base', 'h', '{}')", (run_id, name, status))
        conn.commit()
        conn.close()
        return
    from sqlalchemy import create_engine

    engine = create_engine(str(location))
    with engine.begin() as conn:
        for statement in legacy_statements(version, engine.dialect.name):
            conn.exec_driver_sql(statement)
    engine.dispose()


def load_dump(path: Path, dump: Path = DUMP_V6) -> None:
    """A SQLite file made from a committed ``.iterdump`` of a store the old code wrote."""
    conn = sqlite3.connect(path)
    conn.executescript(dump.read_text(encoding="utf-8"))
    conn.close()
