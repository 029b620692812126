"""The original project's per-row report fields of a stored run item, computed from what every item
record holds (scores, labels and, when kept, the keyed response sentences), so runs stored before these
fields existed get them too, in exports and in the dashboard's tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.diagnosis import DEFAULT_HIGH, DEFAULT_LOW, Diagnosis, diagnose
from rag_eval.metrics.report_fields import report_fields


def _response_keys(item: Mapping[str, Any]) -> list[str] | None:
    stored = item.get("item")
    if isinstance(stored, Mapping) and stored.get("response_sentences") is not None:
        return [str(pair[0]) for pair in stored["response_sentences"] if len(pair)]
    return None


def item_report_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """``average``, ``rmse_aggregation``, ``overall_supported`` and the support counts of
    one item record (all None for an item without scores)."""
    scores = item.get("scores") or None
    labels = item.get("labels") if scores else None
    return report_fields(scores, labels if isinstance(labels, Mapping) else None, _response_keys(item))


def run_diagnosis(items: Sequence[dict[str, Any]], high: float = DEFAULT_HIGH, low: float = DEFAULT_LOW) -> Diagnosis:
    """The pattern diagnosis of a run's items (items without scores are not diagnosed)."""
    return diagnose([(str(i.get("id")), i.get("scores") or None) for i in items], high, low)


