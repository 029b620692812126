"""Connections and transactions: a SQLAlchemy engine for SQLite (default) or any server URL,
and one short transaction per read or write.

Why SQLite by default: one file, no server, safe for several processes at once in WAL
mode (a CLI run and the dashboard reading it, or two runs writing). Every SQLite write is
one short ``BEGIN IMMEDIATE`` transaction with a generous busy timeout, so concurrent
writers queue instead of failing; the threads of one process also queue on a lock.
PostgreSQL gives the same guarantees with row locks.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql import Executable

from rag_eval.runs.store.location import is_url

BUSY_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 10  # a database server's connection attempt (PostgreSQL)


def sqlite_engine(path: str) -> Engine:
    """An engine on a SQLite file (WAL, busy timeout, foreign keys) or ``:memory:``."""
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


def open_engine(location: str) -> tuple[Engine, str]:
    """The engine for a store location (a file path, ``:memory:`` or a SQLAlchemy URL) and
    the store's file path (its display location for a server)."""
    if not is_url(location):
        return sqlite_engine(location), location
    url = make_url(location)
    if url.get_backend_name() == "sqlite":
        database = url.database or ":memory:"
        return sqlite_engine(database), database
    # a server that does not answer fails in seconds, not after the system's TCP retries
    # (minutes): the dashboard opens the store before it starts listening
    bounded = url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query
    timeout = {"connect_timeout": CONNECT_TIMEOUT_S} if bounded else {}
    return create_engine(url, pool_pre_ping=True, connect_args=timeout), url.render_as_string(hide_password=True)


class Database:
    """An engine and its transactions: ``with db.transaction(write=True) as conn`` for
    several statements, :meth:`read` and :meth:`write` for one Core statement each."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.backend = engine.dialect.name
        self._lock = threading.RLock() if self.backend == "sqlite" else None

    @contextmanager
    def transaction(self, write: bool) -> Iterator[Connection]:
        """A connection inside one transaction, committed on success, rolled back on error."""
        if self._lock is not None:
            self._lock.acquire()
        try:
            with self.engine.connect() as conn:
                if not write and self.backend == "sqlite":
                    conn = conn.execution_options(read_only=True)
                with conn.begin():
                    yield conn
        finally:
            if self._lock is not None:
                self._lock.release()

    def read(self, statement: Executable) -> list[Any]:
        """The rows of one query."""
        with self.transaction(write=False) as conn:
            return list(conn.execute(statement).fetchall())

    def write(self, statement: Executable, rows: list[dict[str, Any]] | None = None) -> int:
        """Run one statement (for each of ``rows`` when given) in its own write transaction;
        the number of rows it changed."""
        with self.transaction(write=True) as conn:
            result = conn.execute(statement, rows) if rows is not None else conn.execute(statement)
            return int(result.rowcount)

    def insert_returning(self, statement: Executable) -> Any:
        """Run an ``INSERT … RETURNING`` in its own write transaction; its first returned value."""
        with self.transaction(write=True) as conn:
            return conn.execute(statement).scalar_one()
