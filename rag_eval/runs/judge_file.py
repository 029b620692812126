"""Judging a file of rows: what ``rag-eval judge`` calls (and scripts can too).

Rows are read in order with :func:`rag_eval.io.rows.iter_rows`; a row that cannot be
read or lacks a field becomes an ``invalid_input`` output row naming file, row and
field, and the good rows are judged. Output rows keep input order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from rag_eval.io.rows import RowError, iter_rows
from rag_eval.judges.base import Judge, ProgressCallback
from rag_eval.metrics.diagnosis import Diagnosis, diagnose
from rag_eval.runs.judge_output import SCORE_FIELDS, coverage, invalid_row, judged_row, status_counts
from rag_eval.schema import EvalItem, JudgeStatus, ScoringMode, _as_list
from rag_eval.text.sentences import item_from_row


def row_problem(row: dict[str, Any]) -> tuple[str, str] | None:
    """(field, message) for a row the judge cannot use, else None."""
    for name in ("question", "response"):
        if name not in row or row[name] is None:
            if name == "response" and row.get("response_sentences") is not None:
                continue
            return name, "is missing"
        if not isinstance(row[name], str):
            return name, f"must be text, got {type(row[name]).__name__}"
    if row.get("documents_sentences") is not None:
        for d, doc in enumerate(_as_list(row["documents_sentences"])):
            for s, pair in enumerate(_as_list(doc)):
                pair = _as_list(pair)
                if len(pair) < 2:
                    return f"documents_sentences[{d}][{s}]", "must be a [key, sentence] pair"
        return None
    if row.get("documents") is None:
        return "documents", "is missing (give documents, a list of texts, or documents_sentences)"
    docs = row["documents"]
    if isinstance(docs, str) or not isinstance(docs, (list, tuple)) and not hasattr(docs, "tolist"):
        return "documents", "must be a list of texts"
    for i, doc in enumerate(_as_list(docs)):
        if not isinstance(doc, str):
            return f"documents[{i}]", f"must be text, got {type(doc).__name__}"
    return None


@dataclass(slots=True)
class Entry:
    """One input row: its item, or why it is invalid."""

    row_number: int
    item_id: str
    item: EvalItem | None = None
    error: RowError | None = None


def load_entries(path: str | Path) -> list[Entry]:
    """Every row of ``path`` as an :class:`Entry`, in file order. Raises
    ``FileFormatError`` only when the file as a whole cannot be read."""
    name = str(path)
    entries: list[Entry] = []
    for number, row in iter_rows(path):
        if isinstance(row, RowError):
            entries.append(Entry(number, f"row-{number}", error=row))
            continue
        item_id = str(row["id"]) if row.get("id") is not None else f"row-{number}"
        problem = row_problem(row)
        if problem is not None:
            entries.append(Entry(number, item_id, error=RowError(name, number, problem[0], problem[1])))
            continue
        entries.append(Entry(number, item_id, item=item_from_row(row, default_id=item_id)))
    return entries


@dataclass(slots=True)
class BatchSummary:
    rows: int
    counts: dict[str, int]
    coverage: float | None
    means: dict[str, float | None]  # over usable rows with a defined score
    tokens: dict[str, int]
    cost_usd: float | None  # what the judgements cost (cached ones at their original cost)
    cost_usd_spent: float | None  # what this run paid
    failed: int
    errors: list[str] = field(default_factory=list)  # first failures, "id: status: reason"
    diagnosis: Diagnosis | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__}
        out["diagnosis"] = None if self.diagnosis is None else self.diagnosis.to_dict()
        return out


def judge_entries(
    entries: Sequence[Entry],
    judge: Judge,
    mode: ScoringMode | str,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> list[dict[str, Any]]:
    """Output rows for ``entries``, in order (invalid rows included)."""
    valid = [e for e in entries if e.item is not None]
    results = iter(judge.judge([e.item for e in valid if e.item is not None], progress=progress, cancel=cancel))
    rows = []
    for entry in entries:
        if entry.item is None:
            rows.append(invalid_row(entry.item_id, str(entry.error), mode))
        else:
            rows.append(judged_row(entry.item, next(results), mode))
    return rows


def summarize(rows: Sequence[dict[str, Any]], max_errors: int = 20) -> BatchSummary:
    """Counts per status, coverage, means over usable rows only, tokens and cost."""
    usable = [r for r in rows if JudgeStatus(r["status"]).usable]
    means: dict[str, float | None] = {}
    for name in SCORE_FIELDS:
        values = [float(r[name]) for r in usable if r.get(name) is not None]
        means[name] = fmean(values) if values else None
    tokens = {"prompt": 0, "completion": 0, "total": 0}
    costs, spent = [], []
    for r in rows:
        for k in tokens:
            tokens[k] += int((r.get("tokens") or {}).get(k, 0))
        if r.get("cost_usd") is not None:
            costs.append(r["cost_usd"])
    for r in rows:
        if r.get("cost_usd_spent") is not None:
            spent.append(r["cost_usd_spent"])
    failed = [r for r in rows if not JudgeStatus(r["status"]).usable]
    return BatchSummary(
        rows=len(rows),
        counts=status_counts(list(rows)),
        coverage=coverage(list(rows)),
        means=means,
        tokens=tokens,
        cost_usd=sum(costs) if costs else None,
        cost_usd_spent=sum(spent) if spent else None,
        failed=len(failed),
        errors=[f"{r['id']}: {r['status']}: {r.get('error')}" for r in failed[:max_errors]],
        diagnosis=diagnose([(str(r["id"]), r if JudgeStatus(r["status"]).usable else None) for r in rows]),
    )
