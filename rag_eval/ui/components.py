"""Streamlit drawing helpers: ``draw_*`` functions that only draw what they are given.

Numbers come from the library (scores, agreement statistics, run records); these
functions lay them out. The support map HTML itself is the pure
:func:`rag_eval.display.support_map.support_map_html`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import streamlit as st

from rag_eval.display.style import RESP_UNKNOWN
from rag_eval.display.support_map import response_sentence_class, support_map_html
from rag_eval.display.views import SupportView
from rag_eval.ui.constants import STATUS_OK_VALUES
from rag_eval.ui.markdown import md

if TYPE_CHECKING:  # pandas and Altair load when a page first draws a table or chart
    import pandas as pd

    from rag_eval.ui.charts import AnyChart


def _sentence_label(view: SupportView, key: str) -> str:
    text = view.item.sentence_text().get(key, "")
    short = text if len(text) <= 80 else text[:77] + "…"
    return f"{key} · {response_sentence_class(key, view.labels)} · {short}"


# A click on a response sentence of a support map selects it (as the select box does). The map
# is st.html (escaped text, no script); this script-only component listens for clicks on the page
# and sends the clicked sentence's key, for the map whose ``data-map`` is the one it was mounted
# for. One listener per browser tab; each mount updates which callback a map's clicks go to.
_SENTENCE_CLICKS_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const maps = (window.__ragEvalSupportMaps = window.__ragEvalSupportMaps || {});
  maps[data] = setTriggerValue;
  if (window.__ragEvalSupportMapClicks) return;
  window.__ragEvalSupportMapClicks = true;
  document.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const span = target ? target.closest(".sm-response .sm-s") : null;
    const map = span ? span.closest(".support-map") : null;
    const send = map ? window.__ragEvalSupportMaps[map.dataset.map] : null;
    if (send) send("clicked", span.dataset.key);
  });
}
"""
_sentence_clicks: Any = None


def _mount_sentence_clicks(key: str, on_click: Any) -> None:
    global _sentence_clicks
    if _sentence_clicks is None:  # registered once per process (a name registered twice warns)
        _sentence_clicks = st.components.v2.component("rag_eval.sentence_clicks", js=_SENTENCE_CLICKS_JS)
    _sentence_clicks(key=f"{key}.clicks", data=key, on_clicked_change=on_click, height=0)


def clicked_sentence(state_value: Any) -> str | None:
    """The response key a click sent, from the component's value in session state."""
    if isinstance(state_value, dict):
        value = state_value.get("clicked")
    else:
        value = getattr(state_value, "clicked", None)
    return str(value) if value else None


def picker_key(key: str, view: SupportView) -> str:
    """The sentence picker's widget key: the map's ``key`` and the identity of the answer it
    describes (row id, title, response sentences). A browser keeps a widget's value as long
    as its key is unchanged, whatever the server resets, so a new answer with the same
    sentence keys (a, b, c) kept showing the old answer's pick while the map outlined the
    new one's first sentence; a new answer is a new widget, which starts on its first sentence."""
    import hashlib

    parts = [view.item.id, view.title, *(f"{s.key}\x1e{s.text}" for s in view.item.response_sentences)]
    return f"{key}.{hashlib.blake2s(chr(31).join(parts).encode('utf-8'), digest_size=6).hexdigest()}"


def preselect_sentence(key: str, view: SupportView, sentence: str | None) -> None:
    """Start the picker of ``view``'s map (drawn later in this run with ``key``) on ``sentence``."""
    if sentence and sentence in view.item.response_keys:
        st.session_state[picker_key(key, view)] = sentence


def draw_support_map(view: SupportView, key: str) -> str | None:
    """The support map of one judged row; a select box (or a click on a response
    sentence in the map) picks the response sentence whose supporting document sentences
    are outlined and whose explanation shows. Returns the picked sentence, also kept in
    ``st.session_state[key]`` for the page (e.g. to carry it to another page)."""
    st.markdown(md("**{}**", view.title))
    if view.error:
        st.warning(md("Judge status {}: {}", view.status, view.error))
    keys = view.item.response_keys
    if not keys:
        st.info("This row has no response sentences.")
    selected = None
    widget = picker_key(key, view)
    if keys and view.labels is not None:
        if st.session_state.get(widget) not in keys:
            st.session_state.pop(widget, None)
        selected = st.selectbox(
            "Response sentence", keys, key=widget, format_func=lambda k: _sentence_label(view, k),
            help="Or click a sentence of the response below.",
        )
    elif keys and response_sentence_class(keys[0], view.labels) == RESP_UNKNOWN:
        st.info("No judge labels for this row: sentences are shown uncoloured.")
    st.session_state[key] = selected
    st.html(support_map_html(view.item, view.labels, selected, map_id=key))
    if selected is not None:
        def select_clicked() -> None:
            clicked = clicked_sentence(st.session_state.get(f"{key}.clicks"))
            if clicked in keys:
                st.session_state[widget] = clicked

        _mount_sentence_clicks(key, select_clicked)
    return selected


# Up to this many rows a table's numbers are written by the one rule, cell by cell (a pandas
# Styler: ~0.35 ms of server CPU a row); a longer table (a Batch run of 2,000 items) has its
# floats cut to three significant digits by the grid itself, so a rerun stays cheap.
STYLED_ROWS = 500


def _cell_format(column: pd.Series, unit: Any) -> Any:
    """How one column's cells read: a count stored as floats (a missing value made the column
    float: tokens, items) as whole numbers, anything else by the one rule with the column's unit."""
    from rag_eval.text.numbers import format_number

    values = column.dropna()
    if unit is None and len(values) and all(float(v).is_integer() for v in values) and values.abs().max() >= 2:
        return lambda v: format_number(None if v != v else int(v))
    return lambda v: format_number(v, unit)


def draw_table(frame: pd.DataFrame, key: str | None = None, height: int | None = None) -> None:
    """A pandas table, full width, its numbers as :func:`rag_eval.text.numbers.format_number`
    writes them (three significant digits, coverage as a percentage, times in seconds, costs
    in dollars); the cells keep their values, so a column still sorts by number."""
    from pandas.api.types import is_float_dtype, is_numeric_dtype

    from rag_eval.text.numbers import unit_of

    kwargs: dict[str, Any] = {"hide_index": True, "key": key}
    if height:
        kwargs["height"] = height
    numeric = [c for c in frame.columns if isinstance(c, str) and is_numeric_dtype(frame[c])
               and not frame[c].dtype == bool and (unit_of(c) or is_float_dtype(frame[c]))]
    if not numeric:
        st.dataframe(frame, **kwargs)
    elif len(frame) <= STYLED_ROWS:
        formats = {c: _cell_format(frame[c], unit_of(c)) for c in numeric}
        st.dataframe(frame.reset_index(drop=True).style.format(formats), **kwargs)
    else:
        st.dataframe(frame, column_config={c: st.column_config.NumberColumn(format="%.3g") for c in numeric}, **kwargs)


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


def draw_key_status(present: Iterable[tuple[str, bool]]) -> None:
    """Whether each secret is set: never the value."""
    for name, ok in present:
        st.markdown(md("- {}: ", name) + ("✅ present" if ok else "— not set"))
