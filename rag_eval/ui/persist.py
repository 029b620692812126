"""Settings that survive a browser reload, and deep links into pages.

The session's settings are mirrored into the URL's query parameters (only the values
that differ from the defaults), so a reload - which starts a new Streamlit session -
reads them back. Nothing secret is ever written, nor the key variable (a link never names
it: the key is the environment's), and a base URL carrying credentials (``user:password@``
or a query string) is left out of the URL.

Deep links (``/runs?run=ID``, ``/compare?runs=A,B``, ``/support_map?run=ID&item=X``) are
read with :func:`link_once`, which hands a page each link value once, so the visitor's
later choices on that page are not overridden by the address bar.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from rag_eval.ui.settings import DEFAULTS, judge_kinds

# setting name -> query parameter
PARAMS: dict[str, str] = {
    "provider": "provider",
    "judge": "judge",
    "model": "model",
    "base_url": "base_url",
    "concurrency": "concurrency",
    "rate_limit_rpm": "rpm",
    "cache": "cache",
    "use_llm_generator": "llm_generator",
}
_PROVIDERS = ("local", "openai")
# What a link may carry but no page ever reads: removed from the address bar (issue 41).
_NEVER_READ = ("key_env",)
# The signature this server puts beside the settings it writes into the address bar.
SIGNATURE_PARAM = "sig"
# Per process: a reload of the dashboard's own address carries a signature no other page can
# make, so a reload keeps what the user chose while a crafted link stays a proposal (issue 41).
# A restarted server asks again, which is the safe side.
_LINK_SECRET = secrets.token_bytes(32)


def settings_signature(values: Mapping[str, Any]) -> str:
    """The signature of the settings that decide where the server's key goes and what it is
    spent on (``llm.policy.LINK_HELD``) as written into the address bar by this server."""
    from rag_eval.llm.policy import LINK_HELD

    held = {name: str(values[name]) for name in LINK_HELD if name in values}
    message = json.dumps(held, sort_keys=True).encode()
    return hmac.new(_LINK_SECRET, message, hashlib.sha256).hexdigest()[:32]


def signed_by_this_server(params: Mapping[str, Any], linked: Mapping[str, Any]) -> bool:
    """Whether ``params`` carry this server's signature over ``linked`` (a reload of an
    address the dashboard wrote, not a link someone else made)."""
    given = str(params.get(SIGNATURE_PARAM) or "")
    return bool(given) and hmac.compare_digest(given, settings_signature(linked))


def safe_base_url(url: str) -> bool:
    """A base URL that may appear in an address bar: http(s), no user info, no query."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and "@" not in parts.netloc \
        and not parts.query and not parts.fragment


def settings_to_params(values: Mapping[str, Any], baseline: Mapping[str, Any] = DEFAULTS) -> dict[str, str]:
    """Query parameters for the settings that differ from ``baseline`` (what the environment
    configures; the defaults when not given): never a secret, never the owner's settings."""
    out: dict[str, str] = {}
    for name, param in PARAMS.items():
        value = values.get(name, baseline.get(name, DEFAULTS[name]))
        if value == baseline.get(name, DEFAULTS[name]) or value is None:
            continue
        if name == "base_url" and value and not safe_base_url(str(value)):
            continue
        out[param] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    return out


def settings_from_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Settings read back from query parameters; a malformed value is ignored (the
    default stays), so a hand-edited URL cannot break a page."""
    allowed = {"provider": lambda raw: raw in _PROVIDERS, "judge": lambda raw: raw in judge_kinds(offline_only=True),
               "base_url": safe_base_url}
    out: dict[str, Any] = {}
    for name, param in PARAMS.items():
        raw = params.get(param)
        if raw is None:
            continue
        raw, default = str(raw), DEFAULTS[name]
        if isinstance(default, bool):
            if raw in ("1", "0"):
                out[name] = raw == "1"
        elif isinstance(default, int):
            if raw.isdigit() and int(raw) >= 1:
                out[name] = int(raw)
        elif allowed.get(name, lambda raw: len(raw) <= 200)(raw):
            out[name] = raw
    return out


def sync_settings() -> None:
    """Called by ``dashboard.py`` on every run: a new session (a reload) takes its settings
    from the URL, as far as the deployment policy accepts them (``llm.policy.url_settings``:
    a forged link changes nothing, the judge included; while the server holds a key, a link's
    endpoint, provider and model are only proposed, ``llm.policy.held_by_link``, unless the
    address carries this server's own signature: a reload); then the URL is brought in line
    with the session's settings, so what was not applied leaves the address bar."""
    import streamlit as st

    from rag_eval.config import setting
    from rag_eval.llm.policy import LINK_HELD, held_by_link, url_settings
    from rag_eval.ui.constants import STATE_LINK_PROPOSAL, STATE_SETTINGS
    from rag_eval.ui.settings import environment_settings, policy

    base = environment_settings()
    if st.session_state.get(STATE_SETTINGS) is None:
        params = st.query_params.to_dict()
        linked, rules = settings_from_params(params), policy()
        # a reload of an address this server wrote routes nothing new: nothing to hold
        server_key = bool(setting(base["api_key_env"])) and not signed_by_this_server(params, linked)
        loaded = url_settings(rules, base, linked, server_key)
        if loaded:
            st.session_state[STATE_SETTINGS] = {**base, **loaded}
        held = held_by_link(rules, base, linked, server_key)
        if held:  # shown on Settings (Ask and Batch say so) until confirmed or dismissed
            st.session_state[STATE_LINK_PROPOSAL] = held
    wanted = settings_to_params(st.session_state.get(STATE_SETTINGS) or {}, base)
    written = settings_from_params(wanted)
    if any(name in written for name in LINK_HELD):
        wanted[SIGNATURE_PARAM] = settings_signature(written)
    for param in (*PARAMS.values(), *_NEVER_READ, SIGNATURE_PARAM):
        if param in wanted:
            if st.query_params.get(param) != wanted[param]:
                st.query_params[param] = wanted[param]
        elif param in st.query_params:
            del st.query_params[param]


def link_once(page: str, name: str) -> str | None:
    """The deep-link query parameter ``name`` for ``page`` the first time this session
    sees that value; None afterwards (and when absent)."""
    import streamlit as st

    value = st.query_params.get(name)
    if not value:
        return None
    seen = f"links.{page}.{name}"
    if st.session_state.get(seen) == value:
        return None
    st.session_state[seen] = value
    return str(value)


def link_list(value: str | None) -> list[str]:
    """``"A,B"`` -> ``["A", "B"]`` (empty parts dropped)."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]
