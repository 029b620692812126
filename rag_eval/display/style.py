"""What the dashboard and the offline HTML report both draw with: chart colours, metric
labels, the spread bands' names and shading, and the support map's sentence classes,
colours and legend. One place, below both (``ui`` and ``report`` never import each other).
"""

from __future__ import annotations

from rag_eval.metrics.registry import METRICS, TRACE_METRICS

# Chart colours: one per run or dataset (cycled), and the RMSE bands' shading; the dashboard's
# Vega-Lite charts (ui.charts) and the HTML report's Plotly figures (report.charts) share them.
PALETTE = ("#1c7ed6", "#f59f00", "#37b24d", "#e03131", "#7048e8", "#0ca678")
# The spread bands are ranges of a spread, not a verdict on quality: a neutral ramp, no green-to-red.
BAND_COLOURS = {"excellent": "#f1f3f5", "good": "#e7f0fa", "acceptable": "#d0e2f5", "poor": "#b6d1ee"}
# What each band of a row's metric spread (rmse_aggregation) is called on a page and in the report:
# the spread says how unevenly a row's four metrics sit around their mean (a row with all four at 0.1
# and one with all four at 0.9 both have spread 0), never whether the row or the pipeline is good.
SPREAD_BAND_LABELS = {"excellent": "even", "good": "slightly uneven", "acceptable": "uneven", "poor": "very uneven"}
SPREAD_BAND_MEANING = {
    "excellent": "the four metrics lie within about 0.1 of their mean",
    "good": "the four metrics differ a little (about 0.1 to 0.2 from their mean)",
    "acceptable": "one metric is well apart from the others: look at which one",
    "poor": "the metrics disagree strongly (e.g. relevant context that was not used): look at which one is low",
}
SPREAD_HELP = ("Metric spread (rmse_aggregation): the RMSE of one row's four TRACe metrics around their mean. "
               "It measures how evenly the metrics sit, not how good the row is: four metrics all at 0.1 have "
               "spread 0. Bands: even ≤ 0.10, slightly uneven ≤ 0.20, uneven ≤ 0.30, very uneven above.")
SPREAD_AXIS_MAX = 0.6  # the spread histogram's x axis ends here

#: The TRACe metrics' labels, in order, from the metric registry (the one declaration).
METRIC_LABELS = {name: METRICS.label(name) for name in TRACE_METRICS}

# Sentence classes and their colours. Colours are pale so black text stays readable.
DOC_RELEVANT = "relevant"
DOC_UTILIZED = "utilized"
DOC_BOTH = "both"
DOC_NEITHER = "neither"
RESP_SUPPORTED = "supported"
RESP_PARTIAL = "partial"
RESP_UNSUPPORTED = "unsupported"
RESP_UNKNOWN = "unlabelled"

COLOURS = {
    DOC_RELEVANT: "#fff3b0",  # yellow: relevant, not used
    DOC_UTILIZED: "#cfe2ff",  # blue: used although not marked relevant
    DOC_BOTH: "#b7e4c7",  # green: relevant and used
    DOC_NEITHER: "transparent",
    RESP_SUPPORTED: "#b7e4c7",
    RESP_PARTIAL: "#ffe5b4",
    RESP_UNSUPPORTED: "#ffc9c9",
    RESP_UNKNOWN: "#e9ecef",
}
HIGHLIGHT_OUTLINE = "#d63384"  # outline of the document sentences supporting the selected one

LEGEND = {
    DOC_RELEVANT: "document sentence relevant to the question, not used",
    DOC_UTILIZED: "document sentence used by the response, not marked relevant",
    DOC_BOTH: "document sentence relevant and used",
    DOC_NEITHER: "document sentence neither relevant nor used",
    RESP_SUPPORTED: "response sentence fully supported",
    RESP_PARTIAL: "response sentence partially supported",
    RESP_UNSUPPORTED: "response sentence unsupported",
    RESP_UNKNOWN: "response sentence without a label",
}
