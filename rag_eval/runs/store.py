"""The run store: an embedded SQLite database of RAG runs and their items.

Why SQLite: one file, no server, safe for several processes at once in WAL mode (a
CLI run and the dashboard reading it, or two runs writing). Every write is one short
``BEGIN IMMEDIATE`` transaction with a generous busy timeout, so concurrent writers
queue instead of failing or corrupting the file. The schema evolves by numbered
migrations recorded in ``schema_migrations``.

Items are stored as one JSON record each (question, retrieved chunks with scores,
answer, labels, scores, status, error, tokens, cost, latency) plus indexed columns
for the fields queried directly. Before anything is written, the values of known
secret settings are redacted from the JSON, so an API key that slipped into an error
message never reaches the database.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from rag_eval.config import data_dir, redact, setting
from rag_eval.runs.stats import summarize_items

SECRET_SETTINGS = ("OPENAI_API_KEY", "QDRANT_API_KEY", "RAG_EVAL_API_KEY", "LLM_API_KEY")
BUSY_TIMEOUT_MS = 30_000

MIGRATIONS: list[tuple[int, str]] = [
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
    CREATE INDEX items_status ON items(run_id, status);
    """),
    (2, """
    ALTER TABLE runs ADD COLUMN meta_json TEXT;
    """),
    (3, """
    ALTER TABLE runs ADD COLUMN tags_json TEXT;
    ALTER TABLE runs ADD COLUMN note TEXT;
    """),
]

RUN_STATUSES = ("running", "finished", "cancelled", "failed")


class RunNotFound(LookupError):
    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else "run not found"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def default_db_path() -> Path:
    env = os.environ.get("RAG_EVAL_DB")
    return Path(env) if env else data_dir() / "runs.sqlite"


def _secrets() -> list[str]:
    return [s for s in (setting(name) for name in SECRET_SETTINGS) if s]


def _dumps(value: Any, secrets: Iterable[str]) -> str:
    return redact(json.dumps(value, ensure_ascii=False, default=str), *secrets)


class RunStore:
    """Runs and items in SQLite. ``path=":memory:"`` for an in-memory store (tests)."""

    def __init__(self, path: str | Path | None = None):
        self.path = str(path) if path is not None else str(default_db_path())
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                     isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        self._conn.execute("PRAGMA foreign_keys=ON")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self.migrate()

    # ------------------------------------------------------------------ plumbing
    def _write(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._conn.execute(sql, tuple(params))
                self._conn.execute("COMMIT")
                return cursor
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    @property
    def journal_mode(self) -> str:
        return str(self._read("PRAGMA journal_mode")[0][0])

    def schema_version(self) -> int:
        rows = self._read("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    def migrate(self) -> int:
        """Apply the migrations not yet applied (each in its own transaction)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
                )
                done = {r[0] for r in self._conn.execute("SELECT version FROM schema_migrations")}
                for version, sql in MIGRATIONS:
                    if version in done:
                        continue
                    for statement in (s.strip() for s in sql.split(";")):
                        if statement:
                            self._conn.execute(statement)
                    self._conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (version, _now()))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return self.schema_version()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ runs
    def create_run(
        self,
        config: Any,
        collection: str | None = None,
        dataset_fingerprint: str | None = None,
        dataset_path: str | None = None,
        name: str | None = None,
        n_items: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """A new run in status ``running``; returns its id (``YYYYmmdd-HHMMSS-xxxxxx``).
        ``config`` is a :class:`~rag_eval.rag.config.RagConfig` or its dict."""
        config_dict = config.to_dict() if hasattr(config, "to_dict") else dict(config)
        config_hash = getattr(config, "config_hash", None) or str(config_dict.get("config_hash", ""))
        run_id = f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        secrets = _secrets()
        self._write(
            "INSERT INTO runs (id, name, created_at, status, config_name, config_hash, config_json, collection, "
            "dataset_path, dataset_fingerprint, n_items, meta_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, name or f"{config_dict.get('name', 'run')}", _now(), "running", str(config_dict.get("name", "")),
             config_hash, _dumps(config_dict, secrets), collection, dataset_path, dataset_fingerprint, n_items,
             _dumps(meta or {}, secrets)),
        )
        return run_id

    def resolve_run_id(self, ref: str) -> str:
        """A run id from an exact id, a unique id prefix or a unique run name."""
        rows = self._read("SELECT id FROM runs WHERE id = ?", (ref,))
        if rows:
            return rows[0][0]
        rows = self._read("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\'",
                          (ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",))
        if len(rows) == 1:
            return rows[0][0]
        if not rows:
            rows = self._read("SELECT id FROM runs WHERE name = ?", (ref,))
            if len(rows) == 1:
                return rows[0][0]
        if len(rows) > 1:
            raise RunNotFound(f"'{ref}' matches {len(rows)} runs ({', '.join(r[0] for r in rows[:5])}); give more of the id")
        raise RunNotFound(f"no run '{ref}' (see `rag-eval runs list`)")

    def _run_dict(self, row: sqlite3.Row) -> dict[str, Any]:
        d = dict(row)
        d["config"] = json.loads(d.pop("config_json"))
        d["summary"] = json.loads(d.pop("summary_json")) if d.get("summary_json") else None
        d["meta"] = json.loads(d.pop("meta_json")) if d.get("meta_json") else {}
        d["tags"] = json.loads(d.pop("tags_json")) if d.get("tags_json") else []
        d["note"] = d.get("note") or ""
        return d

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run as a dict (config and summary decoded); ``run_id`` may be a prefix or name."""
        run_id = self.resolve_run_id(run_id)
        row = self._read("SELECT * FROM runs WHERE id = ?", (run_id,))[0]
        d = self._run_dict(row)
        d["n_done"] = self._read("SELECT COUNT(*) FROM items WHERE run_id = ?", (run_id,))[0][0]
        return d

    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Runs, newest first, each with ``n_done`` (items stored so far)."""
        sql = ("SELECT runs.*, (SELECT COUNT(*) FROM items WHERE items.run_id = runs.id) AS n_done "
               "FROM runs ORDER BY created_at DESC, id DESC")
        params: tuple = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (int(limit),)
        return [self._run_dict(r) for r in self._read(sql, params)]

    def set_status(self, run_id: str, status: str, error: str | None = None) -> None:
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {', '.join(RUN_STATUSES)}; got {status!r}")
        self._write("UPDATE runs SET status = ?, error = ? WHERE id = ?",
                    (status, redact(error, *_secrets()) if error else None, run_id))

    def finish_run(self, run_id: str, status: str = "finished", error: str | None = None) -> dict[str, Any]:
        """Store the summary statistics of the run's items and its final status."""
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {', '.join(RUN_STATUSES)}; got {status!r}")
        summary = summarize_items(self.items(run_id))
        self._write(
            "UPDATE runs SET status = ?, finished_at = ?, summary_json = ?, error = ? WHERE id = ?",
            (status, _now(), _dumps(summary, _secrets()), redact(error, *_secrets()) if error else None, run_id),
        )
        return summary

    def annotate_run(self, run_id: str, tags: Iterable[str] | None = None, note: str | None = None) -> dict[str, Any]:
        """Set a run's tags (trimmed, deduplicated, order kept) and/or its free-text note;
        ``None`` leaves that field as it is. Returns the updated run."""
        run_id = self.resolve_run_id(run_id)
        secrets = _secrets()
        if tags is not None:
            clean = list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
            self._write("UPDATE runs SET tags_json = ? WHERE id = ?", (_dumps(clean, secrets), run_id))
        if note is not None:
            self._write("UPDATE runs SET note = ? WHERE id = ?", (redact(note.strip(), *secrets), run_id))
        return self.get_run(run_id)

    def delete_run(self, run_id: str) -> None:
        run_id = self.resolve_run_id(run_id)
        self._write("DELETE FROM runs WHERE id = ?", (run_id,))

    # ------------------------------------------------------------------ items
    def add_item(self, run_id: str, record: dict[str, Any]) -> None:
        """Insert or replace one item record (needs ``item_id``, ``status``; ``position``
        keeps dataset order). Replacing lets a resumed run retry a failed item."""
        for key in ("item_id", "status"):
            if record.get(key) in (None, ""):
                raise ValueError(f"item record needs '{key}'")
        self._write(
            "INSERT OR REPLACE INTO items (run_id, item_id, position, status, error, question, record_json, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (run_id, str(record["item_id"]), int(record.get("position", 0)), str(record["status"]),
             redact(str(record["error"]), *_secrets()) if record.get("error") else None,
             record.get("question"), _dumps(record, _secrets()), _now()),
        )

    def items(self, run_id: str) -> list[dict[str, Any]]:
        """The run's item records in dataset order."""
        rows = self._read("SELECT record_json FROM items WHERE run_id = ? ORDER BY position, item_id", (run_id,))
        return [json.loads(r[0]) for r in rows]

    def item_statuses(self, run_id: str) -> dict[str, str]:
        return {r[0]: r[1] for r in self._read("SELECT item_id, status FROM items WHERE run_id = ?", (run_id,))}
