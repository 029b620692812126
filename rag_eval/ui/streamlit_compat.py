"""Every Streamlit internal the dashboard relies on, in one place.

Streamlit's private functions, the ``pages/`` folder flag and the frontend's file layout
are not an API: an upgrade may move any of them. Code elsewhere calls the functions here
and never imports a private Streamlit name itself. Each use degrades to doing nothing
when its internal has moved (a slower first visit, a page served without hints), never
to a page that fails; ``tests/ui/test_streamlit_compat.py`` names what moved and fails
with that list after an upgrade that breaks one, so the pin in requirements.txt is raised
knowingly.

The internals (Streamlit 1.67):

- ``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory``: with a
  ``pages/`` folder beside the main script Streamlit starts in its legacy multipage mode
  until ``st.navigation`` has run once (:func:`leave_legacy_pages_mode`);
- ``streamlit.elements.vega_charts._convert_altair_to_vega_lite_spec``: what
  ``st.altair_chart`` does to a chart, run once while the server warms up (:func:`altair_spec`);
- ``streamlit.delta_generator._maybe_print_use_warning``: the "run me with streamlit run"
  check of the first element drawn, run once while warming up (:func:`run_repl_check`);
- the frontend's files: ``streamlit/static/index.html`` loading ``./static/js/*.js``, each
  element's code in ``static/js/<Element>.<hash>.js`` and its styles in
  ``static/css/<Element>.<hash>.css``, served under ``…/static/`` (:func:`static_dir`,
  :data:`JS_DIR`, :data:`CSS_DIR`, :func:`is_frontend_path`).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

INDEX_HTML = "index.html"
JS_DIR = "static/js"
CSS_DIR = "static/css"
#: the entry script and its preloads, as index.html names them
PAGE_SCRIPT = re.compile(r'(?:href|src)="\./static/js/([\w.\-]+\.js)"')
#: a frontend module's static imports of its sibling modules (Vite's output: ``import"./x.js"``)
MODULE_IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([\w.\-]+\.js)"')
FRONTEND_URL_PART = "/static/"  # where the server serves the frontend's files (under any page path too)
APP_STATIC_URL_PART = "/app/static/"  # an app's own static folder (its files may change)
TABLE_ELEMENT = "DataFrame"  # st.dataframe's code and styles in the frontend

_warned: set[str] = set()


def _moved(what: str, err: BaseException) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("Streamlit internal moved (%s): %s: %s; see rag_eval/ui/streamlit_compat.py", what,
                    type(err).__name__, err)


# ---------------------------------------------------------------- the pages/ folder flag
def _pages_manager() -> Any:
    from streamlit.runtime.pages_manager import PagesManager

    if not hasattr(PagesManager, "uses_pages_directory"):
        raise AttributeError("PagesManager.uses_pages_directory")
    return PagesManager


def leave_legacy_pages_mode(before_first_run: bool = False) -> bool:
    """Tell Streamlit the dashboard navigates with ``st.navigation`` although a ``pages/``
    folder sits beside it: when Streamlit is in its legacy mode, or at once
    (``before_first_run``, the server's warm-up, before Streamlit has decided). True when
    Streamlit was in its legacy mode; False when it was not, or when the flag has moved
    (logged once)."""
    try:
        manager = _pages_manager()
    except (ImportError, AttributeError) as err:
        _moved("pages folder flag", err)
        return False
    was_legacy = bool(manager.uses_pages_directory)
    if was_legacy or before_first_run:
        manager.uses_pages_directory = False
    return was_legacy


# ---------------------------------------------------------------- warm-up internals
def altair_spec(chart: Any) -> dict[str, Any]:
    """The Vega-Lite spec ``st.altair_chart`` makes of ``chart`` (its converter also
    registers Streamlit's Arrow data transformer)."""
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

    return dict(_convert_altair_to_vega_lite_spec(chart))


def run_repl_check() -> None:
    """Streamlit's check, on the first element a process draws, whether it runs in a
    Python REPL (``inspect.stack()`` over every frame)."""
    from streamlit import delta_generator

    delta_generator._maybe_print_use_warning()


# ---------------------------------------------------------------- the frontend's files
def static_dir() -> Path:
    """The installed Streamlit's frontend folder (``index.html``, ``static/js``, ``static/css``)."""
    import streamlit

    return Path(streamlit.__file__).parent / "static"


def is_frontend_path(path: str) -> bool:
    """A request for a file of Streamlit's frontend (``/static/js/index.DormvYxC.js``, also
    under a page's path), not for an app's own static folder."""
    return FRONTEND_URL_PART in path and APP_STATIC_URL_PART not in path


def element_files(static: Path, element: str, kind: str) -> list[Path]:
    """The element's code (``kind="js"``) or styles (``"css"``) in the frontend's folder."""
    folder = static / (JS_DIR if kind == "js" else CSS_DIR)
    return sorted(folder.glob(f"{element}.*.{kind}"))
