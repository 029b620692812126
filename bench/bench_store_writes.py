"""Item writes into a PostgreSQL run store, three ways, on the same records.

Builds ``--items`` records the way a run does (``evaluate()`` with an instant judge, as
``bench_million.py``), then writes them into a throwaway PostgreSQL 15
(``harness/pg_server.py``, fsync off) in batches of 500, as ``StoreSink`` does:

- the store's own ``add_items`` path: one ``INSERT … ON CONFLICT`` run by the driver's
  ``executemany`` (psycopg 3 sends it once per row, pipelined);
- one multi-row ``VALUES`` statement per batch (SQLAlchemy renders 4,000 parameters);
- ``COPY`` into a session-local staging table, then one ``INSERT … SELECT … ON CONFLICT``.

Prints items per second of wall time, the client's CPU per item and, of that, the
encoding (the record's JSON and its redaction), with the load average.

    .venv/bin/python bench/bench_store_writes.py [--items 20000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

BATCH = 500


def records(n: int) -> list[dict[str, Any]]:
    import bench_million

    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.records import to_store
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.runs.sources import RowsSource

    rows = Path(tempfile.mkdtemp(prefix="rag-eval-writes-")) / "rows.jsonl"
    bench_million.write_rows(rows, n)
    sink = MemorySink()
    evaluate(RowsSource(path=str(rows)), bench_million.InstantJudge(), sink, config=RagConfig())
    return [to_store(r) for r in sink.records]


def executemany(db: Any, values: list[dict[str, Any]]) -> None:
    from rag_eval.runs.store.items import _upsert

    db.write(_upsert("postgresql"), values)


def _columns() -> tuple[list[str], list[str]]:
    """The ``items`` table's columns, and those an upsert replaces (all but the key)."""
    from rag_eval.runs.store.tables import items

    names = [c.name for c in items.columns]
    return names, [c.name for c in items.columns if not c.primary_key]


def multi_row_values(db: Any, values: list[dict[str, Any]]) -> None:
    from sqlalchemy.dialects import postgresql

    from rag_eval.runs.store.tables import items

    statement = postgresql.insert(items).values(values)
    statement = statement.on_conflict_do_update(index_elements=[items.c.run_id, items.c.item_id],
                                                set_={c: statement.excluded[c] for c in _columns()[1]})
    with db.transaction(write=True) as conn:
        conn.execute(statement)


def copy_then_merge(db: Any, values: list[dict[str, Any]]) -> None:
    columns, replaceable = _columns()
    names, replaced = ", ".join(columns), ", ".join(f"{c} = excluded.{c}" for c in replaceable)
    with db.transaction(write=True) as conn:
        raw = conn.connection.driver_connection
        with raw.cursor() as cursor:
            cursor.execute("CREATE TEMP TABLE IF NOT EXISTS incoming_items (LIKE items INCLUDING DEFAULTS) "
                           "ON COMMIT DELETE ROWS")
            with cursor.copy(f"COPY incoming_items ({names}) FROM STDIN") as copy:
                for row in values:
                    copy.write_row([row[c] for c in columns])
            cursor.execute(f"INSERT INTO items ({names}) SELECT {names} FROM incoming_items "
                           f"ON CONFLICT (run_id, item_id) DO UPDATE SET {replaced}")


WAYS: dict[str, Callable[[Any, list[dict[str, Any]]], None]] = {
    "the store's add_items (executemany, pipelined per row)": executemany,
    "one multi-row VALUES per batch": multi_row_values,
    "COPY into a staging table + INSERT … SELECT": copy_then_merge,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    from harness.pg_server import running_postgres
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.store import RunStore
    from rag_eval.runs.store.items import stored_rows

    built = records(args.items)
    print(f"{len(built):,} records, batches of {BATCH}; 2 cores; load at start {os.getloadavg()[0]:.2f}\n")
    print("| way | items/s (wall) | client CPU µs/item | of which encoding | load (1 min) |")
    print("|---|---:|---:|---:|---:|")
    with running_postgres() as server:
        server.admin("CREATE DATABASE writes")
        store = RunStore(str(server.url("writes")))
        for attempt in range(args.repeat):
            for name, write in WAYS.items():
                run_id = store.create_run(RagConfig(), name=f"{name} {attempt}")
                wall, cpu, encoding = time.perf_counter(), time.process_time(), 0.0
                for start in range(0, len(built), BATCH):
                    before = time.process_time()
                    values = stored_rows(run_id, built[start:start + BATCH], [])  # what add_items sends
                    encoding += time.process_time() - before
                    write(store.db, values)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                print(f"| {name} | {len(built) / wall:,.0f} | {1e6 * cpu / len(built):.0f} | "
                      f"{1e6 * encoding / len(built):.0f} | {os.getloadavg()[0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
