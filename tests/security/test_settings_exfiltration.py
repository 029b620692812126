"""A visitor of a deployed dashboard tries to send the server's key to a host of their
choosing (Settings: Base URL and key variable). The listener never hears a secret."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.fake_answers import answer_text
from harness.openai_server import start_server

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
SERVER_KEY = "test-key-not-real-server-5a5a"
OTHER_SECRET = "test-token-not-real-other-6b6b"
VISITOR_KEY = "test-key-not-real-visitor-7c7c"


@pytest.fixture
def listener():
    server = start_server()
    yield server
    server.stop()


@pytest.fixture
def deployed(monkeypatch, openai_server):
    """A Space-like environment: a key in the environment, the owner's endpoint allowed."""
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", OTHER_SECRET)
    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")
    openai_server.set_handler(lambda body: answer_text(body))
    return openai_server


def _settings_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page_text(at: AppTest) -> str:
    from tests.security.test_echo_artefacts import rendered

    return rendered(at)


def test_no_field_takes_a_url_or_a_variable_name(deployed, rag_eval_home):
    at = _settings_page()
    keys = {w.key for w in at.text_input}
    assert "settings.base_url" not in keys and "settings.api_key_env" not in keys
    assert at.selectbox(key="settings.base_url").options == [deployed.base_url.rstrip("/")] or \
        deployed.base_url in at.selectbox(key="settings.base_url").options
    text = _page_text(at)
    assert str(rag_eval_home) not in text and "Data directory" not in text  # server paths are hidden
    assert SERVER_KEY not in text


def test_forged_settings_never_reach_the_listener(deployed, listener, demo_home):
    """Even with the session state forged (what a widget could never send), the saved
    settings are refused, and what runs goes to the owner's endpoint only."""
    def attempt(url: str, env_name: str) -> None:
        from rag_eval.ui import settings, state

        state.guarded(lambda: settings.save_settings({"provider": "openai", "base_url": url, "api_key_env": env_name}))

    for env_name in ("OPENAI_API_KEY", "OTHER_SERVICE_TOKEN", "HOME"):
        tried = AppTest.from_function(attempt, args=(listener.base_url, env_name)).run()
        assert tried.error and "Not saved" in tried.error[0].value
        assert OTHER_SECRET not in tried.error[0].value and SERVER_KEY not in tried.error[0].value
    at = _settings_page()
    # Forge the saved settings themselves: current_settings() puts the owner's back.
    from rag_eval.ui.constants import STATE_SETTINGS

    at.session_state[STATE_SETTINGS] = {"provider": "openai", "base_url": listener.base_url,
                                        "api_key_env": "OTHER_SERVICE_TOKEN", "model": "test-model"}
    at.switch_page("pages/ask.py").run()
    at.selectbox(key="ask.example").select_index(2).run()
    at.button(key="ask.ask").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert listener.request_count == 0 and not listener.headers
    assert deployed.request_count >= 1
    assert all(h.get("authorization") == f"Bearer {SERVER_KEY}" for h in deployed.headers)
    assert SERVER_KEY not in _page_text(at) and OTHER_SECRET not in _page_text(at)


def test_a_visitor_key_goes_only_where_allowed_and_never_the_server_key(deployed, listener, monkeypatch, demo_home):
    monkeypatch.setenv("RAG_EVAL_ALLOW_VISITOR_KEYS", "1")
    monkeypatch.setenv("RAG_EVAL_VISITOR_BASE_URLS", listener.base_url)  # a "public" endpoint the owner allows
    listener.set_handler(lambda body: answer_text(body))
    at = _settings_page()
    at.radio(key="settings.provider").set_value("openai")
    at.button[0].click().run()
    at.text_input(key="settings.own_key").input(VISITOR_KEY)
    at.selectbox(key="settings.own_key_url").select(listener.base_url)
    at.button(key="FormSubmitter:settings.own_key_form-Use my key").click().run()
    assert not at.error, [e.value for e in at.error]
    assert VISITOR_KEY not in _page_text(at)
    at.switch_page("pages/ask.py").run()
    at.selectbox(key="ask.example").select_index(2).run()
    at.button(key="ask.ask").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert listener.request_count >= 1 and deployed.request_count == 0
    assert {h.get("authorization") for h in listener.headers} == {f"Bearer {VISITOR_KEY}"}
    assert VISITOR_KEY not in _page_text(at)
    # nothing of the visitor's key was written under the data directory
    for path in Path(demo_home).rglob("*"):
        if path.is_file() and path.stat().st_size < 5_000_000:
            assert VISITOR_KEY.encode() not in path.read_bytes(), path
