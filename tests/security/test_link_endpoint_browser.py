"""A link does not move the owner's key on an unlocked dashboard, in Chromium (issue 41, item 1).

A developer's own server (``RAG_EVAL_DEPLOYMENT=local``) with their key, model and endpoint in
the environment (the endpoint: the real local OpenAI-compatible server). Another page links
``/settings?base_url=<listener>&key_env=HOME``; the developer follows it, goes to Ask through
the sidebar (the same session) and asks an example question. The listener is a second real
local server that would answer validly (so a leak would leave no trace on the page). Afterwards
the listener heard nothing, the Settings page showed the link's endpoint as a proposal not in
use, Ask said so, and the owner's endpoint answered with the owner's key.

Every wait polls with a generous limit (the machine may be loaded); nothing is timed.
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from harness import browser
from harness.openai_server import start_server
from rag_eval.demo import load_demo
from rag_eval.ui.settings import LINK_NOTE
from tests.security.test_locked_egress_browser import _owner_reply

pytestmark = pytest.mark.browser

WAIT_S = 240.0
OWNER_KEY = f"owner-llm-{secrets.token_hex(8)}"  # made up per session


@pytest.fixture(scope="module")
def endpoints() -> Iterator[dict[str, Any]]:
    owner, other = start_server(), start_server()
    owner.set_handler(_owner_reply)
    other.set_handler(_owner_reply)  # answers validly: a leak would not show on the page
    yield {"owner": owner, "other": other}
    owner.stop()
    other.stop()


@pytest.fixture(scope="module")
def unlocked_site(tmp_path_factory, _demo_qdrant, _session_models_dir, endpoints) -> Iterator[dict]:
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    home = tmp_path_factory.mktemp("link-unlocked")
    shutil.copytree(_demo_qdrant, home / "qdrant")  # Ask answers without building the demo collection
    (home / "models").symlink_to(_session_models_dir, target_is_directory=True)
    env = {"RAG_EVAL_DEPLOYMENT": "local", "OPENAI_API_KEY": OWNER_KEY,
           "RAG_EVAL_LLM_BASE_URL": endpoints["owner"].base_url, "RAG_EVAL_LLM_MODEL": "test-model"}
    with pytest.MonkeyPatch.context() as mp:
        for name in ("SPACE_ID", "RAG_EVAL_PHOENIX_URL", "RAG_EVAL_DB", "RAG_EVAL_DB_URL", "OPENAI_BASE_URL"):
            mp.delenv(name, raising=False)
        with browser.streamlit_server(home, extra_env=env) as server:
            browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
            with browser.BrowserSession(width=1280, height=900) as session:
                yield {"url": server.url, "session": session}


def _sidebar(session: browser.BrowserSession, path: str, title: str) -> None:
    """Follow the sidebar's link to ``path`` (the same Streamlit session, as a person would)."""
    clicked = session.evaluate("(() => { const a = Array.from(document.querySelectorAll('[data-testid=stSidebarNav] a'))"
                               f".find(a => new URL(a.href).pathname === {json.dumps(path)}); if (!a) return false; "
                               "a.click(); return true; })()")
    assert clicked, f"no sidebar link to {path}"
    session.wait_for(browser.HEADING_JS % json.dumps(title), WAIT_S)
    session.idle(WAIT_S)


def test_a_crafted_link_then_ask_sends_nothing_to_the_links_address(unlocked_site, endpoints):
    session, url = unlocked_site["session"], unlocked_site["url"]
    owner, other = endpoints["owner"], endpoints["other"]
    session.goto(f"{url}/settings?base_url={other.base_url}&key_env=HOME", "Settings", WAIT_S)
    text = session.main_text().replace("\u2060", "")  # the page keeps addresses from becoming links
    assert "A link proposed other LLM settings" in text and "They are not in use." in text, text[:2000]
    assert other.base_url.rstrip("/") in text  # the user sees where the link would send the key
    # the key named is the dashboard's, never credited to the link (which said key_env=HOME)
    assert "with the key in OPENAI_API_KEY (this dashboard's; a link never chooses the key)" in text, text[:2000]
    assert "as the link says" not in text and "HOME" not in text
    # waited for: on a busy machine the text input mounts about a second after the text around it
    # (its code loads on first use), empty at first and with its value a moment later
    base_url_field = session.wait_for("(() => { const e = Array.from(document.querySelectorAll('input'))"
                                      ".find(i => i.getAttribute('aria-label') === 'Base URL'); "
                                      "return e && e.value; })()", browser.SETTLE_S)
    assert base_url_field == owner.base_url  # the form holds the owner's endpoint, not the link's

    _sidebar(session, "/ask", "Ask")
    assert LINK_NOTE in session.main_text()
    question = str(load_demo()[1][0]["question"])
    browser.choose(session, "Example questions", question)
    session.wait_for("!document.querySelector('[role=option]')", WAIT_S)
    session.idle(WAIT_S)
    session.click_button("Ask")
    session.wait_for(f"document.body.innerText.includes({json.dumps('Ask · ' + question)})", WAIT_S)
    session.idle(WAIT_S)

    assert other.headers == [] and other.requests == [], "the link's address was reached"
    assert owner.headers, "Ask judged with the owner's LLM"
    assert all(h.get("authorization") == f"Bearer {OWNER_KEY}" for h in owner.headers)
