"""The first visitors of a freshly started server, in a browser (issue 41, items 5 and 6).

- Ready before asked: on an unlocked server that builds the demo collection in the
  background, a visitor who opens Ask at once waits for the build (a message says so) and
  the answer is drawn from the collection, never from an empty one.
- Eight at once, every time: a fresh locked server (``RAG_EVAL_DEPLOYMENT=public``, the
  owner's LLM endpoint a local OpenAI-compatible server), eight visitors (eight tabs, eight
  Streamlit sessions) open Ask as soon as it listens and press Ask together; every one gets
  TRACe scores from an answer with context, five servers in a row; together they never have
  more requests in flight at the LLM than the owner's ``RAG_EVAL_LLM_CONCURRENCY`` (one gate
  for the whole process, not one per visitor).

Every wait polls with a generous limit (the machine may be loaded); nothing is timed.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness import browser
from harness.fake_answers import answer_text
from harness.openai_server import start_server
from rag_eval.demo import load_demo

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
    session.wait_for(f"{ASK_BUTTON_JS} && !{browser.RUNNING_JS}", WAIT_S)
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


VISITORS = 8
SERVERS = 5
# made up per session: a fixed string shaped like a provider key would sit in the repository
OWNER_KEY = f"owner-llm-{secrets.token_hex(8)}"
OWNER_CONCURRENCY = 2
MAIN_TEXT_JS = "(document.querySelector('[data-testid=stMain]') || {innerText: ''}).innerText"
QUESTION_FIELD_JS = ("(() => { const e = document.querySelector('[data-testid=stTextInput] input'); "
                     "if (!e) return false; e.focus(); e.select(); return true; })()")
FIELD_VALUE_JS = "(document.querySelector('[data-testid=stTextInput] input') || {value: null}).value"
ASK_POINT_JS = ("(() => { const b = Array.from(document.querySelectorAll('button'))"
                ".find(b => b.innerText.trim() === 'Ask'); if (!b) return null; b.scrollIntoView({block: 'center'}); "
                "const r = b.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")


class _Judgements:
    """The LLM's replies, counting the requests in flight (the handler runs in the server's
    request threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def __call__(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.05)  # long enough that the visitors' requests would overlap if nothing held them
        with self.lock:
            self.now -= 1
        return answer_text(body)


def _until(tab: browser.DevTools, expression: str, deadline: float) -> bool:
    while time.perf_counter() < deadline:
        try:
            if tab.evaluate(expression):
                return True
        except RuntimeError:  # the page is navigating: its context is gone for a moment
            pass
        time.sleep(0.25)
    return False


def _outcome(page: str) -> str:
    """What a visitor's page says of its answer, in a line: the scores' caption or the judge
    status without scores, and whether the answer had no context."""
    lines = [line for line in page.splitlines() if "Scoring mode" in line or "No scores" in line
             or NO_CONTEXT in line or "failed" in line.lower()]
    return " | ".join(lines)[:400] or page[-400:]


def _type_question(tab: browser.DevTools, question: str) -> None:
    assert tab.evaluate(QUESTION_FIELD_JS), "Ask offered its button but no question field to type into"
    tab.call("Input.insertText", text=question)
    for kind in ("keyDown", "keyUp"):  # Enter commits the field
        tab.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)


def _press_ask(tab: browser.DevTools) -> object:
    """Press Ask as a person does, with the mouse: the field loses focus first, which commits
    what it shows (Streamlit commits a text field on Enter or on blur). A script's
    ``button.click()`` moves no focus, so a question whose Enter was not taken never reached
    the server: the page then said "Type a question first." (issue 46, item 12). What the
    field showed when Ask was pressed is returned, so a failure says which side lost it."""
    shown = tab.evaluate(FIELD_VALUE_JS)
    point = tab.evaluate(ASK_POINT_JS)
    if isinstance(point, list):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            tab.call("Input.dispatchMouseEvent", type=kind, x=point[0], y=point[1], button="left", clickCount=1)
    return shown


def eight_ask_at_once(home: Path, llm_url: str, questions: list[str]) -> list[tuple[object, str]]:
    """A fresh locked server on ``home``; one visitor per question opens Ask the moment the
    server listens (the demo collection is still being built), types its question, and all
    press Ask together; for each visitor, what its field showed when it pressed Ask and what
    its page shows in the end (or when it gave up)."""
    env = {"RAG_EVAL_DEPLOYMENT": "public", "OPENAI_API_KEY": OWNER_KEY, "RAG_EVAL_LLM_BASE_URL": llm_url,
           "RAG_EVAL_LLM_MODEL": "test-model", "RAG_EVAL_PREPARE": "background",
           "RAG_EVAL_LLM_CONCURRENCY": str(OWNER_CONCURRENCY)}
    # the browser is up first: its visitors arrive the moment the server listens
    with browser.chromium_tabs(len(questions)) as tabs, browser.streamlit_server(home, extra_env=env) as server:
        browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
        for tab in tabs:
            tab.call("Page.navigate", url=f"{server.url}/ask")
        deadline = time.perf_counter() + WAIT_S
        for tab, question in zip(tabs, questions):  # typed once the page is drawn and idle, as a person would
            if _until(tab, f"{ASK_BUTTON_JS} && !{browser.RUNNING_JS}", deadline):
                _type_question(tab, question)
        for tab in tabs:
            _until(tab, f"!{browser.RUNNING_JS}", deadline)
        shown = [_press_ask(tab) for tab in tabs]
        deadline = time.perf_counter() + WAIT_S
        for tab in tabs:
            _until(tab, f"({SCORED_JS} || {NOT_SCORED_JS}) && !{browser.RUNNING_JS}", deadline)
        return [(field, str(tab.evaluate(MAIN_TEXT_JS) or "")) for field, tab in zip(shown, tabs)]


def test_eight_visitors_asking_at_once_on_a_fresh_locked_server_all_get_scores(tmp_path: Path,
                                                                                _session_models_dir: Path) -> None:
    questions = [str(row["question"]) for row in load_demo()[1]][:VISITORS]
    llm = start_server()
    judgements = _Judgements()
    llm.set_handler(judgements)
    try:
        for attempt in range(SERVERS):
            home = tmp_path / f"home-{attempt}"
            home.mkdir()
            (home / "models").symlink_to(_session_models_dir, target_is_directory=True)  # the embedder, exported once
            before = llm.request_count
            visitors = eight_ask_at_once(home, llm.base_url, questions)
            assert [field for field, _ in visitors] == questions, (attempt, "a question did not reach its field")
            unanswered = [(i, _outcome(page)) for i, (_, page) in enumerate(visitors)
                          if "Scoring mode" not in page or NO_CONTEXT in page]
            assert unanswered == [], (attempt, llm.request_count - before, unanswered)
            assert llm.request_count - before >= VISITORS, attempt  # every visitor's judge reached the LLM
            assert 1 <= judgements.most <= OWNER_CONCURRENCY, (attempt, judgements.most)
    finally:
        llm.stop()
