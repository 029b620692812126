"""Drawing the single-evaluation RMSE bands, the pattern diagnosis and the report
download on a page. Draw only: the bands, the diagnosis and the report come from the
library (``metrics.report_fields``, ``runs.item_fields.run_diagnosis``,
``report.html``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from rag_eval.display.style import SPREAD_BAND_LABELS, SPREAD_BAND_MEANING, SPREAD_HELP
from rag_eval.metrics.report_fields import RMSE_BANDS
from rag_eval.ui.markdown import md

if TYPE_CHECKING:
    import pandas as pd

    from rag_eval.metrics.diagnosis import Diagnosis

MAX_IDS = 20


def draw_bands(spread: pd.DataFrame) -> None:
    """How many rows fall in each band of metric spread (``spread`` from ``frames.spread_frame``):
    named for what it measures (how evenly a row's metrics sit), never as a quality verdict."""
    counts = spread["band"].value_counts()
    st.markdown("**Metric spread per row** (how evenly each row's four metrics sit; not a quality score)",
                help=SPREAD_HELP)
    cols = st.columns(len(RMSE_BANDS))
    low = 0.0
    for col, (upper, band) in zip(cols, RMSE_BANDS):
        bounds = f"> {low:.2f}" if upper == float("inf") else f"≤ {upper:.2f}"
        col.metric(f"{SPREAD_BAND_LABELS[band].capitalize()} ({bounds})", int(counts.get(band, 0)),
                   help=SPREAD_BAND_MEANING[band])
        low = upper
    st.caption(SPREAD_HELP)


def draw_diagnosis(diagnosis: Diagnosis) -> None:
    """Each pattern found, with what it means, what to do and the rows that show it."""
    st.markdown("**Diagnosis**")
    if not diagnosis.findings:
        st.info("No pattern found." if diagnosis.rows_considered else "No scored row to diagnose.")
        return
    for f in diagnosis.findings:
        ids = ", ".join(f.ids[:MAX_IDS]) + (f" … (+{len(f.ids) - MAX_IDS})" if len(f.ids) > MAX_IDS else "")
        with st.container(border=True):
            st.markdown(f"**{f.title}** · {len(f.ids)} row(s), {f.share:.0%} — {f.meaning}. *Fix:* {f.action}.")
            st.caption(md("rows: {}", ids))
    st.caption(f"{diagnosis.rows_considered} of {diagnosis.rows_given} rows scored; high ≥ {diagnosis.high:g}, "
               f"low ≤ {diagnosis.low:g}.")


def report_bytes(run_id: str) -> bytes:
    """The self-contained HTML report of one run, built when the button is clicked
    (Streamlit calls ``data`` on a worker thread, so the page never waits for it)."""
    from rag_eval.report.html import build_report
    from rag_eval.runs.store import RunStore, default_db_location

    store = RunStore(default_db_location())
    try:
        return build_report([store.get_run(run_id)], {run_id: store.items(run_id)}).encode("utf-8")
    finally:
        store.close()


def draw_report_download(run_id: str, key: str) -> None:
    """A "Download report" button for the run's self-contained HTML report."""
    st.download_button("Download report", data=lambda: report_bytes(run_id), file_name=f"rag-eval-report-{run_id}.html",
                       mime="text/html", key=key, icon=":material/download:", on_click="ignore",
                       help="One HTML file with charts, bands, diagnosis and the worst rows' support maps; opens offline.")
