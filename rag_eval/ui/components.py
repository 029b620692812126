"""Streamlit drawing helpers: ``draw_*`` functions that only draw what they are given.

Numbers come from the library (scores, agreement statistics, run records); these
functions lay them out. The support map HTML itself is the pure
:func:`rag_eval.ui.support_map.support_map_html`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import streamlit as st

from rag_eval.schema import METRIC_NAMES, TraceScores
from rag_eval.ui.constants import METRIC_LABELS, RESP_UNKNOWN, STATUS_OK_VALUES
from rag_eval.ui.help import metric_help
from rag_eval.ui.markdown import escape_markdown
from rag_eval.ui.support_map import (  # noqa: F401 - re-exported for pages and tests
    legend_html,
    response_sentence_class,
    support_map_html,
)
from rag_eval.ui.views import SupportView

if TYPE_CHECKING:  # pandas and Altair load when a page first draws a table or chart
    import pandas as pd

    from rag_eval.ui.charts import AnyChart


def fmt(value: float | bool | None, digits: int = 3) -> str:
    """A metric value for display; ``None`` (undefined / failed) shows as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{float(value):.{digits}f}"


def draw_scores(scores: TraceScores | None, judge: str = "", status: str = "") -> None:
    """The four TRACe metrics as st.metric, with the mode and judge that produced them."""
    if scores is None:
        st.warning(f"No scores: judge status {status or 'unknown'}.")
        return
    cols = st.columns(4)
    values = {
        "context_relevance": fmt(scores.context_relevance),
        "context_utilization": fmt(scores.context_utilization),
        "completeness": fmt(scores.completeness),
        "adherence": f"{fmt(scores.adherence)} ({fmt(scores.adherence_score, 2)})",
    }
    for col, name in zip(cols, METRIC_NAMES):
        col.metric(METRIC_LABELS[name], values[name], help=metric_help(name))
    st.caption(f"Scoring mode **{scores.mode}** · judge **{judge or 'unknown'}**" + (f" · status {status}" if status else ""))
    if scores.diagnostics.get("completeness_vacuous"):
        st.caption("Completeness is vacuous: the judge found no relevant sentence, so there is nothing to cover.")
    repairs = scores.diagnostics.get("label_repairs")
    if repairs:
        st.caption("Labels repaired for consistency: "
                   + "; ".join(f"{k.replace('_', ' ')} {', '.join(map(str, v))}" for k, v in repairs.items()))


def _sentence_label(view: SupportView, key: str) -> str:
    text = view.item.sentence_text().get(key, "")
    short = text if len(text) <= 80 else text[:77] + "…"
    return f"{key} · {response_sentence_class(key, view.labels)} · {short}"


def draw_support_map(view: SupportView, key: str) -> None:
    """The support map of one judged row; a select box picks the response sentence
    whose supporting document sentences are outlined and whose explanation shows."""
    st.markdown(f"**{escape_markdown(view.title)}**")
    if view.error:
        st.warning(escape_markdown(f"Judge status {view.status}: {view.error}"))
    keys = view.item.response_keys
    if not keys:
        st.info("This row has no response sentences.")
    selected = None
    if keys and view.labels is not None:
        selected = st.selectbox(
            "Response sentence", keys, key=key, format_func=lambda k: _sentence_label(view, k)
        )
    elif keys and response_sentence_class(keys[0], view.labels) == RESP_UNKNOWN:
        st.info("No judge labels for this row: sentences are shown uncoloured.")
    st.html(support_map_html(view.item, view.labels, selected))


def draw_table(frame: pd.DataFrame, key: str | None = None, height: int | None = None) -> None:
    """A pandas table, full width."""
    kwargs: dict[str, Any] = {"hide_index": True, "key": key}
    if height:
        kwargs["height"] = height
    st.dataframe(frame, **kwargs)


def draw_chart(chart: AnyChart, key: str) -> None:
    """A Vega-Lite chart built by ``ui.charts``/``ui.run_charts``. Single and layered
    charts stretch to the container's width; a chart that fixes its own width (the radar
    and the sentence sets keep their aspect) and faceted small multiples (fixed panel
    widths: Vega-Lite cannot fit a facet to a width) keep their size."""
    import altair as alt  # loaded already: the chart was built with it

    fixed = isinstance(chart, alt.FacetChart) or isinstance(chart.width, int)
    st.altair_chart(chart, width="content" if fixed else "stretch", key=key)


def draw_coverage(n_ok: int, n_total: int, statuses: dict[str, int] | None = None) -> None:
    """Coverage line every summary shows: how many rows are scored and why others are not."""
    failed = ", ".join(f"{k}: {v}" for k, v in sorted((statuses or {}).items()) if k not in STATUS_OK_VALUES)
    st.caption(f"Coverage: **{n_ok}/{n_total}** rows scored" + (f" · not scored: {failed}" if failed else ""))


def draw_legend() -> None:
    st.html(legend_html())


def draw_key_status(present: Iterable[tuple[str, bool]]) -> None:
    """Whether each secret is set: never the value."""
    for name, ok in present:
        st.markdown(f"- `{name}`: {'✅ present' if ok else '— not set'}")
