"""What the store keeps with a finished run: the summary (:mod:`rag_eval.runs.summary`, the one summary
path), the agreement with ground truth and the diagnosis, over the item dicts the run store returns.
Means, intervals and coverage follow :mod:`rag_eval.metrics.aggregate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rag_eval.metrics.agreement import agreement
from rag_eval.metrics.diagnosis import MAX_IDS_SHOWN
from rag_eval.metrics.report_fields import consistency_reading
from rag_eval.runs.summary import SUMMARY_FIELDS as SUMMARY_ITEM_FIELDS
from rag_eval.runs.summary import RunTally
from rag_eval.runs.summary import summarize_items as summarize_items  # the Runs report and tests read it here

#: the item fields :func:`summarize_stored_run` reads (``RunStore.items(run_id, SUMMARY_FIELDS)``)
SUMMARY_FIELDS = (*SUMMARY_ITEM_FIELDS, "truth")
AGREEMENT_N_BOOT = 500


def agreement_rows(items: Sequence[dict[str, Any]], n_boot: int = AGREEMENT_N_BOOT) -> list[dict[str, Any]]:
    """The run's agreement with its ground truth, one row per statistic (statistic,
    value, ci_low, ci_high, n, reason, coverage; ``reading`` is the consistency score's
    band); empty when no item carries truth."""
    if not any(i.get("truth") for i in items):
        return []
    # an item without scores or without truth is None on that side: counted in the coverage
    report = agreement([dict(i["scores"]) if i.get("scores") else None for i in items],
                       [dict(i["truth"]) if i.get("truth") else None for i in items], n_boot=n_boot)
    stats = {f"rmse:{m}": e for m, e in report.rmse.items()}
    stats.update({"aggregated_rmse": report.aggregated_rmse, "consistency": report.consistency,
                  "hallucination_auroc": report.hallucination_auroc})
    return [{"statistic": name, "value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n,
             "reason": est.reason, "coverage": report.coverage.fraction,
             "reading": consistency_reading(est.value) if name == "consistency" else None}
            for name, est in stats.items()]


def summarize_stored_run(read: Callable[[Sequence[str]], Iterable[dict[str, Any]]]) -> dict[str, Any]:
    """What the store keeps with a finished run (:func:`summarize_items` plus the agreement
    with ground truth, ``agreement``: :func:`agreement_rows`, so the Runs page draws every
    run's figures without reading its items), ``read(fields)`` giving its items (a page at
    a time): one streaming pass for the summary and the pattern diagnosis (``diagnosis``:
    its first ids per pattern, so ``runs show`` reads no item), and a second one for the
    agreement only when an item carries ground truth."""
    seen_truth = False
    tally = RunTally(keep_rows=0, keep_ids=MAX_IDS_SHOWN)  # what runs show prints: every run's summary stays small
    for item in read(SUMMARY_FIELDS):
        seen_truth = seen_truth or bool(item.get("truth"))
        tally.add(item)
    return {**tally.stored(), "agreement": agreement_rows(list(read(("scores", "truth")))) if seen_truth else [],
            "diagnosis": tally.diagnosis.result().to_dict()}


