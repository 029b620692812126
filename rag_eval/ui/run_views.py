"""Run lists shaped for the Runs and Compare pages: datasets, configurations, tags,
filters and labels. Pure functions over the run store's run dicts (no Streamlit, no
statistics: means and intervals come from the stored summaries)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval.metrics.registry import TRACE_METRICS, TRACE_SCORES
from rag_eval.runs.compare import format_diff, run_configuration, run_diff
from rag_eval.runs.summary import family_means

NO_DATASET = "(no fingerprint)"


def _newest_first(runs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(runs, key=lambda r: (r.get("created_at") or "", r.get("id") or ""), reverse=True)


def dataset_key(run: Mapping[str, Any]) -> str:
    """What identifies a run's dataset: its fingerprint (same rows, same fingerprint)."""
    return str(run.get("dataset_fingerprint") or NO_DATASET)


def dataset_label(run: Mapping[str, Any]) -> str:
    """A readable dataset name: the file or source name and the fingerprint's start."""
    path = str(run.get("dataset_path") or "").strip()
    name = Path(path).name if path else "dataset"
    fingerprint = str(run.get("dataset_fingerprint") or "")
    digest = fingerprint.split(":", 1)[-1]  # "sha256:…" -> its hex digits
    return f"{name} · {digest[:8]}" if digest else name


def datasets(runs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``{dataset key: label}``, the dataset of the newest run first."""
    out: dict[str, str] = {}
    for run in _newest_first(runs):
        out.setdefault(dataset_key(run), dataset_label(run))
    labels = list(out.values())
    for key, label in out.items():  # two files with the same name: keep them apart
        if labels.count(label) > 1 and key != NO_DATASET:
            out[key] = f"{label} ({key[:12]})"
    return out


def configurations(runs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``{config hash: short description}``, newest run's configuration first."""
    out: dict[str, str] = {}
    for run in _newest_first(runs):
        out.setdefault(str(run.get("config_hash") or ""), run_configuration(run))
    return out


def all_tags(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({str(t) for r in runs for t in (r.get("tags") or [])})


def filter_runs(
    runs: Sequence[Mapping[str, Any]],
    dataset_keys: Iterable[str] | None = None,
    config_hashes: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
) -> list[Mapping[str, Any]]:
    """Runs over any of ``dataset_keys``, with any of ``config_hashes`` and carrying every
    tag in ``tags``; None or empty means no filter on that field. Order is kept."""
    keep_ds = set(dataset_keys or ())
    keep_cfg = set(config_hashes or ())
    need_tags = set(tags or ())
    return [r for r in runs
            if (not keep_ds or dataset_key(r) in keep_ds)
            and (not keep_cfg or str(r.get("config_hash") or "") in keep_cfg)
            and need_tags <= set(r.get("tags") or ())]


def run_labels(runs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``{run id: label}``: the run's name, with the end of its id only when two runs
    share a name."""
    names = [str(r.get("name") or r.get("id")) for r in runs]
    return {str(r["id"]): (n if names.count(n) == 1 else f"{n} · {str(r['id'])[-6:]}") for r, n in zip(runs, names)}


def previous_same_dataset(run: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The newest run older than ``run`` over the same dataset (what it is compared to)."""
    key, when = dataset_key(run), (run.get("created_at") or "", run.get("id") or "")
    older = [r for r in runs if dataset_key(r) == key and (r.get("created_at") or "", r.get("id") or "") < when]
    return _newest_first(older)[0] if older else None


def changes_since(run: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str:
    """What changed in the configuration since the previous run over the same dataset."""
    previous = previous_same_dataset(run, runs)
    if previous is None:
        return "first run on this dataset"
    diff = format_diff(run_diff(previous, run))
    return "; ".join(diff) if diff else "same configuration"


def status_text(run: Mapping[str, Any]) -> str:
    """A run's status as shown, with why an ``interrupted`` run is taken for one
    (``interrupted (no heartbeat for 75 s)``)."""
    status = str(run.get("status") or "")
    detail = run.get("status_detail")
    return f"{status} ({detail})" if detail else status


def runs_table(runs: Sequence[Mapping[str, Any]], context: Sequence[Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """The run list, most telling columns first: name, metric means, coverage, dataset,
    configuration (by what it does, and what changed since the previous run on the
    dataset), tags, note, then identity."""
    context = list(context if context is not None else runs)
    labels = datasets(context)
    means = [_means(run.get("summary")) for run in runs]
    extra = list(dict.fromkeys(name for m in means for name in m if name not in TRACE_SCORES))
    rows = []
    for run, metrics in zip(runs, means):
        summary = run.get("summary") or {}
        row: dict[str, Any] = {"name": run.get("name")}
        for name in (*TRACE_METRICS, *extra):  # every family the registry declares, TRACe first
            row[name] = (metrics.get(name) or {}).get("mean")
        row.update({
            "coverage": summary.get("coverage"),
            "dataset": labels.get(dataset_key(run), dataset_label(run)),
            "configuration": run_configuration(run),
            "changed": changes_since(run, context),
            "tags": ", ".join(run.get("tags") or []),
            "note": run.get("note") or "",
            "status": status_text(run),
            "items": run.get("n_items"),
            "created_at": run.get("created_at"),
            "id": run.get("id"),
            "config_hash": run.get("config_hash"),
        })
        rows.append(row)
    return pd.DataFrame(rows)


def trend_frame(runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Long table (dataset, dataset_label, run, label, created_at, metric, mean, ci_low,
    ci_high, coverage) of the stored summaries, oldest run first: one series per dataset."""
    labels = datasets(runs)
    names = run_labels(runs)
    rows = []
    for run in sorted(runs, key=lambda r: (r.get("created_at") or "", r.get("id") or "")):
        metrics = family_means(run.get("summary")).get("trace", {})
        for name in TRACE_METRICS:
            stats = metrics.get(name) or {}
            if stats.get("mean") is None:
                continue
            rows.append({"dataset": dataset_key(run), "dataset_label": labels[dataset_key(run)],
                         "run": run.get("id"), "label": names[str(run.get("id"))],
                         "created_at": run.get("created_at"), "metric": name, "mean": stats.get("mean"),
                         "ci_low": stats.get("ci_low"), "ci_high": stats.get("ci_high"),
                         "coverage": stats.get("coverage")})
    return pd.DataFrame(rows, columns=["dataset", "dataset_label", "run", "label", "created_at", "metric", "mean",
                                       "ci_low", "ci_high", "coverage"])


def _means(summary: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """A stored summary's means, every family's, flat (TRACe without the adherence score:
    adherence shows it)."""
    families = family_means(summary)
    return {name: stats for family, means in families.items() for name, stats in means.items()
            if name != "adherence_score"}


def summary_means(summary: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The four TRACe means of a stored summary with their 95% intervals and coverage,
    then every other family's the run computed (answer correctness, retrieval, plugins)."""
    metrics = _means(summary)
    fields = ("mean", "ci_low", "ci_high", "n", "coverage")
    return [{"metric": name, **{k: (metrics.get(name) or {}).get(k) for k in fields}}
            for name in dict.fromkeys([*TRACE_METRICS, *metrics])]


def metrics_first(frame: pd.DataFrame) -> pd.DataFrame:
    """An items table with the metric columns first (then status, id, question, the rest),
    so the numbers are on screen without scrolling right."""
    metric_cols = [c for c in frame.columns if c in TRACE_SCORES]
    lead = [c for c in ("status", "id", "question") if c in frame.columns]
    return frame[[*metric_cols, *lead, *[c for c in frame.columns if c not in (*metric_cols, *lead)]]]
