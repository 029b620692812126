"""Names the dashboard shares: page paths, widget keys, colours and the legend.

Kept in one place so a page, the components and the tests agree on a key or a
colour without importing each other (pages never import pages).
"""

from __future__ import annotations

from rag_eval.metrics.registry import METRICS, TRACE_METRICS
from rag_eval.schema import JudgeStatus

APP_TITLE = "RAG Eval Workbench"
# An emoji: Streamlit draws it as an inline SVG favicon. A ":material/…:" page icon would make every
# visitor's browser fetch the favicon from an external font host (nothing may be fetched from outside
# the server: an offline install could not show it, and a visitor's address would reach a third party).
APP_ICON = "🧪"

# Page scripts, relative to dashboard.py (st.navigation, st.switch_page and AppTest use these).
PAGE_OVERVIEW = "pages/overview.py"
PAGE_ASK = "pages/ask.py"
PAGE_SUPPORT_MAP = "pages/support_map.py"
PAGE_BATCH = "pages/batch.py"
PAGE_RUNS = "pages/runs.py"
PAGE_COMPARE = "pages/compare.py"
PAGE_DATASETS = "pages/datasets.py"
PAGE_CORPUS = "pages/corpus.py"
PAGE_SETTINGS = "pages/settings.py"
PAGE_JUDGES = "pages/judges.py"

ALL_PAGES = (
    PAGE_OVERVIEW,
    PAGE_ASK,
    PAGE_SUPPORT_MAP,
    PAGE_BATCH,
    PAGE_RUNS,
    PAGE_COMPARE,
    PAGE_JUDGES,
    PAGE_DATASETS,
    PAGE_CORPUS,
    PAGE_SETTINGS,
)

# Session-state keys shared across pages (set by one page, read by another).
STATE_SUPPORT_SOURCE = "shared.support_source"  # what the support map page shows
STATE_COMPARE_PAIR = "shared.compare_pair"  # (left, right) support sources for side-by-side
STATE_FOCUS = "shared.support_focus"  # "single" or "pair": which of the two the sender meant
STATE_SETTINGS = "shared.settings"  # the session's LLM / run settings overrides
STATE_REVIEWER = "shared.reviewer"  # the reviewer's name, kept across rows
STATE_REVIEW_QUEUE = "shared.review_queue"  # {"run_id", "ids"}: rows queued for review (Judges page)

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

STATUS_OK_VALUES = tuple(s.value for s in JudgeStatus if s.usable)

# Cache lifetimes (seconds) of the run-store readers; writes call data.refresh().
RUNS_TTL = 30
ITEMS_TTL = 600  # a run's items are cached per run id and stamp (status, items stored, finish time)
ITEMS_CACHE_ENTRIES = 64

# The overview page's last line: the browser test and the page-load benchmark wait for it
# to know the first page has fully rendered.
OVERVIEW_READY_TEXT = "From the pre-loaded RAGBench sample (CC-BY-4.0): open the support map to see every sentence."
