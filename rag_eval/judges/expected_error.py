"""How far a judge's scores may be from the truth in the domain it is used on.

Every judge run carries, per TRACe metric, the judge's *expected error*: the per-row
RMSE between the judge's score and the label's score that the judge showed where it
was measured. Where the figure comes from is part of the figure:

- a calibrated local judge (``local:<version>+NAME``): the calibration's
  cross-validated error on the user's own labelled rows (after calibration), with its
  bootstrap interval: *this* domain;
- the shipped local judge: its leave-one-domain-out figures on RAGBench (trained on six
  domains, tested on the seventh; stored in the model's ``model.json`` by
  ``scripts/train_local_judge.py --evaluate``): the mean over seven domains and the
  worst one, i.e. what to expect on *a* domain it was not trained on, not a measurement
  of this one;
- an LLM judge: unknown. Nothing measured says how far its labels are from a human's
  here; a review (Judges page) measures it.

Pure functions over plain dicts, so the run store (as JSON in a run's summary), the CLI,
the pages and the report all show the same thing.
"""

from __future__ import annotations

import math
from typing import Any

from rag_eval.metrics.registry import TRACE_METRICS

#: Run-summary metric name -> the name the judge's own figures use: the registry's TRACe
#: metrics measured by an RMSE (adherence is measured by an AUROC), under RAGBench's short
#: names (``rmse_relevance``, ``rmse_utilization``, ``rmse_completeness``).
METRICS = {name: name.removeprefix("context_") for name in TRACE_METRICS if name != "adherence"}
SOURCE_CALIBRATION = "calibration"
SOURCE_HELD_OUT = "leave_one_domain_out"
SOURCE_UNKNOWN = "unknown"


def _local_held_out(model: Any) -> dict[str, Any]:
    quality = (getattr(model, "metadata", None) or {}).get("held_out_quality") or {}
    mean, per = quality.get("mean") or {}, quality.get("per_subset") or {}
    metrics = {}
    for run_name, name in METRICS.items():
        key = f"rmse_{name}"
        if key not in mean:
            continue
        worst = max((float(v[key]) for v in per.values() if key in v), default=None)
        metrics[run_name] = {"rmse": round(float(mean[key]), 3),
                             "range": [round(min(float(v[key]) for v in per.values()), 3), round(worst, 3)]
                             if worst is not None else None}
    auroc = mean.get("auroc")
    return {
        "source": SOURCE_HELD_OUT if metrics else SOURCE_UNKNOWN,
        "basis": (f"local:{model.version} on RAGBench domains it was not trained on (leave one domain out, "
                  f"{len(per)} domains: mean, and the range over domains); not measured on this domain"
                  if metrics else f"local:{getattr(model, 'version', '?')} carries no held-out figures"),
        "metrics": metrics,
        **({"hallucination_auroc": round(float(auroc), 3)} if auroc is not None else {}),
    }


def _from_calibration(calibration: dict[str, Any], fallback: dict[str, Any]) -> dict[str, Any]:
    cv = calibration.get("cross_validation")
    if cv is None:  # format 1: figures on a small hold-out, no intervals
        held = calibration.get("held_out") or {}
        after = held.get("after") or {}
        metrics = {run_name: {"rmse": round(float(after[f"rmse_{name}"]), 3), "range": None}
                   for run_name, name in METRICS.items() if after.get(f"rmse_{name}") is not None}
        return {"source": SOURCE_CALIBRATION,
                "basis": (f"calibration '{calibration.get('name')}' (format 1): measured on {held.get('rows', 0)} "
                          "held-out row(s) of this domain, no interval; fit it again for cross-validated figures"),
                "metrics": metrics or fallback["metrics"]}
    metrics = {}
    for run_name, name in METRICS.items():
        m = cv["metrics"].get(name)
        if m is not None:
            metrics[run_name] = {"rmse": round(float(m["after"]), 3), "interval": m.get("after_interval"),
                                 "range": None}
    auroc = (cv.get("auroc") or {}).get("after") or {}
    return {
        "source": SOURCE_CALIBRATION,
        "basis": (f"calibration '{calibration.get('name')}': cross-validated on {cv['rows']} labelled row(s) of this "
                  "domain (95% bootstrap interval)"),
        "metrics": metrics,
        **({"hallucination_auroc": auroc["value"]} if auroc.get("measured") else
           {"hallucination_auroc_unmeasured": auroc.get("reason")} if auroc else {}),
    }


def expected_judge_error(judge: Any) -> dict[str, Any]:
    """The expected error of ``judge`` (any judge object with a ``name``) as a JSON-able
    dict: ``judge``, ``source`` (calibration / leave_one_domain_out / unknown),
    ``basis`` (in words), ``metrics`` (run metric name -> ``rmse``, ``interval`` or
    ``range``)."""
    name = str(getattr(judge, "name", judge))
    model = getattr(judge, "model", None)
    if name.startswith("local:") and model is not None:
        held = _local_held_out(model)
        calibration = getattr(judge, "calibration", None)
        if calibration:
            from rag_eval.judges.calibration import load_calibration

            try:
                full = load_calibration(str(calibration["name"]))
            except (FileNotFoundError, ValueError):
                full = None
            if full is not None and full.get("sha256") == calibration.get("sha256"):
                return {"judge": name, **_from_calibration(full, held)}
        return {"judge": name, **held}
    return {"judge": name, "source": SOURCE_UNKNOWN, "metrics": {},
            "basis": ("unknown: no measurement says how far this judge's labels are from a human's here; "
                      "review rows on the Judges page to measure it")}


def for_local_model(model: Any, name: str | None = None) -> dict[str, Any]:
    """The shipped local judge's held-out figures (no judge object needed)."""
    return {"judge": name or f"local:{model.version}", **_local_held_out(model)}


def for_judge_name(name: str | None, calibration: str | None = None) -> dict[str, Any]:
    """From a stored run's judge name / configuration alone (runs stored before runs
    carried their expected error): the local judge's figures, else unknown."""
    if name and name.startswith("local"):
        from rag_eval.judges.local import LocalModel

        model = LocalModel.load()
        base = for_local_model(model)
        if calibration:
            from rag_eval.judges.calibration import load_calibration

            try:
                return {"judge": f"local:{model.version}+{calibration}",
                        **_from_calibration(load_calibration(calibration), base)}
            except (FileNotFoundError, ValueError):
                base["basis"] += f" (calibration '{calibration}' not found here)"
        return base
    return expected_judge_error(name or "unknown judge")


def for_run(run: dict[str, Any]) -> dict[str, Any]:
    """A stored run's expected judge error: the one its summary carries, else derived
    from its configuration's judge (``judge.kind`` / ``judge.calibration``)."""
    stored = (run.get("summary") or {}).get("expected_judge_error")
    if stored:
        return dict(stored)
    judge = (run.get("config") or {}).get("judge") or {}
    kind = judge.get("kind") if isinstance(judge, dict) else None
    if kind == "local":
        return for_judge_name("local", judge.get("calibration"))
    return expected_judge_error(f"{kind or 'unknown'} judge")


def metric_error(expected: dict[str, Any], metric: str) -> float | None:
    """The expected per-row error of ``metric`` (run metric name), or None when unknown."""
    entry = (expected.get("metrics") or {}).get(metric)
    return float(entry["rmse"]) if entry and entry.get("rmse") is not None else None


def describe(expected: dict[str, Any], metric: str) -> str:
    """``expected judge error ± 0.17 here (…)`` for one metric, or why it is unknown."""
    err = metric_error(expected, metric)
    if err is None:
        return "expected judge error unknown"
    where = {SOURCE_CALIBRATION: "here (calibrated on this domain)",
             SOURCE_HELD_OUT: "on a new domain (RAGBench, leave one domain out)"}.get(expected.get("source", ""), "")
    entry = expected["metrics"][metric]
    extra = ""
    if entry.get("interval"):
        extra = f", 95% CI {entry['interval'][0]:.2f}-{entry['interval'][1]:.2f}"
    elif entry.get("range"):
        extra = f", {entry['range'][0]:.2f}-{entry['range'][1]:.2f} across domains"
    return f"expected judge error ± {err:.2f} per row {where}{extra}".replace("  ", " ")


def summary_lines(expected: dict[str, Any], means: dict[str, float | None] | None = None) -> list[str]:
    """Text lines for the CLI: each metric's mean beside its expected judge error, and the basis."""
    lines = []
    for metric in METRICS:
        mean = (means or {}).get(metric)
        head = f"{metric} {mean:.2f}, " if isinstance(mean, int | float) else f"{metric}: "
        lines.append(head + describe(expected, metric))
    lines.append(f"judge error basis: {expected.get('basis', 'unknown')}")
    return lines


#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054


def same_judge(expected_a: dict[str, Any], expected_b: dict[str, Any]) -> bool:
    """Whether two runs were scored by one judge (same name, calibration included), so a
    bias the judge has in common cancels in their paired difference."""
    name_a, name_b = expected_a.get("judge"), expected_b.get("judge")
    return bool(name_a) and name_a == name_b and expected_a.get("source") == expected_b.get("source")


def difference_band(metric: str, n_pairs: int, n_changed: int, expected_a: dict[str, Any],
                    expected_b: dict[str, Any]) -> float | None:
    """Half-width of the 95% band that the judges' own errors put on a *paired difference of
    means* over ``n_pairs`` questions, ``n_changed`` of which scored differently; None when a
    judge's error is unknown.

    A judge's per-row error is a bias plus a random part. Scored by one judge, the bias is
    shared by both runs and cancels in the paired difference; the random parts of the
    changed pairs do not, and they average out as 1/n: band = z * sqrt(m * (e_a² + e_b²)) / n,
    with m changed pairs and the per-row errors e as the bound of each random part (a per-row
    RMSE is at least the residuals' spread, so the band errs on the wide side). A pair whose
    score did not change carries no judge disagreement, and identical runs get a band of 0.
    Scored by two judges, their biases need not cancel: the per-row errors bound them,
    sqrt(e_a² + e_b²), added to the random part."""
    err_a, err_b = metric_error(expected_a, metric), metric_error(expected_b, metric)
    if err_a is None or err_b is None or n_pairs <= 0:
        return None
    random_part = Z95 * math.sqrt(max(0, n_changed) * (err_a ** 2 + err_b ** 2)) / n_pairs
    if same_judge(expected_a, expected_b):
        return random_part
    return random_part + math.sqrt(err_a ** 2 + err_b ** 2)


def difference_note(metric: str, difference: float | None, n_pairs: int, n_changed: int,
                    expected_a: dict[str, Any], expected_b: dict[str, Any]) -> str | None:
    """A sentence when a paired difference of means (``run - baseline``) lies inside the band
    of :func:`difference_band`, so it may be the judges' rather than the systems'. None when
    it lies outside, when nothing changed, or when a judge's error is unknown."""
    if difference is None or n_changed <= 0:
        return None
    band = difference_band(metric, n_pairs, n_changed, expected_a, expected_b)
    if band is None or band <= 0 or abs(difference) > band:
        return None
    how = ("one judge: its shared bias cancels, the random part of the changed pairs does not"
           if same_judge(expected_a, expected_b) else "two judges: their biases need not cancel")
    return (f"{metric.replace('_', ' ')}: the difference {difference:+.3f} lies within the judge error of a paired "
            f"difference (± {band:.3f}, 95%; {n_changed} of {n_pairs} questions changed; {how}): it may come "
            "from the judge rather than the systems; confirm on reviewed rows")


def run_caption(run: dict[str, Any]) -> str:
    """One line for a page: the run's name, its means beside its judge's expected error, and
    the basis."""
    expected = for_run(run)
    metrics = (run.get("summary") or {}).get("trace") or {}  # a stored summary's TRACe family
    parts = []
    for metric in METRICS:
        mean = (metrics.get(metric) or {}).get("mean")
        err = metric_error(expected, metric)
        if mean is None:
            continue
        parts.append(f"{metric.replace('_', ' ')} {mean:.2f}" + (f", expected judge error ± {err:.2f}" if err is not None
                                                                 else ", expected judge error unknown"))
    name = run.get("name") or run.get("id") or "run"
    basis = expected.get("basis", "unknown")
    return (f"{name}: " + "; ".join(parts) + f" (per row; {basis})") if parts else f"{name}: expected judge error: {basis}"
