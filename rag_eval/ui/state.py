"""Session state shared between pages, and the error guard every page runs under.

Pages never import each other; when one page sends the user to another (a batch row
opened in the support map, two runs' rows side by side) it leaves a
:class:`rag_eval.display.views.SupportView` in session state under a key from ``ui.constants``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st

from rag_eval.config import configured_secrets, redact
from rag_eval.ui.constants import STATE_SETTINGS
from rag_eval.ui.markdown import escape_markdown, hide_paths

log = logging.getLogger(__name__)

def init_defaults(defaults: dict[str, Any]) -> None:
    """Set each session-state key that is not set yet (a page's init_page_state)."""
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value


def guarded(main: Callable[[], None]) -> None:
    """Run a page's body; any exception becomes a readable ``st.error`` (the message,
    never a traceback), with any configured key redacted. Streamlit's own control
    flow (rerun, stop, switch_page) derives from BaseException and passes through.
    The page holds the embedded vector store only while it runs (``store.lease``), so
    commands in a terminal can use it between reruns."""
    ensure_app_runs()
    try:
        with vector_store_lease():
            main()
    except Exception as exc:  # noqa: BLE001 - the page must show every failure as a message
        st.error(escape_markdown(error_message(exc)))


@contextlib.contextmanager
def vector_store_lease() -> Iterator[None]:
    """``rag.store.lease()`` around a page's run, without importing the vector store
    (Qdrant, scikit-learn: seconds on a fresh server) for a page that never uses it
    (Runs, Compare): when the module is not loaded yet no embedded client is open, and
    if the page loads it and opens one, an empty lease at the end closes it as the end
    of a lease around the whole run would."""
    store = sys.modules.get("rag_eval.rag.store")
    if store is not None:
        with store.lease():
            yield
        return
    try:
        yield
    finally:
        store = sys.modules.get("rag_eval.rag.store")
        if store is not None:
            with store.lease():
                pass


_LEGACY_MODE_OFF = False


def ensure_app_runs() -> None:
    """Make ``dashboard.py`` run, not the page alone. With a ``pages/`` folder beside it,
    Streamlit starts in its legacy multipage mode and, for a deep link opened right
    after a server start, runs the page file directly (file-name sidebar, no settings
    from the URL) until ``dashboard.py``'s ``st.navigation`` has run once. Switching the
    legacy mode off and rerunning lets ``dashboard.py`` take over from the first visit."""
    global _LEGACY_MODE_OFF
    from rag_eval.ui.streamlit_compat import leave_legacy_pages_mode

    if not _LEGACY_MODE_OFF and leave_legacy_pages_mode():  # once per server process; False when the flag moved
        _LEGACY_MODE_OFF = True
        st.rerun()


def error_message(exc: BaseException) -> str:
    """A one-line, secret-free message for an exception."""
    text = str(exc) or type(exc).__name__
    # every configured secret (rag_eval.config's one list, the run store's password) and the
    # variable the Settings page points the LLM at
    custom = (st.session_state.get(STATE_SETTINGS) or {}).get("api_key_env")
    message = hide_paths(redact(text, *configured_secrets(custom)))
    log.warning("page error: %s: %s", type(exc).__name__, message)
    return message


def open_support_map(view: Any) -> None:
    """Send one judged row (a :class:`~rag_eval.display.views.SupportView`) to the support map page."""
    from rag_eval.ui.constants import PAGE_SUPPORT_MAP, STATE_FOCUS, STATE_SUPPORT_SOURCE

    st.session_state[STATE_SUPPORT_SOURCE] = view
    st.session_state[STATE_FOCUS] = "single"
    st.switch_page(PAGE_SUPPORT_MAP)


def open_pair(left: Any, right: Any) -> None:
    """Send two views of the same question (two runs) to the support map, side by side."""
    from rag_eval.ui.constants import PAGE_SUPPORT_MAP, STATE_COMPARE_PAIR, STATE_FOCUS

    st.session_state[STATE_COMPARE_PAIR] = (left, right)
    st.session_state[STATE_FOCUS] = "pair"
    st.switch_page(PAGE_SUPPORT_MAP)
