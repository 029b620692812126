"""Tables the dashboard and the HTML report both build from stored items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rag_eval.metrics.agreement import metric_spread


def spread_frame(items: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Per scored item: the library's single-evaluation spread (mean of the four
    metrics, RMSE spread around it, its named band)."""
    rows = []
    for item in items:
        if not item.get("scores"):
            continue
        spread = metric_spread(item["scores"])
        rows.append({"id": item.get("id"), "mean": spread.mean, "spread_rmse": spread.rmse,
                     "band": spread.reading, "n_metrics": spread.n_metrics})
    return pd.DataFrame(rows, columns=["id", "mean", "spread_rmse", "band", "n_metrics"])
