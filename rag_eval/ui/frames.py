"""Pure table shaping for the pages: run records and library results as DataFrames.

No statistic is computed here: means, intervals, RMSE and AUROC come from
``rag_eval.runs.stats`` / ``rag_eval.runs.compare`` / ``rag_eval.metrics.agreement``;
these helpers only line values up in columns and filter rows, and are tested without
Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from rag_eval.display.tables import spread_frame  # noqa: F401  (the pages read it as frames.spread_frame)


def items_frame(items: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per stored item: the one flat row (:func:`rag_eval.runs.records.item_rows`),
    every column every other output has (None stays missing, never 0)."""
    from rag_eval.runs.records import item_rows, row_columns

    rows = item_rows(items)
    return pd.DataFrame(rows, columns=row_columns(rows))


def filter_items(
    frame: pd.DataFrame, statuses: Iterable[str] | None = None, ranges: Mapping[str, tuple[float, float]] | None = None
) -> pd.DataFrame:
    """Rows whose status is in ``statuses`` (all when None) and whose metrics fall in
    ``ranges`` (inclusive). A range narrower than [0, 1] drops rows lacking the metric,
    since a missing score is not inside any range."""
    out = frame
    if statuses is not None:
        out = out[out["status"].isin(list(statuses))]
    for metric, (low, high) in (ranges or {}).items():
        if low <= 0.0 and high >= 1.0:
            continue
        values = out[metric]
        out = out[values.notna() & (values >= low) & (values <= high)]
    return out


AGREEMENT_COLUMNS = ["run", "statistic", "value", "ci_low", "ci_high", "n", "reason", "coverage", "reading"]


def agreement_rows_frame(rows_by_run: Mapping[str, Sequence[Mapping[str, Any]]]) -> pd.DataFrame:
    """The stored agreement rows of several runs (``summary["agreement"]``) as one table."""
    rows = [{"run": run_id, **row} for run_id, run_rows in rows_by_run.items() for row in run_rows]
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def with_reasons(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``reason`` column (why a mean or interval is missing) as text: an
    empty cell where nothing is missing (never a grey ``None``), and no column at all when
    no row has a reason."""
    if "reason" not in frame.columns:
        return frame
    if not frame["reason"].notna().any():
        return frame.drop(columns="reason")
    return frame.assign(reason=frame["reason"].fillna(""))


def differing_questions(differences: Sequence[Mapping[str, Any]], limit: int = 20) -> pd.DataFrame:
    """The library's per-question differences (already sorted, largest first), top ``limit``."""
    frame = pd.DataFrame(list(differences)[:limit])
    if frame.empty:
        return pd.DataFrame(columns=["id", "question", "metric", "run", "base", "other", "difference"])
    return frame


def default_comparison(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The runs to compare first (``runs`` newest first): the newest pair of runs over
    the same dataset (same fingerprint), so their questions pair up; else the two newest."""
    for i, run in enumerate(runs):
        fingerprint = run.get("dataset_fingerprint")
        if not fingerprint:
            continue
        for other in runs[i + 1:]:
            if other.get("dataset_fingerprint") == fingerprint:
                return [run["id"], other["id"]]
    return [r["id"] for r in runs[:2]]


def paired_frame(paired: Sequence[Mapping[str, Any]], run_labels: Mapping[str, str], metric_label: Any) -> pd.DataFrame:
    """The library's paired differences (``runs.compare.compare_runs``' ``paired``) for display: every
    metric shown, one row per run and metric; a metric no question pairs says why instead of
    showing an empty number."""
    frame = pd.DataFrame(list(paired))
    if frame.empty:
        return pd.DataFrame(columns=["run", "baseline", "metric", "n_pairs", "mean_difference", "ci_low", "ci_high",
                                     "note"])
    note = ["no question scored by both runs" if not n else "one question: no interval" if n == 1 else ""
            for n in frame["n_pairs"]]
    return frame.assign(run=frame["run"].map(run_labels), baseline=frame["baseline"].map(run_labels),
                        metric=frame["metric"].map(metric_label), note=note)
