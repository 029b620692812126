"""rag-eval dashboard entry point: page config and navigation only.

Every page lives in ``pages/`` and draws numbers computed by the library
(``rag_eval``); see docs/dashboard.md. Served by ``app.py`` (``streamlit run app.py``).
"""

import sys
from pathlib import Path

# A Hugging Face Space installs requirements.txt only, not this package: the library is
# imported from the repository next to this file.
_ROOT = str(Path(__file__).resolve().parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import streamlit as st  # noqa: E402

from rag_eval.ui.constants import APP_ICON, APP_TITLE  # noqa: E402
from rag_eval.ui.persist import sync_settings  # noqa: E402

st.set_page_config(page_title=APP_TITLE, page_icon=APP_ICON, layout="wide")
sync_settings()  # settings survive a reload (query parameters, never a secret)

navigation = st.navigation(
    {
        "Explore": [
            st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
            st.Page("pages/ask.py", title="Ask", icon=":material/chat:"),
            st.Page("pages/support_map.py", title="Support map", icon=":material/format_color_text:"),
        ],
        "Evaluate": [
            st.Page("pages/batch.py", title="Batch evaluation", icon=":material/playlist_play:"),
            st.Page("pages/runs.py", title="Runs and trends", icon=":material/monitoring:"),
            st.Page("pages/compare.py", title="Compare", icon=":material/compare:"),
            st.Page("pages/judges.py", title="Judges", icon=":material/gavel:"),
        ],
        "Data": [
            st.Page("pages/datasets.py", title="Datasets", icon=":material/dataset:"),
            st.Page("pages/corpus.py", title="Corpus", icon=":material/library_books:"),
            st.Page("pages/settings.py", title="Settings", icon=":material/settings:"),
        ],
    }
)
navigation.run()
sync_settings()  # and again after the page, so a setting saved on this run is in the URL now
