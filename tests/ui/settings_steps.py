"""Steps on the Settings page that several dashboard tests share."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def choose_allowed_llm(at: AppTest, base_url: str, model: str = "test-model") -> None:
    """On Settings, pick the LLM judge with an endpoint and model the owner allowed, and submit."""
    at.switch_page("pages/settings.py").run()
    at.radio(key="settings.provider").set_value("openai")
    at.selectbox(key="settings.model").select(model)
    at.selectbox(key="settings.base_url").select(base_url)
    at.button[0].click().run()
