"""The schema evolves by Alembic revisions (``migrations/versions/0001_….py``, …), the same
on SQLite and PostgreSQL, recorded in Alembic's ``alembic_version`` table.

**To add a step**: add ``migrations/versions/NNNN_what.py`` with ``revision = "NNNN"``,
``down_revision`` the previous one and an ``upgrade()`` written with ``alembic.op``
(``op.add_column``, ``op.create_table``, ``op.create_index``: portable, no SQL strings),
change :mod:`rag_eval.runs.store.tables` to match and :data:`HEAD` to the new revision.

Every store applies the revisions it lacks when it opens, in one transaction that other
processes opening the same store wait for (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: an
advisory lock), so old files open and migrate. A store made before Alembic (its steps
recorded in ``schema_migrations``, versions 1–6) is stamped at the revision of its last
step first, then upgraded; the old table is left as it was.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect, select, table, text
from sqlalchemy.sql import column, func

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy.engine import Connection

HEAD = "0007"  # the newest revision (tests/runs/test_store.py checks it against the scripts)
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
#: where revisions are read from; a test (or a plug-in) may append a folder of its own
VERSION_LOCATIONS: list[Path] = [MIGRATIONS_DIR / "versions"]
MIGRATION_LOCK_ID = 7_261_534  # PostgreSQL advisory lock serializing migrations across processes
LEGACY_TABLE = "schema_migrations"  # how stores made before Alembic counted their steps


class MigrationError(RuntimeError):
    """The store's schema is one this version does not know (made by a newer rag-eval)."""


def version_number(revision: str | None) -> int:
    """A revision as the schema version shown to users (``"0006"`` → 6; none → 0)."""
    return int(revision) if revision and revision.isdigit() else 0


@lru_cache(maxsize=4)
def _scripts(locations: tuple[str, ...]) -> tuple[Config, ScriptDirectory]:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("version_locations", " ".join(locations))
    config.set_main_option("path_separator", "space")
    return config, ScriptDirectory.from_config(config)


def scripts() -> ScriptDirectory:
    """The revisions, read once per set of locations."""
    return _scripts(tuple(str(p) for p in VERSION_LOCATIONS))[1]


def head() -> str:
    """The newest revision among the scripts (:data:`HEAD` unless a location was added)."""
    revision = scripts().get_current_head()
    assert revision is not None
    return revision


def current_revision(conn: Connection) -> str | None:
    """The revision a database is at (None: not created by Alembic)."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(select(column("version_num")).select_from(table("alembic_version"))).scalar()


def _legacy_revision(conn: Connection) -> str | None:
    """The revision matching a pre-Alembic store's last step (None: not such a store)."""
    if not inspect(conn).has_table(LEGACY_TABLE):
        return None
    version = conn.execute(select(func.max(column("version"))).select_from(table(LEGACY_TABLE))).scalar()
    if not version:
        return None
    revision = f"{int(version):04d}"
    if int(version) > version_number(HEAD):
        raise MigrationError(f"the store's schema version {version} is newer than this rag-eval's ({HEAD}); "
                             "upgrade rag-eval")
    return revision


def upgrade(conn: Connection) -> str:
    """Bring the database on ``conn`` (inside a write transaction) to the head revision;
    returns it. Nothing is imported from Alembic when the database is already there."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_ID})
    current = current_revision(conn)
    if current is not None and current == HEAD and VERSION_LOCATIONS == [MIGRATIONS_DIR / "versions"]:
        return current
    from alembic.runtime.environment import EnvironmentContext
    from alembic.runtime.migration import MigrationContext

    config, script = _scripts(tuple(str(p) for p in VERSION_LOCATIONS))
    known = {s.revision for s in script.walk_revisions()}
    if current is not None and current not in known:
        raise MigrationError(f"the store is at schema revision {current}, which this rag-eval does not know "
                             f"(newest known: {head()}); upgrade rag-eval")
    if current is None:
        legacy = _legacy_revision(conn)
        if legacy is not None:
            MigrationContext.configure(conn).stamp(script, legacy)

    def steps(revision: Any, _context: Any) -> Any:
        return script._upgrade_revs("head", revision)

    env = EnvironmentContext(config, script, fn=steps, destination_rev="head")
    env.configure(connection=conn)
    env.run_migrations()
    return head()
