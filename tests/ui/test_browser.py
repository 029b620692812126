"""The real server in a real browser engine: ``streamlit run app.py`` on loopback,
loaded by headless Chromium (Debian's ``chromium``; ``make browser-deps`` installs it).

Saves ``test-output/dashboard.png`` for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import browser
from rag_eval.display.style import LEGEND, RESP_UNKNOWN
from rag_eval.ui.constants import APP_TITLE, OVERVIEW_READY_TEXT

pytestmark = pytest.mark.browser

OUTPUT = browser.PROJECT_ROOT / "test-output"


@pytest.fixture(scope="module")
def chromium_binary() -> str:
    binary = browser.find_chromium()
    if binary is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    return binary


def test_main_page_renders_in_headless_chromium(chromium_binary, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    shot = OUTPUT / "dashboard.png"
    with browser.streamlit_server(home) as server:
        browser.wait_healthy(server.url, process=server.process)
        load = browser.load_page(server.url, APP_TITLE, OVERVIEW_READY_TEXT, screenshot=shot)
        # the support map's HTML (st.html) renders in the browser with its legend
        support = browser.load_page(f"{server.url}/support_map", "Sentence support map", LEGEND[RESP_UNKNOWN],
                                    screenshot=OUTPUT / "support_map.png")
        log = server.log()
    assert load.heading_s is not None, f"the heading never rendered; server log:\n{log[-2000:]}"
    assert load.ready_s is not None, f"the overview never finished rendering; server log:\n{log[-2000:]}"
    assert browser.page_errors(load.dom) == [], "the page shows an error element"
    assert "Traceback" not in load.dom
    assert shot.is_file() and shot.stat().st_size > 10_000
    assert support.ready_s is not None and browser.page_errors(support.dom) == []
    assert 'class="sm-s sm-' in support.dom
