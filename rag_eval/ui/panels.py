"""Streamlit panels added for issue 15: the four means of a run with their intervals,
TRACe scores that never truncate side by side, and the relevant/utilized sets of one
judged row. They only draw numbers the library computed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.schema import TraceScores
from rag_eval.text.numbers import format_number
from rag_eval.ui.help import metric_help, metric_label, set_counts
from rag_eval.ui.markdown import md


def draw_means(means: Sequence[Mapping[str, Any]]) -> None:
    """A run's means as st.metric (labelled, four a row), each with its 95% interval and coverage."""
    cols = [col for start in range(0, len(means), 4) for col in st.columns(4)]
    for col, row in zip(cols, means):
        name = str(row["metric"])
        interval = (f"95% CI [{format_number(row.get('ci_low'))}, {format_number(row.get('ci_high'))}]"
                    if row.get("ci_low") is not None else "no interval")
        coverage = row.get("coverage")
        col.metric(metric_label(name), format_number(row.get("mean")),
                   help=metric_help(name) + " " + metric_help("ci"))
        shown = f" · coverage {format_number(coverage, 'share')}" if coverage is not None else ""
        col.caption(f"{interval} · n={row.get('n') or 0}{shown}")


def draw_languages(summary: Mapping[str, Any] | None) -> None:
    """A run of several languages: its means broken down by language (a figure that holds in
    one language may not in another), with each language's coverage."""
    import pandas as pd

    from rag_eval.runs.summary import language_rows
    from rag_eval.ui.components import draw_table

    rows = language_rows(summary)
    if rows:
        st.markdown("**By language**")
        draw_table(pd.DataFrame(rows))


def draw_scores(scores: TraceScores | None, judge: str = "", status: str = "", per_row: int = 4) -> None:
    """The four TRACe metrics with help text; ``per_row=2`` for half-width columns (side
    by side), so no label or value is cut off. A vacuous completeness and the labels the
    scorer repaired are said under them."""
    if scores is None:
        st.warning(md("No scores: judge status {}.", status or "unknown"))
        return
    values = {name: format_number(getattr(scores, name)) for name in TRACE_METRICS}
    values["adherence"] += f" ({format_number(scores.adherence_score)})"  # with its continuous score
    for start in range(0, len(TRACE_METRICS), per_row):
        cols = st.columns(per_row)
        for col, name in zip(cols, TRACE_METRICS[start:start + per_row]):
            col.metric(metric_label(name), values[name], help=metric_help(name))
    st.caption(md("Scoring mode **{}** · judge **{}**", scores.mode, judge or "unknown")
               + (md(" · status {}", status) if status else ""))
    if scores.diagnostics.get("completeness_vacuous"):
        st.caption("Completeness is vacuous: the judge found no relevant sentence, so there is nothing to cover.")
    repairs = scores.diagnostics.get("label_repairs")
    if repairs:
        st.caption("Labels repaired for consistency: "
                   + "; ".join(md("{} {}", k.replace("_", " "), ", ".join(map(str, v))) for k, v in repairs.items()))


def draw_venn(classes: list[str], key: str) -> None:
    """Relevant / utilized / both document sentences of one row, with counts."""
    from rag_eval.ui.components import draw_chart
    from rag_eval.ui.run_charts import venn_figure

    counts = set_counts(classes)
    st.markdown("**Relevant / utilized document sentences**", help=metric_help("completeness"))
    draw_chart(venn_figure(counts), key=key)
    st.caption(f"Relevant {counts['relevant']} · utilized {counts['utilized']} · both {counts['both']} "
               f"(completeness = both / relevant) · of {counts['total']} document sentences.")
