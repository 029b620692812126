"""Copy one run store into another (``rag-eval runs migrate --to URL``): a local SQLite file onto a
team's PostgreSQL server, or back.

Every table (the schema revision tables aside: the target runs its own migrations) is copied parents
first, in batches, with ``INSERT … ON CONFLICT DO NOTHING``: rows already in the target stay as they are,
so a second copy changes nothing. Afterwards every source primary key is looked up in the target; a
missing row is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_eval.runs.store import RunStore

BATCH_ROWS = 1000
SKIP_TABLES = ("alembic_version", "schema_migrations")  # each store keeps its own schema revision


@dataclass(frozen=True)
class TableCopy:
    table: str
    source_rows: int
    copied: int  # rows new to the target
    target_rows: int  # rows in the target afterwards (its own rows included)
    missing: int  # source rows not found in the target afterwards (must be 0)


class CopyError(ValueError):
    """The copy cannot start or did not arrive whole."""


def _insert(table: Any, dialect: str) -> Any:
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table)
    raise CopyError(f"copying into a {dialect} store is not supported (SQLite and PostgreSQL are)")


def _keys(store: RunStore, table: Any, pk: list[str]) -> set[tuple]:
    from sqlalchemy import select

    with store.engine.connect() as conn:
        conn = conn.execution_options(read_only=True)
        return {tuple(r) for r in conn.execute(select(*[table.c[c] for c in pk]))}


def copy_store(source: RunStore, target: RunStore, batch_rows: int = BATCH_ROWS) -> list[TableCopy]:
    """Copy every row of ``source`` that ``target`` lacks; verify every source row is
    in the target. Raises :class:`CopyError` when the stores are the same, a table
    cannot be copied idempotently, or rows are missing afterwards."""
    from sqlalchemy import Integer, MetaData, func, select, text

    if source.url == target.url:
        raise CopyError(f"source and target are the same store ({source.url})")
    if target.schema_version() < source.schema_version():
        raise CopyError(f"the target's schema (version {target.schema_version()}) is older than the source's "
                        f"({source.schema_version()}); upgrade rag-eval where the target is opened")
    src_meta, tgt_meta = MetaData(), MetaData()
    src_meta.reflect(source.engine)
    tgt_meta.reflect(target.engine)
    dialect = target.engine.dialect.name
    report: list[TableCopy] = []
    for table in src_meta.sorted_tables:  # parents before children (foreign keys)
        if table.name in SKIP_TABLES:
            continue
        if table.name not in tgt_meta.tables:
            raise CopyError(f"the target has no table '{table.name}'")
        dest = tgt_meta.tables[table.name]
        pk = [c.name for c in table.primary_key.columns]
        if not pk:
            raise CopyError(f"table '{table.name}' has no primary key, so it cannot be copied idempotently")
        columns = [c.name for c in table.columns if c.name in dest.c]
        before = _keys(target, dest, pk)
        stmt = _insert(dest, dialect).on_conflict_do_nothing(index_elements=pk)
        with source.engine.connect() as src:
            result = src.execution_options(read_only=True, stream_results=True).execute(
                select(*[table.c[c] for c in columns]).order_by(*[table.c[c] for c in pk]))
            for part in result.partitions(batch_rows):
                rows = [dict(zip(columns, r)) for r in part]
                with target.engine.begin() as dst:
                    dst.execute(stmt, rows)
        if dialect == "postgresql" and len(pk) == 1 and isinstance(dest.c[pk[0]].type, Integer):
            # explicit ids leave a serial column's sequence behind; move it past the copied ids
            with target.engine.begin() as dst:
                dst.execute(text(f"SELECT setval(pg_get_serial_sequence(:t, :c), "
                                 f"COALESCE((SELECT MAX({pk[0]}) FROM {dest.name}), 1))"),
                            {"t": dest.name, "c": pk[0]})
        source_keys = _keys(source, table, pk)
        after = _keys(target, dest, pk)
        with target.engine.connect() as conn:
            conn = conn.execution_options(read_only=True)
            target_rows = int(conn.execute(select(func.count()).select_from(dest)).scalar_one())
        report.append(TableCopy(table.name, len(source_keys), len(after - before), target_rows,
                                len(source_keys - after)))
    missing = [r for r in report if r.missing]
    if missing:
        raise CopyError("rows missing in the target after the copy: "
                        + ", ".join(f"{r.table}: {r.missing} of {r.source_rows}" for r in missing))
    return report
