"""Settings: provider, model, base URL, concurrency, rate limit and cache for this session.

Keys come only from the environment or Space secrets; this page shows whether one is
present, never its value, and has no field to type one into.
"""

from __future__ import annotations

import streamlit as st

from rag_eval.config import data_dir, setting
from rag_eval.ui import components, settings, state

PAGE = "settings"
PROVIDERS = {"local": "Local (offline: local judge, extractive generator)", "openai": "OpenAI-compatible endpoint"}


def init_page_state() -> None:
    current = settings.current_settings()
    state.init_defaults({f"{PAGE}.{name}": value for name, value in current.items()})


def render_form() -> None:
    with st.form(f"{PAGE}.form"):
        st.radio("Provider", list(PROVIDERS), key=f"{PAGE}.provider", format_func=PROVIDERS.get)
        cols = st.columns(2)
        cols[0].text_input("Model", key=f"{PAGE}.model", help="e.g. gpt-4o-mini, or the model your server serves")
        cols[1].text_input(
            "Base URL", key=f"{PAGE}.base_url", help="Empty for api.openai.com; any OpenAI-compatible /v1 URL"
        )
        cols[0].text_input("Environment variable holding the key", key=f"{PAGE}.api_key_env")
        cols[1].number_input("Concurrency", min_value=1, max_value=64, step=1, key=f"{PAGE}.concurrency")
        cols[0].number_input("Rate limit (requests/minute)", min_value=1, max_value=100_000, key=f"{PAGE}.rate_limit_rpm")
        cols[1].checkbox("Cache LLM responses", key=f"{PAGE}.cache")
        st.checkbox("Also use the LLM to generate answers (else the extractive generator)", key=f"{PAGE}.use_llm_generator")
        if st.form_submit_button("Save settings"):
            settings.save_settings({name: st.session_state[f"{PAGE}.{name}"] for name in settings.DEFAULTS})
            st.success("Saved for this session.")


def render_status() -> None:
    values = settings.current_settings()
    st.subheader("Secrets")
    components.draw_key_status(
        [
            (values["api_key_env"], settings.key_present(values["api_key_env"])),
            ("QDRANT_API_KEY", bool(setting("QDRANT_API_KEY"))),
        ]
    )
    if values["provider"] != "local" and not settings.key_present(values["api_key_env"]):
        st.warning(
            f"No key in {values['api_key_env']}: set it in the environment or the Space secrets; "
            "a local server that needs no key works with any base URL."
        )
    st.subheader("Where things are")
    st.markdown(
        f"- Data directory: `{data_dir()}`\n"
        f"- Qdrant: `{setting('QDRANT_URL') or 'embedded local mode'}`"
    )
    config = settings.current_config()
    st.subheader("Configuration in use")
    st.caption(f"config hash `{config.config_hash}`")
    st.code(config.to_yaml(), language="yaml")


def main() -> None:
    init_page_state()
    st.title("Settings")
    render_form()
    render_status()


state.guarded(main)
