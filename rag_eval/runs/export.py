"""Exporting a run's items as flat rows (``jsonl``, ``csv`` or ``parquet``).

One row per item: identifiers, question, answer, status and error, the TRACe scores, the
original project's report fields (``average``, ``rmse_aggregation``, support counts...) and
retrieval metrics as columns, and the nested parts (retrieved chunks, labels, tokens)
JSON-encoded so every format holds the same information. The stored records carry no
secrets, and neither does the export.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_eval.io.rows import write_rows
from rag_eval.metrics.registry import TRACE_SCORES
from rag_eval.runs.item_fields import item_report_fields

FORMATS = ("jsonl", "csv", "parquet")


def flatten_item(item: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """One export row of an item record."""
    scores = item.get("scores") or {}
    row: dict[str, Any] = {
        "run_id": run.get("id"),
        "config_hash": run.get("config_hash"),
        "item_id": item.get("item_id"),
        "position": item.get("position"),
        "question": item.get("question"),
        "answer": item.get("answer"),
        "reference_answer": item.get("reference_answer"),
        "status": item.get("status"),
        "error": item.get("error"),
        "generator": (item.get("generator") or {}).get("kind"),
        "judge": item.get("judge"),
    }
    row.update({name: scores.get(name) for name in TRACE_SCORES})
    row.update(item_report_fields(item))
    row.update({name: value for name, value in sorted((item.get("retrieval") or {}).items())})
    row.update({name: value for name, value in sorted((item.get("correctness") or {}).items())})
    row.update({name: value for name, value in sorted((item.get("metrics") or {}).items())})
    errors = item.get("metric_errors")
    row["metric_errors"] = json.dumps(errors, ensure_ascii=False) if errors else None
    row["retrieved_doc_ids"] = json.dumps(item.get("retrieved_doc_ids") or [], ensure_ascii=False)
    row["gold_doc_ids"] = json.dumps(item.get("gold_doc_ids") or [], ensure_ascii=False)
    row["chunks"] = json.dumps(public_chunks(item.get("chunks") or []), ensure_ascii=False)
    row["labels"] = json.dumps(item.get("labels"), ensure_ascii=False) if item.get("labels") else None
    row["tokens_total"] = (item.get("tokens") or {}).get("total")
    row["cost_usd"] = item.get("cost_usd")
    row["latency_s"] = item.get("latency_s")
    return row


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
    rows = [flatten_item(i, run) for i in items]
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return [{c: r.get(c) for c in columns} for r in rows]  # same columns in every row (parquet, csv)


def export_run(store, run_id: str, path: str | Path, fmt: str | None = None) -> Path:
    """Write the run's items to ``path`` in ``fmt`` (default: from the suffix)."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    if path.suffix.lower() != f".{fmt}":
        path = path.with_suffix(f".{fmt}") if not path.suffix else path.with_name(path.name + f".{fmt}")
    run = store.get_run(run_id)
    return write_rows(export_rows(run, store.items(run["id"])), path)
