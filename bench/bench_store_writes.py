"""Item writes into a PostgreSQL run store, four ways, on the same records.

Builds ``--items`` records the way a run does (``evaluate()`` with an instant judge, as
``bench_million.py``), then writes them into a throwaway PostgreSQL 15
(``harness/pg_server.py``, fsync off) in batches of 500, as ``StoreSink`` does:

- the store's write (``ItemQueries.write_encoded_items``): ``COPY`` into a
  transaction-local staging table, then one ``INSERT … SELECT … ON CONFLICT``;
- one ``INSERT … ON CONFLICT`` run by the driver's ``executemany`` (psycopg 3 sends it
  once per row, pipelined): the store's path before;
- one multi-row ``VALUES`` statement per batch (SQLAlchemy renders 4,000 parameters);
- the run's own path, ``StoreSink``: a batch is encoded on the caller's thread while the
  previous one is in the database (the store's upsert, on the sink's writer thread). Its
  figure also pays for turning each record into its stored form (``to_store``), which
  the three ways above get done beforehand.

Prints items per second of wall time, the client's CPU per item and, of that, the
encoding (the record's JSON and its redaction), with the load average.

    .venv/bin/python bench/bench_store_writes.py [--items 20000] [--repeat 2] [--prefill 1000000]
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


def records(n: int) -> list[Any]:
    import bench_million

    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.runs.sources import RowsSource

    rows = Path(tempfile.mkdtemp(prefix="rag-eval-writes-")) / "rows.jsonl"
    bench_million.write_rows(rows, n)
    sink = MemorySink()
    evaluate(RowsSource(path=str(rows)), bench_million.InstantJudge(), sink, config=RagConfig())
    return sink.records


def executemany(db: Any, values: list[dict[str, Any]]) -> None:
    """The upsert run by the driver's ``executemany``: the store's PostgreSQL path until
    the writes went by ``COPY`` (SQLite's path still)."""
    from rag_eval.runs.store.items import _upsert

    db.write(_upsert("postgresql"), values)


def store_path(db: Any, values: list[dict[str, Any]]) -> None:
    """What the store sends now: ``COPY`` into a staging table, one ``INSERT … SELECT``."""
    from rag_eval.runs.store.items import _copy_upsert

    with db.transaction(write=True) as conn:
        _copy_upsert(conn, values)


def multi_row_values(db: Any, values: list[dict[str, Any]]) -> None:
    from sqlalchemy.dialects import postgresql

    from rag_eval.runs.store.items import _REPLACED
    from rag_eval.runs.store.tables import items

    statement = postgresql.insert(items).values(values)
    statement = statement.on_conflict_do_update(index_elements=[items.c.run_id, items.c.id],
                                                set_={c: statement.excluded[c] for c in _REPLACED})
    with db.transaction(write=True) as conn:
        conn.execute(statement)


WAYS: dict[str, Callable[[Any, list[dict[str, Any]]], None]] = {
    "the store's write: COPY into a staging table + INSERT … SELECT": store_path,
    "one upsert per row (executemany, pipelined; the store before)": executemany,
    "one multi-row VALUES per batch": multi_row_values,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--prefill", type=int, default=0,
                        help="items already in the store before the writes (runs of 2,000, bulk-copied): "
                             "1000000 measures writes into a table of a million items")
    args = parser.parse_args()
    from harness.pg_server import running_postgres
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.records import to_store
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.store import RunStore
    from rag_eval.runs.store.items import stored_rows

    item_records = records(args.items)
    built = [to_store(r) for r in item_records]
    print(f"{len(built):,} records, batches of {BATCH}; 2 cores; load at start {os.getloadavg()[0]:.2f}\n")
    print("| way | items/s (wall) | client CPU µs/item | of which encoding | load (1 min) |")
    print("|---|---:|---:|---:|---:|")
    with running_postgres() as server:
        server.admin("CREATE DATABASE writes")
        store = RunStore(str(server.url("writes")))
        if args.prefill:
            from harness.sample_store import fill_store_bulk

            started = time.perf_counter()
            fill_store_bulk(store, n_runs=max(1, args.prefill // 2000), n_items=min(args.prefill, 2000))
            print(f"prefilled {store.count_runs()} runs, {args.prefill:,} items in "
                  f"{time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.2f}\n", flush=True)
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
            sink = StoreSink(store, RagConfig())
            sink.run_id = store.create_run(RagConfig(), name=f"sink {attempt}")
            encode, spent = store.encode_items, [0.0]

            def timed_encode(run_id: str, batch: list[dict[str, Any]], encode: Any = encode, spent: list = spent) -> Any:
                before = time.thread_time()
                try:
                    return encode(run_id, batch)
                finally:
                    spent[0] += time.thread_time() - before

            store.encode_items = timed_encode  # type: ignore[method-assign]
            wall, cpu = time.perf_counter(), time.process_time()
            for record in item_records:
                sink.write(record)
            sink.flush()
            sink.wait_for_writes()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            store.encode_items = encode  # type: ignore[method-assign]
            print(f"| StoreSink (to_store included; the upsert on its writer thread, one batch in flight) | "
                  f"{len(built) / wall:,.0f} | {1e6 * cpu / len(built):.0f} | {1e6 * spent[0] / len(built):.0f} | "
                  f"{os.getloadavg()[0]:.2f} |", flush=True)

if __name__ == "__main__":
    main()
