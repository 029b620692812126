"""Comparing runs: per-metric means with bootstrap confidence intervals and coverage,
paired differences against the first (baseline) run, and the per-question differences
sorted by size. Pure functions over the item dicts of the run store.

Items are paired by ``id`` (the dataset row id), and a difference exists only when
both runs scored the item: a failure in either run is left out of the paired numbers
and shows up in the coverage instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.aggregate import finite_number, mean_difference_interval, mean_interval, mean_with_coverage
from rag_eval.metrics.registry import METRICS, TRACE_SCORES, item_values
from rag_eval.runs.summary import UNKNOWN_LANGUAGE


def _value(item: Mapping[str, Any], metric: str) -> float | None:
    """A metric's value in a stored item record, wherever its family keeps it; None when absent or not a number."""
    return finite_number(item_values(item).get(metric))


def available_metrics(items_by_run: Mapping[str, Sequence[dict[str, Any]]]) -> list[str]:
    """TRACe metrics first, then any retrieval metric present in every run, then answer
    correctness (rows with reference answers) and per-item metrics every run has."""
    retrieval: set[str] | None = None
    correctness: set[str] | None = None
    for items in items_by_run.values():
        names = {k for i in items for k in (i.get("retrieval") or {})}
        retrieval = names if retrieval is None else retrieval & names
        present = {k for i in items for group in ("correctness", "metrics") for k in (i.get(group) or {})}
        correctness = present if correctness is None else correctness & present
    return list(TRACE_SCORES) + sorted(retrieval or ()) + sorted(correctness or ())


def all_metrics(items_by_run: Mapping[str, Sequence[dict[str, Any]]]) -> list[str]:
    """TRACe metrics, then every retrieval metric and answer correctness found in *any*
    run (runs at different top-k store recall@2 and recall@5: both are shown, each
    with the coverage of the runs that have it)."""
    retrieval = {k for items in items_by_run.values() for i in items for k in (i.get("retrieval") or {})}
    correctness = {k for items in items_by_run.values() for i in items for group in ("correctness", "metrics")
                   for k in (i.get(group) or {})}
    by_family = sorted(retrieval, key=lambda m: (m.split("@")[0], len(m), m))  # hit@2, hit@5, hit@10, mrr, …
    return list(TRACE_SCORES) + by_family + sorted(correctness)


def metric_table(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per (run, metric): mean, 95% CI, n scored and coverage."""
    metrics = list(metrics or available_metrics(items_by_run))
    rows = []
    for run_id, items in items_by_run.items():
        for metric in metrics:
            stats = mean_with_coverage([_value(i, metric) for i in items], len(items)).to_dict()
            rows.append({"run": run_id, "metric": metric, **stats})
    return rows


def _language(*items: Mapping[str, Any]) -> str:
    """A pair's language: the baseline item's, else the other's (one row, one language),
    else :data:`~rag_eval.runs.summary.UNKNOWN_LANGUAGE`, as the run summaries count it."""
    return next((str(i["language"]) for i in items if i.get("language")), UNKNOWN_LANGUAGE)


def question_differences(base: Sequence[dict[str, Any]], other: Sequence[dict[str, Any]], metrics: Sequence[str],
                         other_run: str = "") -> list[dict[str, Any]]:
    """Per question and metric, ``other - base`` where both runs scored it (with the
    question's language), largest absolute difference first (ties: by item id, so the order
    is stable)."""
    base_by_id = {i["id"]: i for i in base}
    rows = []
    for item in other:
        b = base_by_id.get(item["id"])
        if b is None:
            continue
        language = _language(b, item)
        for metric in metrics:
            x, y = _value(b, metric), _value(item, metric)
            if x is None or y is None:
                continue
            rows.append({"id": item["id"], "question": item.get("question"), "language": language, "metric": metric,
                         "run": other_run, "base": x, "other": y, "difference": y - x})
    return sorted(rows, key=lambda r: (-abs(r["difference"]), str(r["id"]), r["metric"]))


def _paired_rows(run_id: str, baseline: str, differences: Sequence[Mapping[str, Any]], metrics: Sequence[str],
                 **group: str) -> list[dict[str, Any]]:
    """Per metric, the mean of ``differences`` (one run's against the baseline) with its
    bootstrap interval and the pairs it rests on; ``group`` (a language) heads each row."""
    rows = []
    for metric in metrics:
        values = [d["difference"] for d in differences if d["metric"] == metric]
        low, high, _ = mean_interval(values)
        rows.append({"run": run_id, "baseline": baseline, **group, "metric": metric, "n_pairs": len(values),
                     "mean_difference": sum(values) / len(values) if values else None,
                     "ci_low": low, "ci_high": high})
    return rows


def paired_by_language(base: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
                       differences: Sequence[Mapping[str, Any]], metrics: Sequence[str], run_id: str,
                       baseline: str) -> list[dict[str, Any]]:
    """:func:`compare_runs`' paired rows per language of the paired questions (``language`` heads
    each row; most questions first), when they span more than one language: a difference
    that holds in one language may not in another. ``differences``: :func:`question_differences`
    of ``other`` against ``base``. A language whose questions no metric pairs shows n 0."""
    base_by_id = {i["id"]: i for i in base}  # the questions both runs hold, scored or not
    languages = Counter(_language(base_by_id[i["id"]], i) for i in other if i["id"] in base_by_id)
    if len(languages) < 2:
        return []
    return [row for language, _ in sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))
            for row in _paired_rows(run_id, baseline, [d for d in differences if d["language"] == language], metrics,
                                    language=language)]


# ---------------------------------------------------------------------- a common cut-off
# Retrieval metrics are stored at each run's own top-k (``hit_rate@2`` in a k=2 run,
# ``hit_rate@5`` in a k=5 run; ``mrr`` over the k retrieved). Side by side they are different
# metrics: runs are compared at one cut-off k that every run reaches, recomputed from each
# item's ranking (its retrieved chunks' documents, in rank order) cut at k.
_AT_K = re.compile(r"([a-z_0-9]+)@(\d+)")  # a stored retrieval value at its run's k (not a cosine one)


def run_cutoff(items: Sequence[dict[str, Any]]) -> int | None:
    """The top-k a run's retrieval metrics were computed at (the largest ``…@k`` stored), or
    None for a run without retrieval metrics (no gold document ids, or a judge-only run)."""
    ks = [int(m[2]) for i in items for name in (i.get("retrieval") or {}) if (m := _AT_K.fullmatch(name))]
    return max(ks) if ks else None


def common_cutoffs(items_by_run: Mapping[str, Sequence[dict[str, Any]]]) -> list[int]:
    """Every k that all runs reach (1 … the smallest run's k), or [] when some run has no
    retrieval metric. The last one (the smallest run's own k) is the default."""
    ks = [run_cutoff(items) for items in items_by_run.values()]
    if not ks or any(k is None for k in ks):
        return []
    return list(range(1, min(k for k in ks if k is not None) + 1))


def _ranking(item: dict[str, Any]) -> list[str] | None:
    """The item's retrieved chunks' document ids in rank order (None when not stored)."""
    chunks = item.get("chunks")
    if isinstance(chunks, list) and chunks and all(isinstance(c, Mapping) and c.get("doc_id") is not None for c in chunks):
        return [str(c["doc_id"]) for c in chunks]
    return None


def retrieval_at(item: dict[str, Any], k: int, own_k: int | None) -> dict[str, float | None] | None:
    """``item``'s retrieval metrics at cut-off ``k`` (``recall@k``, ``mrr@k``... every one the
    registry declares), computed as a run at top-k computes them: the registry's retrieval
    metrics over the documents of the first k chunks, each once, against the gold ids.
    Without a stored ranking, the stored metrics serve when the run's own k is ``k``;
    otherwise None (the item then counts as not scored for these metrics, never as 0)."""
    gold = frozenset(str(g) for g in (item.get("gold_doc_ids") or []))
    ranking = _ranking(item)
    stored = item.get("retrieval") or {}
    if gold and ranking is not None:
        from rag_eval.metrics.registry import MetricItem, compute_item_metrics

        cut = MetricItem("", "", "", [], ranking=list(dict.fromkeys(ranking[:k])), gold_ids=gold, k=k)
        values = compute_item_metrics(METRICS.built_in(), cut).families.get("retrieval") or {}
        return {name if "@" in name else f"{name}@{k}": value for name, value in values.items()}  # mrr: at k
    if own_k == k and stored:
        out = {name: value for name, value in stored.items() if (m := _AT_K.fullmatch(name)) and int(m[2]) == k}
        if "mrr" in stored:
            out[f"mrr@{k}"] = stored["mrr"]  # over the k retrieved: MRR at k
        return out or None
    return None


def at_cutoff(items_by_run: Mapping[str, Sequence[dict[str, Any]]], k: int) -> dict[str, list[dict[str, Any]]]:
    """Copies of every run's items whose ``retrieval`` holds the metrics at cut-off ``k``
    only (cosine metrics and other cut-offs are left out: they are not comparable)."""
    def cut(items: Sequence[dict[str, Any]], own: int | None) -> list[dict[str, Any]]:
        return [{**item, "retrieval": (retrieval_at(item, k, own) if item.get("retrieval") else None) or None}
                for item in items]

    return {run_id: cut(items, run_cutoff(items)) for run_id, items in items_by_run.items()}


def cutoff_metrics(k: int) -> list[str]:
    """The retrieval metrics of a ranking against gold ids, at cut-off ``k``, in the registry's order
    (those against gold passages need embeddings: never recomputed at another k)."""
    return [f"{m.name}@{k}" for m in METRICS.built_in() if m.family == "retrieval" and "retrieval" in m.needs]


def compare_runs(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Everything ``rag-eval compare`` shows. The first run is the baseline."""
    if len(items_by_run) < 2:
        raise ValueError("compare needs at least two runs")
    metrics = list(metrics or available_metrics(items_by_run))
    runs = list(items_by_run)
    base = items_by_run[runs[0]]
    differences, paired, by_language = [], [], []
    for run_id in runs[1:]:
        found = question_differences(base, items_by_run[run_id], metrics, run_id)
        paired += _paired_rows(run_id, runs[0], found, metrics)
        by_language += paired_by_language(base, items_by_run[run_id], found, metrics, run_id, runs[0])
        differences.extend(found)
    # "differ most" lists questions that differ: an unchanged score is no difference to open
    differences = [d for d in differences if d["difference"] != 0]
    differences.sort(key=lambda r: (-abs(r["difference"]), str(r["id"]), r["metric"], r["run"]))
    return {
        "runs": runs,
        "metrics": metric_table(items_by_run, metrics),
        "paired": paired,
        "paired_by_language": by_language,
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
        from rag_eval.judges.kinds import JUDGE_KINDS

        kind = str(judge.get("kind", "?"))
        declared = JUDGE_KINDS.find(kind)  # a kind on an endpoint is named with its model
        model = judge.get("model") if declared is not None and declared.endpoint else None
        parts.append(f"judge {kind}{':' + str(model) if model else ''}")
    return " · ".join(parts) or "—"


# ---------------------------------------------------------------------- what a run does
#: ``meta.kind`` of a run that judged the responses its rows carried (no retrieval, no generation)
JUDGE_ONLY = "judge-given-responses"


def _acting(run: Mapping[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Whether ``run`` judged given responses, and the part of its configuration that acted:
    a judge-only run stores the whole configuration, but only its judge did anything; a
    retrieval in mode ``auto`` is named with the mode it ran in (``auto (bm25)``), recorded
    when the run started, since the collection decides it."""
    config = dict(run.get("config") or {})
    meta = run.get("meta") or {}
    if meta.get("kind") == JUDGE_ONLY:
        return True, {"judge": config.get("judge") or {}}
    retrieval = config.get("retrieval") or {}
    if retrieval:
        config["retrieval"] = {**retrieval, "mode": mode_ran(retrieval.get("mode"), meta.get("retrieval_mode"))}
    return False, config


def mode_ran(configured: Any, used: str | None) -> Any:
    """A retrieval mode as a run shows it: ``auto (bm25)`` when ``auto`` resolved to BM25."""
    return f"{configured} ({used})" if configured == "auto" and used else configured


def run_configuration(run: Mapping[str, Any]) -> str:
    """What a run's configuration did, in a few words (:func:`config_summary` of what acted);
    a judge-only run (responses given by the dataset) had no retrieval or generation."""
    judge_only, acting = _acting(run)
    return ("judge given responses · " if judge_only else "") + config_summary(acting)


def run_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What differs between what two runs did, as :func:`config_diff` rows. Beside a RAG run,
    a judge-only run differs first in where its responses came from (``responses: retrieved
    and generated (dense top-5 · extractive) → given by the dataset``), then in its judge's
    settings; its stored retrieval and generator settings never acted, so they never count."""
    judge_only_a, acting_a = _acting(before)
    judge_only_b, acting_b = _acting(after)
    if judge_only_a == judge_only_b:
        return config_diff(acting_a, acting_b)

    def responses(judge_only: bool, acting: Mapping[str, Any]) -> str:
        if judge_only:
            return "given by the dataset"
        return f"retrieved and generated ({config_summary({k: v for k, v in acting.items() if k != 'judge'})})"

    return [{"path": "responses", "before": responses(judge_only_a, acting_a),
             "after": responses(judge_only_b, acting_b)},
            *config_diff({"judge": acting_a.get("judge") or {}}, {"judge": acting_b.get("judge") or {}})]


def differences_message(result: Mapping[str, Any]) -> str | None:
    """What stands in place of the per-question differences when none is listed, agreeing
    with the paired table beside it (None when some question differs): questions scored by
    both runs that all scored the same are not "no question scored by both"."""
    if result.get("differences"):
        return None
    pairs = max((int(p.get("n_pairs") or 0) for p in result.get("paired") or ()), default=0)
    if pairs:
        return (f"No question differs: each of the {pairs} question(s) scored by both the baseline and another run "
                "got the same score on every metric compared.")
    return "No question was scored by both the baseline and another run."


# ---------------------------------------------------------------------- the judge and a difference
def judge_residuals(items: Sequence[Mapping[str, Any]], reviewed: Mapping[str, Mapping[str, Any]],
                    metric: str) -> dict[str, float]:
    """Item id -> the judge's score of ``metric`` minus the reviewer's, on the run's items
    that both scored (a failed item has no judge score and is left out, never a 0)."""
    out = {}
    for item in items:
        human = reviewed.get(str(item.get("id")))
        judged = _value(item, metric) if human else None
        truth = finite_number(human.get(metric)) if human else None
        if judged is not None and truth is not None:
            out[str(item["id"])] = judged - truth
    return out


#: Where the reviewed rows a judge bias is measured on come from (the Compare notes say it).
HOW_TO_REVIEW = ("Judges page → Review queue, then Save review in the support map; or `rag-eval labels queue RUN`, "
                 "then `rag-eval labels import FILE --run RUN --reviewer NAME`")


def judge_error_notes(runs: Sequence[Mapping[str, Any]], paired: Sequence[Mapping[str, Any]],
                      items_by_run: Mapping[str, Sequence[Mapping[str, Any]]],
                      reviewed: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """What the judge may have to do with each paired difference (``compare_runs(...)["paired"]``)
    of a judge-scored metric: the one rule of the Compare page, ``rag-eval compare`` and the
    HTML report. ``reviewed``: per run id, item id -> the reviewer's scores
    (``labels.store.reviewed_scores``).

    The judge's *random* error never explains a difference: every per-question difference
    already contains it, so the paired interval does too. What can is a *bias* that differs
    between the configurations (completeness judged against more context at a larger k),
    and only reviewed rows of both runs measure it: per run, the residuals judge - reviewer
    on its reviewed rows; their difference of means (run - baseline) with a bootstrap
    interval over the reviewed questions. A difference the paired interval sets apart from 0
    "may come from the judge" when it lies inside that interval, and gets the measured bias
    beside it when it does not. Where a pair of runs lacks reviewed rows, one sentence per
    comparison says the bias is not measured and how to measure it. Runs that did the same
    thing (:func:`run_diff` empty) get nothing: no bias can depend on a configuration they
    share."""
    by_id = {str(r["id"]): r for r in runs}
    judged = set(TRACE_SCORES) | {m for scores in reviewed.values() for row in scores.values() for m in row}
    notes: list[str] = []
    unmeasured: dict[tuple[str, str], str] = {}
    for row in paired:
        run, base = by_id.get(str(row["run"])), by_id.get(str(row["baseline"]))
        metric, difference = str(row["metric"]), row.get("mean_difference")
        if run is None or base is None or metric not in judged or difference is None or not run_diff(base, run):
            continue
        ids = str(base["id"]), str(run["id"])
        pair = f"{run.get('name') or run['id']} vs {base.get('name') or base['id']} (baseline)"
        res = [judge_residuals(items_by_run.get(i) or (), reviewed.get(i) or {}, metric) for i in ids]
        bias, low, high, _ = mean_difference_interval(res[0], res[1])
        if bias is None or low is None or high is None:
            unmeasured.setdefault(ids, f"{pair}: {len(res[1])} and {len(res[0])} reviewed rows")
            continue
        if difference == 0 or (row.get("ci_low") is not None and row["ci_low"] <= 0 <= row["ci_high"]):
            continue  # the paired interval already allows no difference at all: nothing to explain
        label = metric.replace("_", " ")
        measured = (f"the judge's bias difference measured on reviewed rows ({bias:+.3f}, 95% CI [{low:+.3f}, "
                    f"{high:+.3f}]; {len(res[1])} and {len(res[0])} reviewed rows)")
        if low <= difference <= high:
            notes.append(f"{pair}, {label}: the difference {difference:+.3f} lies within {measured}: it may come "
                         "from the judge rather than the systems")
        else:
            notes.append(f"{pair}, {label}: {measured} does not explain the difference {difference:+.3f}")
    if unmeasured:
        notes.append(
            "A judge bias that differs between configurations is not measured (" + "; ".join(unmeasured.values())
            + "; at least 2 in each run needed). Each paired interval already contains the judge's random error; a "
            "bias that depends on the configuration (e.g. completeness judged against more context at a larger k) "
            f"does not show in it. To measure it, review rows of both runs ({HOW_TO_REVIEW}): the comparison then "
            "sets the bias beside each difference.")
    return notes


# ---------------------------------------------------------------------- answer correctness
#: Answer correctness is ROUGE-L against the reference (the registry's ``rouge_l``), one
#: number under one name: the record stores it; runs stored before it did get it here.
CORRECTNESS_METRIC = "rouge_l"


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
    """Copies of the items with ``correctness["rouge_l"]`` where the dataset row had a
    reference answer and the record (stored before records kept it) has none, so
    :func:`compare_runs` tables every run's answer correctness under one name."""
    out = []
    for item in items:
        stored = dict(item.get("correctness") or {})
        value = None if stored.get(CORRECTNESS_METRIC) is not None else answer_correctness(item)
        out.append({**item, "correctness": {**stored, CORRECTNESS_METRIC: value}} if value is not None else dict(item))
    return out


def run_labels(runs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each run's label wherever runs are compared (the report, the Compare page, ``rag-eval
    compare``): its name with the tail of its id (the whole id when two runs still look alike)."""
    labels = {str(r["id"]): f"{r.get('name')} · {str(r['id'])[-6:]}" for r in runs}
    if len(set(labels.values())) < len(labels):
        labels = {str(r["id"]): f"{r.get('name')} · {r['id']}" for r in runs}
    return labels


def compare_at_cutoff(items_by_run: Mapping[str, Sequence[dict[str, Any]]], k: int | None = None,
                      metrics: Sequence[str] | None = None,
                      runs: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The one comparison of runs: the report, the Compare page, ``rag-eval compare`` and
    ``rag_eval.compare`` table what it returns. :func:`compare_runs` (means with 95% intervals
    and coverage, paired differences against the first run) with retrieval metrics at one
    cut-off every run reaches: ``k`` when it is one of :func:`common_cutoffs`, else the
    largest of them (the smallest run's own k). Answer correctness is compared when every
    run has it (runs stored before records kept ROUGE-L get it: :func:`with_correctness`).
    Without a common cut-off (a run has no ranked retrieval), the metrics every run has are
    compared; ``metrics`` (named by the user) are compared as named.

    Adds ``cutoffs`` (the choosable ks), ``k`` (the one used, or None), ``left_out``
    (metrics some run has that are not comparable, e.g. ``recall@5`` beside a k=2 run) and
    ``labels`` (each run's, by name: :func:`run_labels` of ``runs``; else its id)."""
    items_by_run = {run_id: with_correctness(items) for run_id, items in items_by_run.items()}
    labels = run_labels(runs) if runs else {run_id: run_id for run_id in items_by_run}
    cutoffs = common_cutoffs(items_by_run)
    if metrics:  # the user named the metrics: compared as named
        return {**compare_runs(items_by_run, metrics), "cutoffs": cutoffs, "k": None, "left_out": [],
                "labels": labels}
    chosen = (k if k in cutoffs else cutoffs[-1]) if cutoffs else None
    if chosen is not None:
        # answer correctness every run has (bleu, rouge_l, answer_match): no cut-off to match
        stored = {k for items in items_by_run.values() for i in items for group in ("correctness", "metrics")
                  for k in (i.get(group) or {})}
        correctness = [m for m in available_metrics(items_by_run) if m in stored]
        metrics = [*TRACE_SCORES, *cutoff_metrics(chosen), *correctness]
        result = compare_runs(at_cutoff(items_by_run, chosen), metrics)
    else:
        metrics = available_metrics(items_by_run)
        result = compare_runs(items_by_run, metrics)
    present = all_metrics(items_by_run)
    if chosen is not None:  # a run's stored ``mrr`` is over its own k retrieved: MRR at its own k
        own = sorted({f"mrr@{own_k}" for items in items_by_run.values() if (own_k := run_cutoff(items)) is not None
                      and any("mrr" in (i.get("retrieval") or {}) for i in items)}, key=lambda m: int(m[4:]))
        present = [n for m in present for n in (own if m == "mrr" else [m])]
    left_out = [m for m in present if m not in metrics and m not in TRACE_SCORES]
    return {**result, "cutoffs": cutoffs, "k": chosen, "left_out": left_out, "labels": labels}
