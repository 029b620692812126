"""Names the dashboard shares: page paths, widget keys, colours and the legend.

Kept in one place so a page, the components and the tests agree on a key or a
colour without importing each other (pages never import pages).
"""

from __future__ import annotations

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
STATE_LINK_PROPOSAL = "shared.link_proposal"  # settings a link proposed, not in use until confirmed
STATE_REVIEWER = "shared.reviewer"  # the reviewer's name, kept across rows
STATE_REVIEW_QUEUE = "shared.review_queue"  # {"run_id", "ids"}: rows queued for review (Judges page)

STATUS_OK_VALUES = tuple(s.value for s in JudgeStatus if s.usable)

# Cache lifetimes (seconds) of the run-store readers; writes call data.refresh().
RUNS_TTL = 30
ITEMS_TTL = 600  # a run's items are cached per run id and stamp (status, items stored, finish time)
ITEMS_CACHE_ENTRIES = 64

# The overview page's last line: the browser test and the page-load benchmark wait for it
# to know the first page has fully rendered.
OVERVIEW_READY_TEXT = "From the pre-loaded RAGBench sample (CC-BY-4.0): open the support map to see every sentence."
