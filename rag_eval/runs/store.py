"""The run store: RAG runs and their items in SQLite (default) or PostgreSQL, through
SQLAlchemy 2 Core.

Where it lives: ``RAG_EVAL_DB_URL`` (any SQLAlchemy URL, e.g.
``postgresql+psycopg://user:password@host/db``) puts runs on a server a team shares;
otherwise ``RAG_EVAL_DB`` (a file path), else ``data_dir()/runs.sqlite``. The
password of a URL never appears in what is displayed (:attr:`RunStore.url`) and is
redacted from everything written, like an API key.

Why SQLite by default: one file, no server, safe for several processes at once in
WAL mode (a CLI run and the dashboard reading it, or two runs writing). Every SQLite
write is one short ``BEGIN IMMEDIATE`` transaction with a generous busy timeout, so
concurrent writers queue instead of failing. PostgreSQL gives the same guarantees
with row locks; an item write is one upsert on both.

The schema evolves by the numbered steps of :data:`MIGRATIONS`, the same list on both
backends, recorded in ``schema_migrations``. **To add a step**, append
``(next_version, "SQL; SQL")`` to the list: plain DDL in the portable subset (TEXT,
INTEGER, BIGINT, REAL, ``CREATE TABLE``/``INDEX``, ``ALTER TABLE … ADD COLUMN``);
``INTEGER PRIMARY KEY AUTOINCREMENT``, ``REAL`` and ``BLOB`` are translated for
PostgreSQL, and a step may instead give ``{"sqlite": "...", "postgresql": "..."}``.
Steps run in version order, each store applying the ones it lacks in one
transaction (serialized across processes), so old SQLite files open and migrate.

Items are stored as one JSON record each (question, retrieved chunks with scores,
answer, labels, scores, status, error, tokens, cost, latency) plus indexed columns
for the fields queried directly. Before anything is written, the values of known
secret settings are redacted from the JSON, so an API key that slipped into an error
message never reaches the database.

Resume is an atomic claim (:meth:`RunStore.claim_run`): one conditional ``UPDATE``
that succeeds for exactly one of several processes racing to resume a run; the
winner keeps a heartbeat while it runs, so a run whose process died can be claimed
again once its lease has lapsed.

A run that says ``running`` but whose process is gone (killed, crashed, host lost) is
shown as ``interrupted`` with the reason in ``status_detail``, on both backends once its
heartbeat is older than the lease (``no heartbeat for N s``), and on SQLite at once when
nobody holds its lock file beside the store (rag_eval.runs.liveness); ``--resume``
continues it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rag_eval.config import data_dir, redact, setting
from rag_eval.runs.liveness import INTERRUPTED, RunLock, lock_path
from rag_eval.runs.liveness import is_alive as run_id_alive
from rag_eval.runs.stats import SUMMARY_FIELDS, summarize_run

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

SECRET_SETTINGS = ("OPENAI_API_KEY", "QDRANT_API_KEY", "RAG_EVAL_API_KEY", "LLM_API_KEY", "RAG_EVAL_LLM_API_KEY",
                   "HF_TOKEN")
BUSY_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 10  # a database server's connection attempt (PostgreSQL)
LEASE_S = 60.0  # a claimed run whose heartbeat is older than this may be claimed by another process
HEARTBEAT_S = 15.0
MIGRATION_LOCK_ID = 7_261_534  # PostgreSQL advisory lock serializing migrations across processes

Migration = tuple[int, "str | dict[str, str]"]

MIGRATIONS: list[Migration] = [
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
    (2, """
    ALTER TABLE runs ADD COLUMN meta_json TEXT
    """),
    (3, """
    ALTER TABLE runs ADD COLUMN owner TEXT;
    ALTER TABLE runs ADD COLUMN heartbeat_at TEXT
    """),
    # Human label sets (rag_eval.labels): append-only, one row per save, beside the
    # judge's labels in ``items`` (never overwriting them). ``run_id`` is a run's id or
    # ``adhoc:<source>`` for rows reviewed outside a run (an Ask result, a dataset row).
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
    (5, """
    ALTER TABLE runs ADD COLUMN tags_json TEXT;
    ALTER TABLE runs ADD COLUMN note TEXT
    """),
    # A run's items in dataset order (every item read orders by position) from the
    # index alone, without sorting a large run's rows.
    (6, """
    CREATE INDEX items_position ON items(run_id, position, item_id)
    """),
]

RUN_STATUSES = ("running", "finished", "cancelled", "failed")


class RunNotFound(LookupError):
    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else "run not found"


def _age_s(stamp: Any) -> float | None:
    """Seconds since an ISO timestamp the store wrote, or None when there is none."""
    if not stamp:
        return None
    try:
        then = datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - then).total_seconds())


class RunBusy(ValueError):
    """Another live process holds the run (resume refused)."""


class StoreUnavailable(OSError):
    """The store's database cannot be reached or opened (message is password-free)."""


def _check_migrations(migrations: Sequence[Migration]) -> None:
    versions = [v for v, _ in migrations]
    if versions != sorted(set(versions)):
        raise RuntimeError(f"MIGRATIONS versions must be unique and increasing; got {versions}")


_check_migrations(MIGRATIONS)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


def _secrets(extra: Iterable[str | None] = ()) -> list[str]:
    from rag_eval.config import configured_secrets

    values: list[str | None] = list(configured_secrets(*SECRET_SETTINGS))
    values.append(url_password(setting("RAG_EVAL_DB_URL")))
    values.extend(extra)
    return [s for s in values if s]


def _clean(text: str | None, secrets: Iterable[str]) -> str | None:
    # PostgreSQL TEXT cannot hold NUL characters; SQLite can, but the two must agree.
    return redact(text, *secrets).replace("\x00", "") if text else text


def _dumps(value: Any, secrets: Iterable[str]) -> str:
    return redact(json.dumps(value, ensure_ascii=False, default=str), *secrets)


def _statements(sql: str | dict[str, str], dialect: str) -> list[str]:
    """A migration step's statements for one backend."""
    if isinstance(sql, dict):
        sql = sql[dialect]
    elif dialect == "postgresql":
        sql = re.sub(r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", "BIGSERIAL PRIMARY KEY", sql, flags=re.IGNORECASE)
        sql = re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql, flags=re.IGNORECASE)
        sql = re.sub(r"\bBLOB\b", "BYTEA", sql, flags=re.IGNORECASE)
    return [s.strip() for s in sql.split(";") if s.strip()]


def _qmark_to_named(sql: str, params: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """``?`` placeholders (outside quotes) to ``:p0, :p1 …`` for :func:`sqlalchemy.text`."""
    out: list[str] = []
    names: dict[str, Any] = {}
    quoted = False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if ch == "?" and not quoted:
            name = f"p{len(names)}"
            names[name] = params[len(names)]
            out.append(f":{name}")
        else:
            out.append(ch)
    if len(names) != len(params):
        raise ValueError(f"{len(params)} parameters for {len(names)} placeholders")
    return "".join(out), names


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class Row(tuple):
    """A result row readable by position, by column name and as ``dict(row)``."""

    _keys: tuple[str, ...] = ()

    def __new__(cls, values: Sequence[Any], keys: Sequence[str]) -> Row:  # noqa: PYI034
        row = super().__new__(cls, values)
        row._keys = tuple(keys)
        return row

    def keys(self) -> tuple[str, ...]:
        return self._keys

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._keys.index(key))
        return tuple.__getitem__(self, key)


_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\b", re.IGNORECASE)


def _on_conflict_do_nothing(sql: str) -> str:
    """SQLite's ``INSERT OR IGNORE …`` as the ``INSERT … ON CONFLICT DO NOTHING`` both accept."""
    sql = _OR_IGNORE.sub("INSERT", sql, count=1).rstrip().rstrip(";")
    returning = re.search(r"\bRETURNING\b", sql, re.IGNORECASE)
    if returning:
        return f"{sql[:returning.start()].rstrip()} ON CONFLICT DO NOTHING {sql[returning.start():]}"
    return f"{sql} ON CONFLICT DO NOTHING"


class WriteResult(NamedTuple):
    """What a write did: rows affected, SQLite's last row id, rows of a ``RETURNING``."""

    rowcount: int
    lastrowid: int | None
    rows: list[Row]


def _sqlite_engine(path: str) -> Engine:
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import StaticPool

    memory = path == ":memory:"
    if not memory:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        "sqlite+pysqlite://" + ("" if memory else "/" + str(Path(path).resolve())),
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
        poolclass=StaticPool if memory else None,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy's begin event below issues BEGIN itself
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the lock up front, so two writers queue instead of deadlocking on upgrade.
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get("read_only") else "BEGIN IMMEDIATE")

    return engine


class RunStore:
    """Runs and items. ``location`` is a SQLite file path, ``":memory:"`` (tests) or a
    SQLAlchemy URL; default :func:`default_db_location`."""

    def __init__(self, location: str | Path | None = None):
        from sqlalchemy import create_engine
        from sqlalchemy.exc import ArgumentError, SQLAlchemyError

        raw = str(location) if location is not None else default_db_location()
        self._password = url_password(raw)
        #: where the store is, fit for display (a URL's password hidden)
        self.url = display_location(raw)
        self.path = self.url  # the file path for SQLite stores
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._lock = threading.RLock()
        self._claimed: set[str] = set()
        self._beat_stop = threading.Event()
        self._beat_thread: threading.Thread | None = None
        try:
            if is_url(raw):
                if raw.startswith("sqlite"):
                    from sqlalchemy.engine import make_url

                    database = make_url(raw).database or ":memory:"
                    self.engine = _sqlite_engine(database)
                    self.path = database
                else:
                    # a server that does not answer fails in seconds, not after the system's TCP
                    # retries (minutes): the dashboard opens the store before it starts listening
                    from sqlalchemy.engine import make_url

                    url = make_url(raw)
                    bounded = url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query
                    timeout = {"connect_timeout": CONNECT_TIMEOUT_S} if bounded else {}
                    self.engine = create_engine(url, pool_pre_ping=True, connect_args=timeout)
            else:
                self.engine = _sqlite_engine(raw)
        except (ArgumentError, ImportError, ValueError) as err:
            raise StoreUnavailable(f"cannot use the run store at {self.url}: {self._redact(str(err))}") from None
        self.backend = self.engine.dialect.name
        try:
            self.migrate()
        except SQLAlchemyError as err:
            self.engine.dispose()
            message = self._redact(str(getattr(err, "orig", None) or err)).strip().splitlines()
            raise StoreUnavailable(f"cannot open the run store at {self.url}: "
                                   f"{message[0] if message else type(err).__name__}") from None
        self._run_locks: dict[str, RunLock] = {}  # runs this process is running (liveness, SQLite)

    # ------------------------------------------------------------------ plumbing
    def _redact(self, text: str) -> str:
        return redact(text, *self._secrets())

    def _secrets(self) -> list[str]:
        return _secrets([self._password])

    def _tx(self, write: bool):
        """A connection in a transaction (committed on success): ``with self._tx(True) as conn``;
        several statements in one transaction go through ``self._execute(conn, sql, params)``."""
        conn = self.engine.connect()
        if not write and self.backend == "sqlite":
            conn = conn.execution_options(read_only=True)
        return _Tx(conn, self._lock if self.backend == "sqlite" else None)

    def _execute(self, conn: Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        from sqlalchemy import text

        if isinstance(params, Mapping):
            return conn.execute(text(sql), dict(params))
        named_sql, named = _qmark_to_named(sql, params)
        return conn.execute(text(named_sql), named)

    def _write(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> WriteResult:
        """Run one statement in its own write transaction. ``params`` is a sequence for
        ``?`` placeholders or a mapping for ``:name``. ``INSERT OR IGNORE`` is accepted
        on both backends; for a generated id, end the INSERT with ``RETURNING id`` and
        read ``.rows`` (``.lastrowid`` is SQLite's only)."""
        if self.backend == "postgresql" and _OR_IGNORE.match(sql):
            sql = _on_conflict_do_nothing(sql)
        with self._tx(True) as conn:
            result = self._execute(conn, sql, params)
            rows = [Row(tuple(r), list(result.keys())) for r in result.fetchall()] if result.returns_rows else []
            lastrowid = result.lastrowid if self.backend == "sqlite" and not result.returns_rows else None
            return WriteResult(int(result.rowcount), lastrowid, rows)

    def _read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Row]:
        with self._tx(False) as conn:
            result = self._execute(conn, sql, params)
            keys = list(result.keys())
            return [Row(tuple(r), keys) for r in result.fetchall()]

    @property
    def journal_mode(self) -> str:
        if self.backend != "sqlite":
            return "n/a"
        with self.engine.connect() as conn:
            return str(conn.exec_driver_sql("PRAGMA journal_mode").scalar())

    def table_names(self) -> list[str]:
        from sqlalchemy import inspect

        return sorted(inspect(self.engine).get_table_names())

    def columns(self, table: str) -> list[str]:
        from sqlalchemy import inspect

        return [c["name"] for c in inspect(self.engine).get_columns(table)]

    def schema_version(self) -> int:
        rows = self._read("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    def migrate(self) -> int:
        """Apply the migrations not yet applied, in one transaction that other processes
        opening the store at the same moment wait for."""
        with self._tx(True) as conn:
            if self.backend == "postgresql":
                self._execute(conn, "SELECT pg_advisory_xact_lock(:k)", {"k": MIGRATION_LOCK_ID})
            self._execute(conn, "CREATE TABLE IF NOT EXISTS schema_migrations "
                                "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            done = {r[0] for r in self._execute(conn, "SELECT version FROM schema_migrations")}
            for version, sql in MIGRATIONS:
                if version in done:
                    continue
                for statement in _statements(sql, self.backend):
                    conn.exec_driver_sql(statement)
                self._execute(conn, "INSERT INTO schema_migrations (version, applied_at) VALUES (:v, :t)",
                              {"v": version, "t": _now()})
        return self.schema_version()

    def close(self) -> None:
        self._beat_stop.set()
        thread = self._beat_thread
        if thread is not None:
            thread.join(timeout=5)
        self.engine.dispose()

    # ------------------------------------------------------------------ claims
    def claim_run(self, run_id: str, lease_s: float = LEASE_S) -> None:
        """Take the run for this process, atomically: it succeeds when the run is not
        running, or is this store's, or its holder's heartbeat is older than ``lease_s``.
        Raises :class:`RunBusy` when another live process holds it."""
        run_id = self.resolve_run_id(run_id)
        stale = (datetime.now(UTC) - timedelta(seconds=lease_s)).isoformat(timespec="seconds")
        won = self._write(
            "UPDATE runs SET status = 'running', owner = :me, heartbeat_at = :now, error = NULL, finished_at = NULL "
            "WHERE id = :id AND (status <> 'running' OR owner = :me OR owner IS NULL OR heartbeat_at IS NULL "
            "OR heartbeat_at < :stale)",
            {"me": self.owner, "now": _now(), "id": run_id, "stale": stale},
        )
        if won.rowcount != 1:
            row = self._read("SELECT owner, heartbeat_at FROM runs WHERE id = :id", {"id": run_id})[0]
            raise RunBusy(f"run {run_id} is being run by {row[0]} (last heartbeat {row[1]}); if that process "
                          f"died, resume again after {lease_s:.0f} s")
        self._hold(run_id)

    def _hold(self, run_id: str) -> None:
        with self._lock:
            self._claimed.add(run_id)
            if self._beat_thread is None:  # the beating thread clears this, under the lock, as it exits
                self._beat_stop.clear()
                self._beat_thread = threading.Thread(target=self._beat, name="run-store-heartbeat", daemon=True)
                self._beat_thread.start()

    def _release(self, run_id: str) -> None:
        with self._lock:
            self._claimed.discard(run_id)

    def _beat(self) -> None:
        while not self._beat_stop.wait(HEARTBEAT_S):
            with self._lock:
                claimed = list(self._claimed)
                if not claimed:
                    self._beat_thread = None
                    return
            for run_id in claimed:
                try:
                    self._write("UPDATE runs SET heartbeat_at = :now WHERE id = :id AND owner = :me",
                                {"now": _now(), "id": run_id, "me": self.owner})
                except Exception:  # noqa: BLE001 - a missed beat only shortens the lease; the run goes on
                    time.sleep(1)

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
        """A new run in status ``running``, held by this process; returns its id
        (``YYYYmmdd-HHMMSS-xxxxxx``). ``config`` is a :class:`~rag_eval.rag.config.RagConfig`
        or its dict."""
        config_dict = config.to_dict() if hasattr(config, "to_dict") else dict(config)
        config_hash = getattr(config, "config_hash", None) or str(config_dict.get("config_hash", ""))
        run_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        secrets = self._secrets()
        self._hold_lock(run_id)  # before the row exists, so the run never looks interrupted
        self._write(
            "INSERT INTO runs (id, name, created_at, status, config_name, config_hash, config_json, collection, "
            "dataset_path, dataset_fingerprint, n_items, meta_json, owner, heartbeat_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, _clean(name or f"{config_dict.get('name', 'run')}", secrets), _now(), "running",
             str(config_dict.get("name", "")), config_hash, _dumps(config_dict, secrets), collection,
             _clean(dataset_path, secrets), dataset_fingerprint, n_items, _dumps(meta or {}, secrets), self.owner,
             _now()),
        )
        self._hold(run_id)
        return run_id

    def resolve_run_id(self, ref: str) -> str:
        """A run id from an exact id, a unique id prefix or a unique run name."""
        rows = self._read("SELECT id FROM runs WHERE id = ?", (ref,))
        if rows:
            return str(rows[0][0])
        rows = self._read("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\'",
                          (ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",))
        if len(rows) == 1:
            return str(rows[0][0])
        if not rows:
            rows = self._read("SELECT id FROM runs WHERE name = ?", (ref,))
            if len(rows) == 1:
                return str(rows[0][0])
        if len(rows) > 1:
            raise RunNotFound(f"'{ref}' matches {len(rows)} runs ({', '.join(r[0] for r in rows[:5])}); give more of the id")
        raise RunNotFound(f"no run '{ref}' (see `rag-eval runs list`)")

    def _hold_lock(self, run_id: str) -> None:
        if self.backend != "sqlite":
            return
        lock = self._run_locks.setdefault(run_id, RunLock(self.path, run_id))
        lock.acquire()

    def _let_go(self, run_id: str) -> None:
        lock = self._run_locks.pop(run_id, None)
        if lock is not None:
            lock.release()

    def _stale(self, d: dict[str, Any]) -> str | None:
        """Why a run stored as ``running`` is not running any more, or None while it may
        be. On both backends: its holder's heartbeat is older than the lease; on SQLite
        also, at once: nobody holds its lock file (the process ended)."""
        run_id = str(d["id"])
        if run_id in self._claimed:
            return None  # this process is running it
        alive = run_id_alive(self.path, run_id) if self.backend == "sqlite" else None
        if alive is True:
            return None
        age = _age_s(d.get("heartbeat_at"))
        silent = f"no heartbeat for {age:.0f} s" if age is not None else "no heartbeat"
        if alive is False:
            return f"its process is gone; {silent}"
        if age is not None and age > LEASE_S:
            return silent
        return None  # unknown (an older run without a heartbeat) or within its lease

    def _run_dict(self, row: Row) -> dict[str, Any]:
        d = dict(row)
        if d.get("status") == "running":
            why = self._stale(d)
            if why is not None:  # killed, crashed, lost its host: shown, not stored (--resume continues it)
                d["status"], d["status_detail"] = INTERRUPTED, why
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
        d["n_done"] = int(self._read("SELECT COUNT(*) FROM items WHERE run_id = ?", (run_id,))[0][0])
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
        if status == "running":
            self._hold_lock(run_id)
        else:
            self._let_go(run_id)
        self._write("UPDATE runs SET status = ?, error = ? WHERE id = ?",
                    (status, _clean(error, self._secrets()), run_id))
        if status != "running":
            self._release(run_id)

    def finish_run(self, run_id: str, status: str = "finished", error: str | None = None) -> dict[str, Any]:
        """Store the summary statistics of the run's items and its final status."""
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {', '.join(RUN_STATUSES)}; got {status!r}")
        summary = summarize_run(self.items(run_id, SUMMARY_FIELDS))
        secrets = self._secrets()
        self._let_go(run_id)
        self._write(
            "UPDATE runs SET status = ?, finished_at = ?, summary_json = ?, error = ? WHERE id = ?",
            (status, _now(), _dumps(summary, secrets), _clean(error, secrets), run_id),
        )
        self._release(run_id)
        return summary

    def add_to_summary(self, run_id: str, **parts: Any) -> None:
        """Merge ``parts`` into a finished run's stored summary (a run stored before the
        summary kept its agreement gets it when first computed); a run without a
        summary (still running) is left alone."""
        rows = self._read("SELECT summary_json FROM runs WHERE id = ?", (run_id,))
        if not rows or not rows[0][0]:
            return
        summary = {**json.loads(rows[0][0]), **parts}
        self._write("UPDATE runs SET summary_json = ? WHERE id = ? AND summary_json IS NOT NULL",
                    (_dumps(summary, self._secrets()), run_id))

    def annotate_run(self, run_id: str, tags: Iterable[str] | None = None, note: str | None = None) -> dict[str, Any]:
        """Set a run's tags (trimmed, deduplicated, order kept) and/or its free-text note;
        ``None`` leaves that field as it is. Returns the updated run."""
        run_id = self.resolve_run_id(run_id)
        secrets = self._secrets()
        if tags is not None:
            clean = list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
            self._write("UPDATE runs SET tags_json = ? WHERE id = ?", (_dumps(clean, secrets), run_id))
        if note is not None:
            self._write("UPDATE runs SET note = ? WHERE id = ?", (_clean(note.strip(), secrets), run_id))
        return self.get_run(run_id)

    def delete_run(self, run_id: str) -> None:
        run_id = self.resolve_run_id(run_id)
        with self._tx(True) as conn:
            self._execute(conn, "DELETE FROM items WHERE run_id = ?", (run_id,))
            self._execute(conn, "DELETE FROM runs WHERE id = ?", (run_id,))
        self._release(run_id)
        self._let_go(run_id)
        stale = lock_path(self.path, run_id) if self.backend == "sqlite" else None
        if stale is not None and run_id_alive(self.path, run_id) is False:
            stale.unlink(missing_ok=True)

    # ------------------------------------------------------------------ items
    def add_item(self, run_id: str, record: dict[str, Any]) -> None:
        """Insert or replace one item record (needs ``item_id``, ``status``; ``position``
        keeps dataset order). Replacing lets a resumed run retry a failed item."""
        self.add_items(run_id, [record])

    def add_items(self, run_id: str, records: Sequence[dict[str, Any]]) -> None:
        """Insert or replace several item records in one transaction."""
        for record in records:
            for key in ("item_id", "status"):
                if record.get(key) in (None, ""):
                    raise ValueError(f"item record needs '{key}'")
        if not records:
            return
        secrets, now = self._secrets(), _now()
        values = [{"run_id": run_id, "item_id": str(r["item_id"]), "position": int(r.get("position", 0)),
                   "status": str(r["status"]), "error": _clean(str(r["error"]), secrets) if r.get("error") else None,
                   "question": _clean(r.get("question"), secrets), "record_json": _dumps(r, secrets),
                   "updated_at": now} for r in records]
        with self._tx(True) as conn:
            self._execute_many(conn, (
                "INSERT INTO items (run_id, item_id, position, status, error, question, record_json, updated_at) "
                "VALUES (:run_id, :item_id, :position, :status, :error, :question, :record_json, :updated_at) "
                "ON CONFLICT (run_id, item_id) DO UPDATE SET position = excluded.position, "
                "status = excluded.status, error = excluded.error, question = excluded.question, "
                "record_json = excluded.record_json, updated_at = excluded.updated_at"), values)

    @staticmethod
    def _execute_many(conn: Connection, sql: str, values: list[dict[str, Any]]) -> None:
        from sqlalchemy import text

        conn.execute(text(sql), values)

    def items(self, run_id: str, fields: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The run's item records in dataset order. ``fields`` (top-level keys, or dotted
        paths such as ``item.response_sentences``) keeps only those parts of each record,
        picked out by the database (SQLite's ``json_extract``, PostgreSQL's ``json``), so a
        page that needs the scores of 2,000 items does not decode their documents; a
        field a record lacks comes back as None."""
        if not fields:
            rows = self._read("SELECT record_json FROM items WHERE run_id = ? ORDER BY position, item_id", (run_id,))
            return [json.loads(r[0]) for r in rows]
        rows = self._read(f"SELECT {self._projection(fields)} FROM items WHERE run_id = ? ORDER BY position, item_id",
                          (run_id,))
        return [json.loads(r[0]) for r in rows]

    def item(self, run_id: str, item_id: str) -> dict[str, Any] | None:
        """One item's whole record, or None."""
        rows = self._read("SELECT record_json FROM items WHERE run_id = ? AND item_id = ?", (run_id, str(item_id)))
        return json.loads(rows[0][0]) if rows else None

    def _projection(self, fields: Sequence[str]) -> str:
        """A SQL expression building, per item row, the JSON object of ``fields``."""
        tree: dict[str, Any] = {}
        for field in fields:
            if not _FIELD.fullmatch(field):
                raise ValueError(f"not an item field: {field!r}")
            node = tree
            parts = field.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = None

        def build(node: dict[str, Any], path: list[str]) -> str:
            args = []
            for key, child in node.items():
                here = [*path, key]
                if child is not None:
                    value = build(child, here)
                elif self.backend == "postgresql":
                    value = "j" + "".join(f" -> '{p}'" for p in here)
                else:
                    value = f"json_extract(record_json, '$.{'.'.join(here)}')"
                args.append(f"'{key}', {value}")
            return ("json_build_object(" if self.backend == "postgresql" else "json_object(") + ", ".join(args) + ")"

        if self.backend == "postgresql":
            # parse each record once, then pick from it; PostgreSQL's JSON operators refuse an
            # escaped NUL anywhere in the text, so it reads as U+FFFD (same length, still valid JSON)
            return (f"(SELECT {build(tree, [])}::text FROM "
                    f"(SELECT replace(record_json, '\\u0000', '\\ufffd')::json AS j) AS parsed)")
        return build(tree, [])

    def item_statuses(self, run_id: str) -> dict[str, str]:
        return {r[0]: r[1] for r in self._read("SELECT item_id, status FROM items WHERE run_id = ?", (run_id,))}

    def items_with_ids(self, item_ids: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
        """``(run_id, record)`` of every stored item, in any run, whose id is in ``item_ids``."""
        ids = sorted({str(i) for i in item_ids})
        out: list[tuple[str, dict[str, Any]]] = []
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            rows = self._read(f"SELECT run_id, record_json FROM items WHERE item_id IN ({','.join('?' * len(part))})",
                              part)
            out.extend((r[0], json.loads(r[1])) for r in rows)
        return out

    # ------------------------------------------------------------------ human labels
    def add_human_labels(self, run_id: str, item_id: str, reviewer: str, record: dict[str, Any],
                         created_at: str | None = None) -> int:
        """Append one human label set (``rag_eval.labels``); earlier saves stay as history."""
        if not str(reviewer).strip():
            raise ValueError("a human label set needs a reviewer name")
        result = self._write(
            "INSERT INTO human_labels (run_id, item_id, reviewer, created_at, record_json) VALUES (?,?,?,?,?) RETURNING id",
            (run_id, str(item_id), str(reviewer).strip(), created_at or _now(), _dumps(record, self._secrets())),
        )
        return int(result.rows[0][0]) if result.rows else int(result.lastrowid or 0)

    def human_labels(self, run_id: str, reviewer: str | None = None, latest: bool = True) -> list[dict[str, Any]]:
        """The run's human label sets (``latest``: the last save per item and reviewer),
        each as its record plus ``id``, ``run_id``, ``item_id``, ``reviewer``, ``created_at``."""
        sql = "SELECT id, run_id, item_id, reviewer, created_at, record_json FROM human_labels WHERE run_id = ?"
        params: list[Any] = [run_id]
        if reviewer is not None:
            sql += " AND reviewer = ?"
            params.append(reviewer)
        if latest:
            sql += (" AND id IN (SELECT MAX(id) FROM human_labels WHERE run_id = ? GROUP BY item_id, reviewer)")
            params.append(run_id)
        rows = self._read(sql + " ORDER BY item_id, reviewer, id", params)
        return [{**json.loads(r[5]), "id": r[0], "run_id": r[1], "item_id": r[2], "reviewer": r[3],
                 "created_at": r[4]} for r in rows]

class _Tx:
    """A connection inside one transaction, committed on success, rolled back on error;
    SQLite stores also serialize their own threads through ``lock``."""

    def __init__(self, conn: Connection, lock: Any):
        self.conn, self.lock = conn, lock

    def __enter__(self) -> Connection:
        if self.lock is not None:
            self.lock.acquire()
        try:
            self.conn.begin()
        except BaseException:
            self._close()
            raise
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.conn.commit()
            else:
                self.conn.rollback()
        finally:
            self._close()

    def _close(self) -> None:
        try:
            self.conn.close()
        finally:
            if self.lock is not None:
                self.lock.release()
