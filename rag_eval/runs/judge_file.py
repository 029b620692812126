"""Judging a file of rows: what ``rag-eval judge`` calls (and scripts can too).

Rows are read in order and prepared by :func:`rag_eval.runs.prepare.prepare_row`; a row
that cannot be read or lacks a field becomes an ``invalid_input`` output row naming file, row and
field, and the good rows are judged. Output rows keep input order.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from rag_eval.datasets.io import iter_raw
from rag_eval.io.rows import write_rows
from rag_eval.judges.base import Judge, ProgressCallback
from rag_eval.metrics.diagnosis import Diagnosis, diagnose
from rag_eval.metrics.report_fields import REPORT_FIELDS
from rag_eval.runs.judge_output import SCORE_FIELDS, coverage, invalid_row, judged_row, status_counts
from rag_eval.runs.judge_stream import Job, stream_judge
from rag_eval.runs.prepare import PreparedRow, prepare_file, prepare_row, row_id
from rag_eval.runs.row_cache import RowCache
from rag_eval.schema import JudgeResult, JudgeStatus, ScoringMode

#: One input row of a file to judge (see :mod:`rag_eval.runs.prepare`).
Entry = PreparedRow


def iter_entries(path: str | Path) -> Iterator[Entry]:
    """Every row of ``path`` prepared by :func:`rag_eval.runs.prepare.prepare_row` (the one
    preparation of every entry point), in file order, one at a time. Raises
    ``FileFormatError`` only when the file as a whole cannot be read."""
    name = str(path)
    for number, row in iter_raw(path):
        yield prepare_row(row, number, name)


def load_entries(path: str | Path) -> list[Entry]:
    """Every row of ``path`` prepared, in file order (all in memory; the streaming path
    is :func:`judge_file`)."""
    return prepare_file(path)


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


# -- streaming: what `rag-eval judge` runs ------------------------------------------------------
FLUSH_EVERY_S = 0.5
SUMMARY_FIELDS = ("id", "status", "error", *SCORE_FIELDS, *REPORT_FIELDS, "tokens", "cost_usd", "cost_usd_spent")


def compact(row: dict[str, Any]) -> dict[str, Any]:
    """What :func:`summarize` and the gate need of an output row (labels, texts and the
    judge's raw answer left out), so a long file's summary stays small."""
    return {k: row[k] for k in SUMMARY_FIELDS if k in row}


class RowWriter:
    """Writes output rows as they come: ``.jsonl`` line by line (flushed at least every
    ``FLUSH_EVERY_S``, so a reader sees rows as they finish); other formats are
    written whole at :meth:`close`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.streaming = self.path.suffix.lower() == ".jsonl"
        self._held: list[dict[str, Any]] = []
        self._fh = self.path.open("w", encoding="utf-8") if self.streaming else None
        self._flushed = 0.0

    def write(self, row: dict[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            now = time.monotonic()
            if now - self._flushed >= FLUSH_EVERY_S:  # rows show up for a reader within a second
                self._fh.flush()
                self._flushed = now
        else:
            self._held.append(row)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        else:
            write_rows(self._held, self.path)
            self._held = []


def judge_jobs(
    path: str | Path, judge: Judge, mode: ScoringMode | str, cancel: threading.Event | None = None,
    row_cache: RowCache | None = None, on_invalid: Callable[[Entry], None] | None = None,
) -> Iterator[Job[dict[str, Any]]]:
    """The rows of ``path`` as pipeline jobs, prepared one at a time (run in the
    pipeline's preparing thread). A row found in ``row_cache`` is not prepared."""
    name = str(path)
    for number, row in iter_raw(path):
        if isinstance(row, dict):
            item_id = row_id(row, number)
            if cancel is not None and cancel.is_set():  # stop preparing: the rest is cancelled
                yield Job(done=invalid_row(item_id, "cancelled before it was judged", mode) | {
                    "status": JudgeStatus.CANCELLED.value})
                continue
            key = row_cache.key(row, item_id) if row_cache is not None else None
            hit = row_cache.get(key) if row_cache is not None and key is not None else None
            if hit is not None:
                yield Job(done=judged_row(hit[0], hit[1], mode))
                continue
        else:
            key = None
        entry = prepare_row(row, number, name)
        if entry.item is None:
            if on_invalid is not None:
                on_invalid(entry)
            yield Job(done=invalid_row(entry.item_id, str(entry.error), mode))
        else:
            yield Job(item=entry.item, context=key)


def judge_file(
    path: str | Path,
    out: str | Path,
    judge: Judge,
    mode: ScoringMode | str,
    *,
    concurrency: int | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
    on_invalid: Callable[[Entry], None] | None = None,
    use_row_cache: bool = True,
) -> list[dict[str, Any]]:
    """Judge every row of ``path`` as a stream (see :mod:`rag_eval.runs.judge_stream`),
    writing output rows to ``out`` in input order as they finish. Returns the
    :func:`compact` rows for :func:`summarize` and the gate."""
    row_cache = RowCache.for_judge(judge) if use_row_cache else None
    kept: list[dict[str, Any]] = []
    writer = RowWriter(out)

    def finish(job: Job[dict[str, Any]], result: JudgeResult) -> dict[str, Any]:
        assert job.item is not None
        if row_cache is not None and job.context is not None:
            row_cache.put(job.context, job.item, result)
        return judged_row(job.item, result, mode)

    def sink(row: dict[str, Any]) -> None:
        writer.write(row)
        kept.append(compact(row))

    try:
        stream_judge(judge_jobs(path, judge, mode, cancel, row_cache, on_invalid), judge, finish, sink,
                     concurrency=concurrency, cancel=cancel, progress=progress)
    finally:
        writer.close()
    return kept
