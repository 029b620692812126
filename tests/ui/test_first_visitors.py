"""The first visitors of a freshly started server, in a browser (issue 41, items 5 and 6).

- Ready before asked: on an unlocked server that builds the demo collection in the
  background, a visitor who opens Ask at once waits for the build (a message says so) and
  the answer is drawn from the collection, never from an empty one.

Every wait polls with a generous limit (the machine may be loaded); nothing is timed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import browser

pytestmark = pytest.mark.browser

WAIT_S = 300.0
QUESTION = "How do I configure Sharpness?"
NO_CONTEXT = "I could not find any relevant context"
ASK_BUTTON_JS = "!!Array.from(document.querySelectorAll('button')).find(b => b.innerText.trim() === 'Ask')"
SCORED_JS = "document.body.innerText.includes('Scoring mode')"
NOT_SCORED_JS = "document.body.innerText.includes('No scores: judge status')"


@pytest.fixture(scope="module", autouse=True)
def _chromium() -> None:
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")


def ask_now(session: browser.BrowserSession, url: str, question: str) -> str:
    """Open Ask, type ``question`` as soon as the page offers the field, press Ask and wait for
    the outcome (scores, or a judge status without scores); the page's main text."""
    session.tools.call("Emulation.setFocusEmulationEnabled", enabled=True)
    session.tools.call("Page.navigate", url=f"{url}/ask")
    session.wait_for(ASK_BUTTON_JS, WAIT_S)
    session.type_into("[data-testid=stTextInput] input", question)
    for kind in ("keyDown", "keyUp"):  # Enter commits the field, as a person's
        session.tools.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)
    session.idle(WAIT_S, quiet_s=0.5)
    session.click_button("Ask")
    session.wait_for(f"{SCORED_JS} || {NOT_SCORED_JS}", WAIT_S)
    session.idle(WAIT_S, quiet_s=0.5)
    return session.main_text()


def test_a_question_asked_while_the_demo_collection_is_built_waits_for_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()  # a fresh data folder: the server builds the demo collection after it listens
    with browser.streamlit_server(home, extra_env={"RAG_EVAL_DEPLOYMENT": "local",
                                                   "RAG_EVAL_PREPARE": "background"}) as server:
        browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
        with browser.BrowserSession(width=1280, height=900) as session:
            text = ask_now(session, server.url, QUESTION)
            log = server.log()
    assert NO_CONTEXT not in text, text[:3000]
    assert "no document sentences" not in text, text[:3000]
    assert "Scoring mode" in text, text[:3000]
    assert json.dumps(QUESTION)[1:-1] in text  # the support map names the question
    assert "Traceback" not in log, log[-3000:]
