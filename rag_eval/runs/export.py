"""Exporting a run's items as flat rows (``jsonl``, ``csv`` or ``parquet``).

One row per item: the run's id and configuration hash, the item's one flat row
(:func:`rag_eval.runs.records.item_row`: the columns every output has) and its retrieved chunks;
nested parts (chunks, label key lists, id lists) nested in JSONL, JSON text in CSV and Parquet
cells, so every format holds the same information. The stored records carry no secrets, and
neither does the export.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rag_eval.io.rows import flat_cells
from rag_eval.runs.records import LEARNED_FIELDS, item_row, row_columns

FORMATS = ("jsonl", "csv", "parquet")


def flatten_item(item: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """One export row of an item record: the run's id and configuration hash, the item's
    one flat row (:func:`rag_eval.runs.records.item_row`) and its retrieved chunks."""
    return {"run_id": run.get("id"), "config_hash": run.get("config_hash"), **item_row(item),
            "chunks": public_chunks(item.get("chunks") or [])}


def export_columns(run: dict[str, Any], items: Iterable[dict[str, Any]]) -> list[str]:
    """An export's columns: the run's, the rows' (:func:`rag_eval.runs.records.row_columns`), the chunks."""
    return ["run_id", "config_hash", *row_columns(map(item_row, items)), "chunks"]


def public_chunks(chunks: Sequence[Any]) -> list[Any]:
    """Stored chunks as an export shows them: a ``source`` that is a server path becomes its
    file name (runs stored before records kept names only still hold the path)."""
    out = []
    for chunk in chunks:
        if isinstance(chunk, dict) and isinstance(chunk.get("source"), str) and ("/" in chunk["source"] or "\\" in chunk["source"]):
            chunk = {**chunk, "source": chunk.get("source_name") or Path(chunk["source"]).name}
        out.append(chunk)
    return out


def export_rows(run: dict[str, Any], items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    columns = export_columns(run, items)
    return [{c: r.get(c) for c in columns} for r in (flatten_item(i, run) for i in items)]  # same columns (parquet, csv)


def _write_text(fh: Any, batches: Iterable[list[dict[str, Any]]], columns: list[str], fmt: str) -> None:
    """JSONL (nested values nested) or CSV (nested values as JSON text) rows into ``fh``."""
    writer = csv.DictWriter(fh, fieldnames=columns) if fmt == "csv" else None
    if writer is not None:
        writer.writeheader()
    for batch in batches:
        for row in batch:
            if writer is None:
                fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            else:
                writer.writerow(flat_cells(row))


def export_bytes(run: dict[str, Any], items: Sequence[dict[str, Any]], fmt: str) -> bytes:
    """The run's items as a download (``jsonl`` or ``csv``), written as :func:`export_run` writes the file."""
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"a download is jsonl or csv; got {fmt!r}")
    rows = export_rows(run, items)
    out = io.StringIO(newline="")
    _write_text(out, [rows], list(rows[0]) if rows else [], fmt)
    return out.getvalue().encode("utf-8")


#: items per batch of a streamed export (one Parquet row group, one page of the store)
EXPORT_BATCH = 2_000


def _columns(store: Any, run: dict[str, Any]) -> list[str]:
    """Every export column of the run: its retrieval, correctness and per-item metrics are
    known only once every item's are read (a pass over those fields alone)."""
    return export_columns(run, store.iter_items(run["id"], LEARNED_FIELDS))  # streamed: flat memory


def _write_parquet(batches: Iterator[list[dict[str, Any]]], path: Path) -> None:
    """Batches of rows into one Parquet file, a row group each (pyarrow's ParquetWriter),
    so memory stays that of one batch. The column types are those of the first batches;
    a column with no value in them is written as text, and a later value is cast to it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer: Any = None
    schema: Any = None
    held: list[Any] = []
    try:
        for batch in batches:
            table = pa.Table.from_pylist(batch)
            if schema is None:
                held.append(table)
                merged = pa.unify_schemas([t.schema for t in held])
                if any(pa.types.is_null(f.type) for f in merged) and len(held) < 5:
                    continue  # a few more batches before the types are fixed
                schema = pa.schema([pa.field(f.name, pa.large_string()) if pa.types.is_null(f.type) else f
                                    for f in merged])
                writer = pq.ParquetWriter(str(path), schema)
                tables, held = held, []
            else:
                tables = [table]
            for t in tables:
                writer.write_table(t.cast(schema, safe=False) if t.schema != schema else t)
        if schema is None:  # fewer rows than the batches it waits for
            tables = held
            schema = pa.unify_schemas([t.schema for t in tables]) if tables else pa.schema([])
            writer = pq.ParquetWriter(str(path), schema)
            for t in tables:
                writer.write_table(t.cast(schema) if t.schema != schema else t)
    finally:
        if writer is not None:
            writer.close()


def export_run(store: Any, run_id: str, path: str | Path, fmt: str | None = None) -> Path:
    """Write the run's items to ``path`` in ``fmt`` (default: from the suffix), streamed:
    the items are read a page at a time and written as they come, so a run of a million
    items exports in the memory of one batch."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    if path.suffix.lower() != f".{fmt}":
        path = path.with_suffix(f".{fmt}") if not path.suffix else path.with_name(path.name + f".{fmt}")
    run = store.get_run(run_id)
    columns = _columns(store, run)

    def batches() -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        for item in store.iter_items(run["id"]):
            row = flatten_item(item, run)
            batch.append({c: row.get(c) for c in columns})
            if len(batch) >= EXPORT_BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        _write_parquet(([flat_cells(r) for r in batch] for batch in batches()), path)
        return path
    with path.open("w", encoding="utf-8", newline="") as fh:
        _write_text(fh, batches(), columns, fmt)
    return path
