"""The :class:`RunStore`: opens (and migrates) a store, and gathers the queries of runs,
items and human labels behind one object."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from rag_eval.config import redact
from rag_eval.runs.store.database import Database, open_engine
from rag_eval.runs.store.human_labels import HumanLabelQueries
from rag_eval.runs.store.items import ItemQueries
from rag_eval.runs.store.lease import Holdings
from rag_eval.runs.store.location import default_db_location, display_location, url_password
from rag_eval.runs.store.migrate import MigrationError, current_revision, upgrade, version_number
from rag_eval.runs.store.redaction import store_secrets
from rag_eval.runs.store.runs import RunQueries


class StoreUnavailable(OSError):
    """The store's database cannot be reached or opened (message is password-free)."""


class RunStore(RunQueries, ItemQueries, HumanLabelQueries):
    """Runs and items. ``location`` is a SQLite file path, ``":memory:"`` (tests) or a
    SQLAlchemy URL; default :func:`default_db_location`. Opening migrates the schema."""

    def __init__(self, location: str | Path | None = None):
        raw = str(location) if location is not None else default_db_location()
        self._password = url_password(raw)
        #: where the store is, fit for display (a URL's password hidden)
        self.url = display_location(raw)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        try:
            engine, path = open_engine(raw)
        except (ArgumentError, ImportError, ValueError) as err:
            raise StoreUnavailable(f"cannot use the run store at {self.url}: {self._redact(str(err))}") from None
        self.path = path  # the file path for SQLite stores
        self.db = Database(engine)
        self.engine = engine
        self.backend = self.db.backend
        self.holdings = Holdings(self.beat, path if self.backend == "sqlite" else None)
        try:
            self.migrate()
        except (SQLAlchemyError, MigrationError) as err:
            engine.dispose()
            message = self._redact(str(getattr(err, "orig", None) or err)).strip().splitlines()
            raise StoreUnavailable(f"cannot open the run store at {self.url}: "
                                   f"{message[0] if message else type(err).__name__}") from None

    def _redact(self, text: str) -> str:
        return redact(text, *store_secrets([self._password]))

    def migrate(self) -> int:
        """Apply the schema revisions not yet applied (see :mod:`rag_eval.runs.store.migrate`);
        the schema version."""
        with self.db.transaction(write=True) as conn:
            return version_number(upgrade(conn))

    def schema_version(self) -> int:
        with self.db.transaction(write=False) as conn:
            return version_number(current_revision(conn))

    def columns(self, table: str) -> list[str]:
        return [c["name"] for c in inspect(self.engine).get_columns(table)]

    def close(self) -> None:
        self.holdings.stop()
        self.engine.dispose()
