"""The per-evaluation report fields of the original project, and how to read them.

Every per-row output (``rag-eval judge`` and ``score`` rows, run exports, the dashboard's
row tables) carries these six fields, under these names, beside our own:

``average``
    mean of the four TRACe metrics of the row (adherence as 0/1), over the defined ones;
``rmse_aggregation``
    the single-evaluation RMSE: ``sqrt(mean((m_i - average)^2))`` over the same metrics,
    i.e. how unevenly the four metrics sit around their mean (0 = all equal);
``overall_supported``
    the judge's own whole-response verdict when it gave one, else our adherence verdict
    (no unsupported response sentence);
``fully_supported_sentences`` / ``partially_supported_sentences`` / ``unsupported_sentences``
    response sentences by support class; the three add up to the number of response
    sentences. A sentence is *fully supported* unless it is listed as unsupported or
    its support entry says ``fully_supported: false``; a sentence that is not fully
    supported is *partially supported* when the judge cited at least one supporting
    key for it, and *unsupported* otherwise.

Interpretation of the single-evaluation RMSE (the original project's guide; a value on a
boundary takes the better band): up to 0.10 excellent, up to 0.20 good, up to 0.30
acceptable, above 0.30 poor.
The batch consistency score (``1 - min(aggregated RMSE, 1)``, see
:mod:`rag_eval.metrics.agreement`) is read through the same bands applied to ``1 - score``:
0.90 and above excellent, 0.80 good, 0.70 acceptable, below 0.70 poor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics._common import finite_number
from rag_eval.schema import RAGBENCH_TRUTH_COLUMNS, Labels
from rag_eval.text.keys import normalize_key

REPORT_FIELDS = ("average", "rmse_aggregation", "overall_supported", "fully_supported_sentences",
                 "partially_supported_sentences", "unsupported_sentences")

EXCELLENT, GOOD, ACCEPTABLE, POOR = "excellent", "good", "acceptable", "poor"
# (inclusive upper bound, band); the last band is open-ended.
RMSE_BANDS: tuple[tuple[float, str], ...] = ((0.10, EXCELLENT), (0.20, GOOD), (0.30, ACCEPTABLE), (math.inf, POOR))


def rmse_band(rmse: float | None) -> str | None:
    """The named band of a single-evaluation RMSE (None stays None)."""
    if rmse is None or math.isnan(rmse):
        return None
    value = round(rmse, 9)  # 1 - 0.9 is 0.0999...: boundaries must not depend on float noise
    for upper, band in RMSE_BANDS:
        if value <= upper:
            return band
    return POOR  # pragma: no cover - inf bound catches everything


def consistency_reading(consistency: float | None) -> str | None:
    """The band of a batch consistency score (1 - aggregated RMSE), on the RMSE scale."""
    if consistency is None or math.isnan(consistency):
        return None
    return rmse_band(max(0.0, 1.0 - consistency))


def average_and_rmse(values: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(mean, RMSE around it) of the defined TRACe metrics among ``values``; (None, None)
    when no metric is defined. Booleans count as 0/1. The four names are read from the schema
    (the registry's ``TRACE_METRICS`` are the same, tests/test_declared_once.py): the registry's
    TRACe group computes these fields, so this module cannot import the registry."""
    found = [v for v in (finite_number(values.get(m)) for m in RAGBENCH_TRUTH_COLUMNS) if v is not None]
    if not found:
        return None, None
    mean = sum(found) / len(found)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in found) / len(found))


def support_counts(labels: Labels, response_keys: Sequence[str] | None = None) -> tuple[int, int, int]:
    """(fully, partially, unsupported) response sentences; see the module docstring.

    ``response_keys`` are the row's response sentence keys; without them, the keys the
    labels mention (support entries, unsupported list) stand for the response."""
    unsupported = {normalize_key(k) for k in labels.unsupported_response_sentence_keys}
    entries = {normalize_key(s.response_sentence_key): s for s in labels.sentence_support_information}
    if response_keys is None:
        keys = list(dict.fromkeys([*entries, *unsupported]))
    else:
        keys = list(dict.fromkeys(normalize_key(k) for k in response_keys))
    fully = partially = bad = 0
    for key in keys:
        entry = entries.get(key)
        if key not in unsupported and (entry is None or entry.fully_supported is not False):
            fully += 1
        elif entry is not None and entry.supporting_sentence_keys:
            partially += 1
        else:
            bad += 1
    return fully, partially, bad


def report_fields(values: Mapping[str, Any] | None, labels: Labels | Mapping[str, Any] | None,
                  response_keys: Sequence[str] | None = None) -> dict[str, Any]:
    """The six report fields of one row. ``values`` maps metric names to the row's
    scores (None for a failed row); ``labels`` are its judge labels (a :class:`Labels`
    or the dict form). Everything is None for a row without scores and labels."""
    out: dict[str, Any] = dict.fromkeys(REPORT_FIELDS)
    if values:
        out["average"], out["rmse_aggregation"] = average_and_rmse(values)
    if labels is None:
        return out
    if not isinstance(labels, Labels):
        labels = Labels.from_dict(dict(labels))
    verdict = labels.overall_supported
    if verdict is None and values and values.get("adherence") is not None:
        verdict = bool(values["adherence"])
    out["overall_supported"] = None if verdict is None else bool(verdict)
    fully, partially, bad = support_counts(labels, response_keys)
    out.update(fully_supported_sentences=fully, partially_supported_sentences=partially, unsupported_sentences=bad)
    return out
