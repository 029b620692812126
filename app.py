"""rag-eval dashboard server: ``streamlit run app.py`` (locally and on a Hugging Face Space).

The dashboard itself is ``dashboard.py`` (page config and navigation) and ``pages/``. This
file declares the server around it (Streamlit's ``st.App``) so that the server can warm up
before it accepts its first visitor (:mod:`rag_eval.ui.warm_up`; the judge's model and the demo
collection are prepared before it listens on a public deployment, in a background thread
otherwise: ``RAG_EVAL_PREPARE``), and so that a new visitor's
browser finds hints in the page's head (:mod:`rag_eval.ui.preload`: the table code, its
stylesheet, the server's base path) and downloads Streamlit's frontend gzipped
(:mod:`rag_eval.ui.static_gzip`).
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

# A Hugging Face Space installs requirements.txt only, not this package: the library is
# imported from the repository next to this file.
_ROOT = Path(__file__).resolve().parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import streamlit as st  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from rag_eval.llm.policy import load_policy  # noqa: E402
from rag_eval.ui.preload import PageHints  # noqa: E402
from rag_eval.ui.static_gzip import CompressedStatic  # noqa: E402
from rag_eval.ui.warm_up import prepare_at_start, warm_up  # noqa: E402

try:  # a misspelt deployment setting: one line naming the accepted values, not a traceback from the warm-up
    load_policy()
except ValueError as err:
    sys.exit(f"rag-eval dashboard: {err}")


@asynccontextmanager
async def _lifespan(_app: st.App) -> AsyncIterator[None]:
    warm_up(_ROOT)  # before the server listens: the first visitor finds it warm
    prepare_at_start()  # the judge's model and the demo collection: before listening when locked, else just after
    yield
    from rag_eval.ui.jobs import stop_all

    stop_all(timeout_s=10)  # a run being judged ends cancelled, with what it judged stored, not cut off mid-write


PAGE_NAMES = [page.stem for page in (_ROOT / "pages").glob("*.py")]  # each page's address: /runs, /compare, …
app = st.App("dashboard.py", lifespan=_lifespan,
             middleware=[Middleware(PageHints, pages=PAGE_NAMES), Middleware(CompressedStatic)])
