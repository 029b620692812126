"""Comparing runs: per-metric means with bootstrap confidence intervals and coverage,
paired differences against the first (baseline) run, and the per-question differences
sorted by size. Pure functions over the item dicts of the run store.

Items are paired by ``item_id`` (the dataset row id), and a difference exists only when
both runs scored the item: a failure in either run is left out of the paired numbers
and shows up in the coverage instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.aggregate import finite, mean_interval
from rag_eval.runs.stats import SCORE_NAMES, mean_with_ci


def _value(item: dict[str, Any], metric: str) -> float | None:
    for group in ("scores", "retrieval", "correctness"):
        value = (item.get(group) or {}).get(metric)
        if value is not None:
            values = finite([value])
            return values[0] if values else None
    return None


def available_metrics(items_by_run: Mapping[str, Sequence[dict[str, Any]]]) -> list[str]:
    """TRACe metrics first, then any retrieval metric present in every run, then answer
    correctness when every run has it (rows with reference answers)."""
    retrieval: set[str] | None = None
    correctness: set[str] | None = None
    for items in items_by_run.values():
        names = {k for i in items for k in (i.get("retrieval") or {})}
        retrieval = names if retrieval is None else retrieval & names
        present = {k for i in items for k in (i.get("correctness") or {})}
        correctness = present if correctness is None else correctness & present
    return list(SCORE_NAMES) + sorted(retrieval or ()) + sorted(correctness or ())


def all_metrics(items_by_run: Mapping[str, Sequence[dict[str, Any]]]) -> list[str]:
    """TRACe metrics, then every retrieval metric and answer correctness found in *any*
    run (runs at different top-k store recall@2 and recall@5: both are shown, each
    with the coverage of the runs that have it)."""
    retrieval = {k for items in items_by_run.values() for i in items for k in (i.get("retrieval") or {})}
    correctness = {k for items in items_by_run.values() for i in items for k in (i.get("correctness") or {})}
    by_family = sorted(retrieval, key=lambda m: (m.split("@")[0], len(m), m))  # hit@2, hit@5, hit@10, mrr, …
    return list(SCORE_NAMES) + by_family + sorted(correctness)


def metric_table(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per (run, metric): mean, 95% CI, n scored and coverage."""
    metrics = list(metrics or available_metrics(items_by_run))
    rows = []
    for run_id, items in items_by_run.items():
        for metric in metrics:
            stats = mean_with_ci([_value(i, metric) for i in items], len(items))
            rows.append({"run": run_id, "metric": metric, **stats})
    return rows


def question_differences(
    base: Sequence[dict[str, Any]], other: Sequence[dict[str, Any]], metrics: Sequence[str], other_run: str = ""
) -> list[dict[str, Any]]:
    """Per question and metric, ``other - base`` where both runs scored it, largest
    absolute difference first (ties: by item id, so the order is stable)."""
    base_by_id = {i["item_id"]: i for i in base}
    rows = []
    for item in other:
        b = base_by_id.get(item["item_id"])
        if b is None:
            continue
        for metric in metrics:
            x, y = _value(b, metric), _value(item, metric)
            if x is None or y is None:
                continue
            rows.append({"item_id": item["item_id"], "question": item.get("question"), "metric": metric,
                         "run": other_run, "base": x, "other": y, "difference": y - x})
    return sorted(rows, key=lambda r: (-abs(r["difference"]), str(r["item_id"]), r["metric"]))


def paired_table(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Mean paired difference (run - baseline) with a bootstrap CI, per run and metric."""
    runs = list(items_by_run)
    if len(runs) < 2:
        return []
    base = items_by_run[runs[0]]
    rows = []
    for run_id in runs[1:]:
        diffs = question_differences(base, items_by_run[run_id], metrics, run_id)
        for metric in metrics:
            values = [d["difference"] for d in diffs if d["metric"] == metric]
            low, high, _ = mean_interval(values)
            rows.append({"run": run_id, "baseline": runs[0], "metric": metric, "n_pairs": len(values),
                         "mean_difference": sum(values) / len(values) if values else None,
                         "ci_low": low, "ci_high": high})
    return rows


def compare_runs(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Everything ``rag-eval compare`` shows. The first run is the baseline."""
    if len(items_by_run) < 2:
        raise ValueError("compare needs at least two runs")
    metrics = list(metrics or available_metrics(items_by_run))
    runs = list(items_by_run)
    base = items_by_run[runs[0]]
    differences = []
    for run_id in runs[1:]:
        differences.extend(question_differences(base, items_by_run[run_id], metrics, run_id))
    differences.sort(key=lambda r: (-abs(r["difference"]), str(r["item_id"]), r["metric"], r["run"]))
    return {
        "runs": runs,
        "metrics": metric_table(items_by_run, metrics),
        "paired": paired_table(items_by_run, metrics),
        "differences": differences,
    }


# ---------------------------------------------------------------------- configurations
IGNORED_CONFIG_KEYS = frozenset({"name", "config_hash"})


def flatten_config(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"retrieval": {"k": 2}}`` -> ``{"retrieval.k": 2}`` (the run's name is left out:
    it does not change what the system does)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if not prefix and key in IGNORED_CONFIG_KEYS:
            continue
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_config(value, f"{path}."))
        else:
            out[path] = value
    return out


def config_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The settings that differ between two run configurations, as rows
    ``{"path", "before", "after"}`` sorted by path; a setting missing on one side is None."""
    a, b = flatten_config(before), flatten_config(after)
    return [{"path": p, "before": a.get(p), "after": b.get(p)}
            for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)]


def _show(value: Any) -> str:
    return "—" if value is None or value == "" else str(value)


def format_diff(diff: Sequence[Mapping[str, Any]]) -> list[str]:
    """``["retrieval.k: 2 → 5", ...]``; an empty list means the same configuration."""
    return [f"{d['path']}: {_show(d['before'])} → {_show(d['after'])}" for d in diff]


def config_summary(config: Mapping[str, Any]) -> str:
    """A short name for what a configuration does, e.g. ``dense top-5 · extractive · judge local``."""
    retrieval = config.get("retrieval") or {}
    generator = config.get("generator") or {}
    judge = config.get("judge") or {}
    parts = []
    if retrieval:
        parts.append(f"{retrieval.get('mode', '?')} top-{retrieval.get('k', '?')}")
    if generator:
        kind = generator.get("kind", "?")
        model = generator.get("model") if kind != "extractive" else None
        parts.append(f"{kind}:{model}" if model else str(kind))
    if judge:
        kind = judge.get("kind", "?")
        parts.append(f"judge {kind}{':' + str(judge['model']) if kind == 'llm' and judge.get('model') else ''}")
    return " · ".join(parts) or "—"


# ---------------------------------------------------------------------- answer correctness
CORRECTNESS_METRIC = "answer_correctness"


def answer_correctness(item: Mapping[str, Any]) -> float | None:
    """ROUGE-L F1 of the item's answer against its ``reference_answer`` (the best of
    several references); None when there is no reference or no answer."""
    references = item.get("reference_answers") or item.get("reference_answer")
    if isinstance(references, str):
        references = [references]
    references = [r for r in (references or []) if isinstance(r, str) and r.strip()]
    answer = item.get("answer")
    scored = item.get("status") in ("ok", "repaired")
    if not references or not isinstance(answer, str) or not answer.strip() or not scored:
        return None
    from rag_eval.metrics.text import rouge

    return max(rouge(answer, ref)["rougeL"].fmeasure for ref in references)


def with_correctness(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of the items with ``correctness["answer_correctness"]`` where the dataset row
    had a reference answer (so :func:`compare_runs` tables it), beside what the record
    already holds (``bleu``, ``rouge_l``, ``answer_match`` from :mod:`rag_eval.runs.records`)."""
    out = []
    for item in items:
        value = answer_correctness(item)
        stored = dict(item.get("correctness") or {})
        out.append({**item, "correctness": {**stored, CORRECTNESS_METRIC: value}} if value is not None else dict(item))
    return out
