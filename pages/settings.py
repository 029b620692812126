"""Settings: provider, judge, model, base URL, concurrency, rate limit and cache for this session.

Keys come only from the environment or Space secrets; this page shows whether one is
present, never its value. Where the server holds a secret (deployment mode,
rag_eval.llm.policy), the endpoint and key variable are the owner's: visitors pick
among allowed endpoints and models, and (if the owner allows it) may use their own
key, kept in their session only.
"""

from __future__ import annotations

import streamlit as st

from rag_eval.config import data_dir, setting
from rag_eval.llm.config import public_url
from rag_eval.ui import components, settings, state
from rag_eval.ui.markdown import md

PAGE = "settings"
PROVIDERS = {"local": "Local (offline: local judge, extractive generator)", "openai": "OpenAI-compatible endpoint"}


def init_page_state() -> None:
    current = settings.current_settings()
    state.init_defaults({f"{PAGE}.{name}": value for name, value in current.items()})


def endpoint_label(url: str) -> str:
    return public_url(url) if url else "Provider default (api.openai.com)"


def render_form() -> None:
    policy = settings.policy()
    with st.form(f"{PAGE}.form"):
        st.radio("Provider", list(PROVIDERS), key=f"{PAGE}.provider", format_func=PROVIDERS.get)
        kinds = ["", *settings.judge_kinds()]  # the judge-kind registry: built-in and plugins' kinds
        if st.session_state.get(f"{PAGE}.judge") not in kinds:
            st.session_state[f"{PAGE}.judge"] = ""
        st.selectbox("Judge", kinds, key=f"{PAGE}.judge", format_func=settings.judge_label,
                     help="Every installed judge kind with what it needs; a kind on an OpenAI-compatible endpoint "
                          "uses the model, endpoint and key below. `rag-eval judges list` shows where each comes from.")
        cols = st.columns(2)
        if policy.locked and not policy.any_model:
            cols[0].selectbox("Model", list(policy.models), key=f"{PAGE}.model")
        else:
            cols[0].text_input("Model", key=f"{PAGE}.model", help="e.g. gpt-4o-mini, or the model your server serves")
        if policy.locked:  # the owner's endpoints only; the key variable is the server's
            urls = list(dict.fromkeys([*policy.base_urls, settings.current_settings()["base_url"]]))  # + own key's
            cols[1].selectbox("Endpoint", urls, key=f"{PAGE}.base_url", format_func=endpoint_label)
        else:
            cols[1].text_input(
                "Base URL", key=f"{PAGE}.base_url", help="Empty for api.openai.com; any OpenAI-compatible /v1 URL"
            )
            cols[0].text_input("Environment variable holding the key", key=f"{PAGE}.api_key_env")
        cols[1].number_input("Concurrency", min_value=1, max_value=policy.max_concurrency or 64, step=1,
                             key=f"{PAGE}.concurrency")
        cols[0].number_input("Rate limit (requests/minute)", min_value=1, max_value=int(policy.max_rpm or 100_000),
                             key=f"{PAGE}.rate_limit_rpm")
        cols[1].checkbox("Cache LLM responses", key=f"{PAGE}.cache")
        st.checkbox("Also use the LLM to generate answers (else the extractive generator)", key=f"{PAGE}.use_llm_generator")
        st.text_input("Language", key=f"{PAGE}.language", placeholder="detect each text",
                      help="The language of your documents and questions as an ISO 639-1 code (ja, ar, de, ...): "
                           "sentences, words and judges then read every text in it, and ingest records it. Empty: "
                           "each text's language is detected. A row's own `language` column still wins.")
        if st.form_submit_button("Save settings"):
            names = [n for n in settings.DEFAULTS if not (policy.locked and n == "api_key_env")]
            settings.save_settings({name: st.session_state[f"{PAGE}.{name}"] for name in names})
            st.success("Saved for this session.")


def render_link_proposal() -> None:
    """LLM settings a link proposed while the server holds a key: shown, used only once confirmed."""
    proposal = settings.link_proposal()
    if not proposal:
        return
    named = {"base_url": "endpoint", "provider": "provider", "model": "model", "use_llm_generator": "LLM answers"}

    def value_text(name: str, value: object) -> str:
        if name == "base_url":
            return endpoint_label(value)
        return ("on" if value else "off") if isinstance(value, bool) else str(value)

    shown = "; ".join(f"{named.get(name, name)} {value_text(name, value)}" for name, value in proposal.items())
    # the key variable is never the link's (policy: a link's key_env is dropped): say whose key goes, not "as the link says"
    st.warning(md("**A link proposed other LLM settings: {}. They are not in use.** ", shown)
               + md("Using them sends requests with the key in {} (this dashboard's; a link never chooses the key) "
                    "to what the link names; use them only if you wrote this link.",
                    settings.current_settings()["api_key_env"]))
    cols = st.columns(2)
    if cols[0].button("Use the linked settings", key=f"{PAGE}.link_accept"):
        settings.accept_link_proposal()
        for name, value in settings.current_settings().items():  # the form shows what is in use now
            st.session_state[f"{PAGE}.{name}"] = value
        st.rerun()
    if cols[1].button("Dismiss", key=f"{PAGE}.link_dismiss"):
        settings.dismiss_link_proposal()
        st.rerun()


def render_own_key() -> None:
    """Deployment mode with visitor keys allowed: the visitor's own key, this session only."""
    policy = settings.policy()
    if not (policy.locked and policy.visitor_keys):
        return
    st.subheader("Your own key")
    using = settings.is_session_key(settings.current_settings()["api_key_env"])
    st.caption("Kept in this browser session's memory only: never saved, logged or shown. "
               + ("In use now." if using else "Not in use: the server's key applies."))
    with st.form(f"{PAGE}.own_key_form", clear_on_submit=True):
        key = st.text_input("API key", type="password", key=f"{PAGE}.own_key")
        url = st.selectbox("Send it to", list(policy.visitor_base_urls), key=f"{PAGE}.own_key_url",
                           format_func=endpoint_label)
        if st.form_submit_button("Use my key"):
            settings.use_own_key(key, url)
            st.success("Your key is in use for this session.")
    if using and st.button("Forget my key", key=f"{PAGE}.forget_key"):
        settings.forget_own_key()
        st.rerun()


def render_status() -> None:
    values = settings.current_settings()
    policy = settings.policy()
    key_name = "your own key" if settings.is_session_key(values["api_key_env"]) else values["api_key_env"]
    st.subheader("Secrets")
    components.draw_key_status(
        [
            (key_name, settings.key_present(values["api_key_env"])),
            ("QDRANT_API_KEY", bool(setting("QDRANT_API_KEY"))),
        ]
    )
    if values["provider"] != "local" and not settings.key_present(values["api_key_env"]):
        st.warning(
            md("No key in {}: set it in the environment or the Space secrets; ", values["api_key_env"])
            + "a local server that needs no key works with any base URL."
        )
    if policy.show_paths:  # server paths are not shown to the visitors of a deployment
        st.subheader("Where things are")
        st.markdown(
            md("- Data directory: {}\n", data_dir())
            + md("- Qdrant: {}", public_url(setting("QDRANT_URL") or "") or "embedded local mode")
        )
    else:
        st.caption("Deployment mode: the endpoint and key are set by the owner of this dashboard.")
    config = settings.current_config()
    st.subheader("Configuration in use")
    st.caption(f"config hash `{config.config_hash}`")
    st.code(config.to_yaml(), language="yaml")


def main() -> None:
    init_page_state()
    st.title("Settings")
    render_link_proposal()
    render_form()
    render_own_key()
    render_status()


state.guarded(main)
