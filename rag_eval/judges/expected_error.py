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
