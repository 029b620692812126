"""The session's choice of provider, model and run settings, as a ``RagConfig``.

The Settings page edits a small dict of overrides in session state; every page that
runs something asks :func:`current_config` for the configuration to use. Until the
user changes something, the settings are the environment's (``RAG_EVAL_LLM_MODEL``,
``_BASE_URL``, ``_API_KEY_ENV``, ``_CONCURRENCY``, ``_RPM``, Space variables and
secrets): with a model and a key (or a base URL) configured there, the dashboard starts
on the LLM judge; otherwise on the offline defaults. Keys are never stored here: only
whether one is present in the environment or Space secrets.
"""

from __future__ import annotations

import json
import re
from typing import Any

import streamlit as st

from rag_eval.config import forget_session_key, register_session_key, setting
from rag_eval.llm.constants import DEFAULT_API_KEY_ENV, DEFAULT_MODEL
from rag_eval.llm.limiter import share_limits
from rag_eval.llm.policy import DeployPolicy, check, enforce, is_session_key, load_policy
from rag_eval.rag.config import RagConfig, default_config
from rag_eval.text.language import language_code
from rag_eval.ui.constants import STATE_LINK_PROPOSAL, STATE_SETTINGS

#: The settings with nothing configured anywhere (the environment fills them in: see
#: :func:`environment_settings`).
DEFAULTS: dict[str, Any] = {
    "provider": "local",  # local | openai
    "judge": "",  # a judge kind of the registry (plugins' too); "": the provider's (local offline, llm on an endpoint)
    "model": DEFAULT_MODEL,
    "base_url": "",
    "api_key_env": DEFAULT_API_KEY_ENV,
    "concurrency": 4,  # the dashboard's own default when the environment sets none
    "rate_limit_rpm": 60,  # likewise
    "cache": True,
    "use_llm_generator": False,
    "language": "",  # the documents' and questions' language (ISO 639-1) when known; "": detect each text
}


def environment_settings() -> dict[str, Any]:
    """:data:`DEFAULTS` with what the environment (or Space variables and secrets)
    configures. The provider is the LLM endpoint when a model is configured and a key
    (or a base URL) is there to reach it."""
    values = dict(DEFAULTS)
    env = {name: setting(name) for name in ("RAG_EVAL_LLM_MODEL", "RAG_EVAL_LLM_API_KEY_ENV", "RAG_EVAL_LLM_CONCURRENCY",
                                             "RAG_EVAL_LLM_RPM")}
    base_url = setting("RAG_EVAL_LLM_BASE_URL") or setting("OPENAI_BASE_URL")
    if env["RAG_EVAL_LLM_MODEL"]:
        values["model"] = env["RAG_EVAL_LLM_MODEL"]
    if base_url:
        values["base_url"] = base_url
    if env["RAG_EVAL_LLM_API_KEY_ENV"]:
        values["api_key_env"] = env["RAG_EVAL_LLM_API_KEY_ENV"]
    for name, key, convert in (("RAG_EVAL_LLM_CONCURRENCY", "concurrency", int), ("RAG_EVAL_LLM_RPM", "rate_limit_rpm", float)):
        try:
            raw = env[name]
            values[key] = convert(raw) if raw else values[key]
        except ValueError:
            pass  # a malformed variable is reported where the LLM client reads it
    if env["RAG_EVAL_LLM_MODEL"] and (base_url or key_present(values["api_key_env"])):
        values["provider"] = "openai"
    return values


def policy() -> DeployPolicy:
    """The deployment policy (rag_eval.llm.policy): locked where the server holds a secret.
    Locked, the owner's ceilings hold for the whole server process (``llm.limiter.share_limits``):
    every session's clients with the server's key share one gate, not one each."""
    found = load_policy()
    if found.locked:
        share_limits(found.max_concurrency, found.max_rpm)
    return found


def current_settings() -> dict[str, Any]:
    """The session's settings: the environment's, then what the Settings page saved, made
    allowed by the deployment policy (a visitor never reaches a server secret)."""
    saved = st.session_state.get(STATE_SETTINGS) or {}
    return enforce(policy(), {**environment_settings(), **saved})


def save_settings(values: dict[str, Any]) -> None:
    """Keep ``values`` for this session. The key variable must be an upper-case variable
    *name*: a pasted key is refused without being echoed, so it never reaches the page."""
    unknown = set(values) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    env_name = values.get("api_key_env", DEFAULTS["api_key_env"])
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]{0,127}", str(env_name or "")):  # keys are never all upper case
        raise ValueError("The key setting takes the name of an environment variable (e.g. OPENAI_API_KEY), "
                         "not the key itself; put the key in the environment or the Space secrets.")
    language = str(values.get("language") or "").strip()
    if language:
        language_code(language)  # a ValueError saying what a code looks like
    merged = {**current_settings(), **values}
    problems = check(policy(), merged)
    if problems:
        raise ValueError("Not saved: " + "; ".join(problems) + ".")
    st.session_state[STATE_SETTINGS] = merged


def use_own_key(key: str, base_url: str) -> None:
    """A visitor's own key for ``base_url`` (where the policy allows it): kept in this
    process's memory under a random name only this session holds; never written."""
    key = (key or "").strip()
    if len(key) < 8:
        raise ValueError("That does not look like an API key (too short).")
    previous = current_settings().get("api_key_env")
    name = register_session_key(key)
    try:
        save_settings({"api_key_env": name, "base_url": base_url})
    except ValueError:
        forget_session_key(name)
        raise
    if is_session_key(previous):
        forget_session_key(previous)


def forget_own_key() -> None:
    """Drop the visitor's own key; the server's settings apply again."""
    name = current_settings().get("api_key_env")
    if is_session_key(name):
        forget_session_key(name)
        saved = dict(st.session_state.get(STATE_SETTINGS) or {})
        saved["api_key_env"] = policy().api_key_env
        st.session_state[STATE_SETTINGS] = enforce(policy(), saved)


def link_proposal() -> dict[str, Any]:
    """The endpoint a link proposed that would take the server's key elsewhere: not in use
    until :func:`accept_link_proposal` (``llm.policy.held_by_link``)."""
    return dict(st.session_state.get(STATE_LINK_PROPOSAL) or {})


def accept_link_proposal() -> None:
    """The user confirmed the link's endpoint (the Settings page's button): saved like a typed one."""
    save_settings(link_proposal())
    st.session_state.pop(STATE_LINK_PROPOSAL, None)


def dismiss_link_proposal() -> None:
    st.session_state.pop(STATE_LINK_PROPOSAL, None)


LINK_NOTE = ("A link proposed other LLM settings. They are not in use: confirm or dismiss them on the Settings page.")


def key_present(env_name: str | None = None) -> bool:
    """Whether an API key is set (environment or .streamlit/secrets.toml); never its value."""
    return bool(setting(env_name or current_settings()["api_key_env"]))


def config_from_settings(values: dict[str, Any], name: str = "dashboard") -> RagConfig:
    """A ``RagConfig`` for these settings: the offline default with the chosen judge kind (none
    chosen: the provider's, the LLM judge when the provider is not ``local``); a kind that talks
    to an OpenAI-compatible endpoint gets the endpoint settings, and so does the generator
    when asked for LLM answers."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    config = default_config(name)
    on_endpoint = values["provider"] != "local"
    kind = values.get("judge") or JUDGE_KINDS.default(on_endpoint)
    if JUDGE_KINDS.find(kind) is None:  # a plugin no longer installed: the provider's judge
        kind = JUDGE_KINDS.default(on_endpoint)
    config = with_judge(config, kind, values)
    if values.get("language"):  # every text of a run is then read in it, unless its row names its own
        config = config.with_changes(language=language_code(values["language"]))
    if on_endpoint and values["use_llm_generator"]:
        config = config.with_changes(**{f"generator.{k}": v for k, v in _endpoint(values).items()},
                                     **{"generator.kind": "openai"})
    return config


def _endpoint(values: dict[str, Any]) -> dict[str, Any]:
    return {"model": values["model"] or None, "base_url": values["base_url"] or None,
            "api_key_env": values["api_key_env"]}


def with_judge(config: RagConfig, kind: str, values: dict[str, Any] | None = None) -> RagConfig:
    """``config`` judged by ``kind`` (Settings, Batch and Ask's judge choice): an endpoint kind
    with the session's endpoint, model, key variable and concurrency (``values``), as the
    ``llm`` kind gets them."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    if kind == config.judge.kind and values is None:
        return config
    values = values or current_settings()
    changes: dict[str, Any] = {"judge.kind": kind, "judge.calibration": None, "judge.options": None}
    if JUDGE_KINDS.get(kind).endpoint:
        changes.update({f"judge.{k}": v for k, v in _endpoint(values).items()})
        changes["judge.concurrency"] = int(values["concurrency"])
    return config.with_changes(**changes)


def judge_kinds(offline_only: bool = False) -> list[str]:
    """Every installed judge kind (the registry's, plugins' included), or only those that
    send nothing anywhere (what a link may choose)."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    return [k.name for k in JUDGE_KINDS if not (offline_only and k.calls_network)]


def judge_label(kind: str) -> str:
    """A judge choice with what it needs (an endpoint, or nothing: it runs here)."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    if not kind:
        return "The provider's (local offline; llm on an endpoint)"
    declared = JUDGE_KINDS.find(kind)
    return f"{kind} ({declared.needs()})" if declared is not None else kind


def choose_judge(config: RagConfig, key: str) -> RagConfig:
    """Batch and Ask: every installed kind with what it needs, on ``config``'s judge; returns
    ``config`` with the chosen one."""
    kinds = judge_kinds()
    if st.session_state.get(key) not in kinds:
        st.session_state[key] = config.judge.kind if config.judge.kind in kinds else kinds[0]
    chosen = st.selectbox("Judge", kinds, key=key, format_func=judge_label,
                          help="Every installed judge kind (`rag-eval judges list`); an endpoint kind uses the "
                               "endpoint, model and key of Settings.")
    return config if chosen == config.judge.kind else with_judge(config, chosen)


def current_config(name: str = "dashboard") -> RagConfig:
    return config_from_settings(current_settings(), name)


def llm_values_for(judge: Any) -> dict[str, Any]:
    """The LLM settings a run with ``judge`` (a ``JudgeConfig``) uses: the session's,
    with the configuration's own model, endpoint, key variable and concurrency winning."""
    own = {"model": judge.model, "base_url": judge.base_url, "api_key_env": judge.api_key_env,
           "concurrency": judge.concurrency}
    return {**current_settings(), **{k: v for k, v in own.items() if v}}


def llm_json_for(judge: Any) -> str:
    """:func:`llm_values_for` as a cache key when ``judge`` talks to an OpenAI-compatible
    endpoint (it then gets the session's LLM settings); empty for any other judge."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    declared = JUDGE_KINDS.find(judge.kind)
    return json.dumps(llm_values_for(judge), sort_keys=True) if declared is not None and declared.endpoint else ""


def llm_from_json(llm_json: str):
    """The ``LLMConfig`` of :func:`llm_json_for`'s key; None for a judge that runs here."""
    return llm_config(json.loads(llm_json)) if llm_json else None


def llm_config(values: dict[str, Any] | None = None):
    """The session's ``LLMConfig`` (environment / secrets first, then these settings):
    model, base URL, key variable, concurrency, rate limit and cache."""
    from rag_eval.llm.config import LLMConfig

    values = values or current_settings()
    return LLMConfig.from_settings(
        model=values["model"] or None,
        base_url=values["base_url"] or None,
        api_key_env=values["api_key_env"] or None,
        concurrency=int(values["concurrency"]),
        rpm=float(values["rate_limit_rpm"]) if values["rate_limit_rpm"] else None,
        use_cache=bool(values["cache"]),
    )


SESSION_CONFIG = "Settings page (this session)"


def configs_dir():
    """Where saved configurations (``rag-eval`` YAML) are picked up: ``data_dir()/configs``."""
    from rag_eval.config import data_dir

    return data_dir() / "configs"


def config_choices() -> list[str]:
    """The session's configuration first, then every saved ``*.yaml`` by file name."""
    folder = configs_dir()
    saved = sorted(p.name for p in folder.glob("*.y*ml")) if folder.is_dir() else []
    return [SESSION_CONFIG, *saved]


def chosen_config(choice: str) -> RagConfig:
    """The configuration a page's picker names (a saved YAML file is validated, with
    errors naming the file and field)."""
    if choice == SESSION_CONFIG:
        return current_config()
    return RagConfig.from_yaml(configs_dir() / choice)
