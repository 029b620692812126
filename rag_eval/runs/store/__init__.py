"""The run store: RAG runs, their items and human label sets in SQLite (default) or
PostgreSQL, through SQLAlchemy 2 Core, its schema kept by Alembic.

One job per module:

- :mod:`.location`     where the store is (``RAG_EVAL_DB_URL``, ``RAG_EVAL_DB``, the data
  directory) and how to show that without a password;
- :mod:`.database`     the engine (SQLite in WAL mode, or a server) and one short
  transaction per read or write;
- :mod:`.tables`       the tables as Core ``Table`` objects, which every query is written against;
- :mod:`.migrate`      Alembic revisions in ``migrations/versions``, applied when a store
  opens; stores made before Alembic are stamped, then upgraded;
- :mod:`.redaction`    secrets never reach the database;
- :mod:`.lease`        who holds a running run: claims, heartbeat, lock files, "interrupted";
- :mod:`.runs`, :mod:`.items`, :mod:`.human_labels`   the queries of each table;
- :mod:`.run_store`    :class:`RunStore`, which opens a store and offers all of the above.

Everything a caller needs is importable from here: ``from rag_eval.runs.store import RunStore``.
"""

from rag_eval.runs.store.database import BUSY_TIMEOUT_MS, CONNECT_TIMEOUT_S
from rag_eval.runs.store.lease import HEARTBEAT_S, LEASE_S
from rag_eval.runs.store.location import default_db_location, default_db_path, display_location, is_url, url_password
from rag_eval.runs.store.migrate import HEAD, MigrationError
from rag_eval.runs.store.run_store import RunStore, StoreUnavailable
from rag_eval.runs.store.runs import RUN_STATUSES, RunBusy, RunNotFound

SCHEMA_VERSION = int(HEAD)  # the schema version a store has once opened by this rag-eval

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CONNECT_TIMEOUT_S",
    "HEARTBEAT_S",
    "LEASE_S",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "MigrationError",
    "RunBusy",
    "RunNotFound",
    "RunStore",
    "StoreUnavailable",
    "default_db_location",
    "default_db_path",
    "display_location",
    "is_url",
    "url_password",
]
