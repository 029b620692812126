"""rag-eval dashboard entry point: page config and navigation only.

Every page lives in ``pages/`` and draws numbers computed by the library
(``rag_eval``); see docs/dashboard.md. Run with ``streamlit run app.py``.
"""

import streamlit as st

from rag_eval.ui.constants import APP_ICON, APP_TITLE
from rag_eval.ui.persist import sync_settings

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
