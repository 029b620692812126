"""The local judge's expected error (:attr:`rag_eval.judges.kinds.JudgeKind.expected_error` of
the ``local`` kind): its leave-one-domain-out figures on RAGBench, or a calibration's
cross-validated figures on the user's own rows. Plain dicts, the format
:mod:`rag_eval.judges.expected_error` describes (which asks each judge's kind for them).
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
#: Languages the shipped model's held-out figures were measured in (RAGBench is English);
#: in any other the expected error is "not measured" (bench/bench_language_judges.py
#: measures the judges' AUROC by language, not these RMSEs).
MEASURED_LANGUAGES = ("en",)


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
                  f"{len(per)} domains: mean, and the range over domains); not measured on this domain; "
                  f"measured in {', '.join(MEASURED_LANGUAGES)} only, not measured in other languages"
                  if metrics else f"local:{getattr(model, 'version', '?')} carries no held-out figures"),
        "metrics": metrics,
        **({"languages": list(MEASURED_LANGUAGES)} if metrics else {}),
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


def local_expected_error(judge: Any, calibration: str | None = None) -> dict[str, Any] | None:
    """The local judge's expected error: ``judge`` is a judge object (its model and loaded
    calibration), or a run's recorded judge name with its ``calibration`` name (runs stored
    before runs carried their expected error)."""
    model = getattr(judge, "model", None)
    if model is not None:
        name = str(judge.name)
        held = _local_held_out(model)
        loaded = getattr(judge, "calibration", None)
        if loaded:
            from rag_eval.judges.calibration import load_calibration

            try:
                full = load_calibration(str(loaded["name"]))
            except (FileNotFoundError, ValueError):
                full = None
            if full is not None and full.get("sha256") == loaded.get("sha256"):
                return {"judge": name, **_from_calibration(full, held)}
        return {"judge": name, **held}
    if not isinstance(judge, str):
        return None
    from rag_eval.judges.local import LocalModel

    model = LocalModel.load()
    base = {"judge": f"local:{model.version}", **_local_held_out(model)}
    if calibration:
        from rag_eval.judges.calibration import load_calibration

        try:
            return {"judge": f"local:{model.version}+{calibration}",
                    **_from_calibration(load_calibration(calibration), base)}
        except (FileNotFoundError, ValueError):
            base["basis"] += f" (calibration '{calibration}' not found here)"
    return base


