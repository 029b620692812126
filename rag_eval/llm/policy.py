"""Who may point the LLM where: the deployment policy of the dashboard.

Locally, with no secret configured, a user may type any endpoint, model and key
variable (today's freedom: nothing of the server's can leak). Where the environment
(or ``.streamlit/secrets.toml``) configures a secret, as on a public Space, the
dashboard is in *deployment mode*: the endpoint and the key variable come from the
environment only. Visitors choose among the endpoints and models the owner allowed,
can never type a URL that would receive a server secret, and never name a server
variable. If the owner opts in, a visitor may use their *own* key with an allowed
endpoint; that key stays in their session's memory (``rag_eval.config.register_session_key``).

Settings (environment first, then ``secrets.toml``):

=================================  ==================================================
``RAG_EVAL_DEPLOYMENT``            ``public`` or ``space`` (always locked), ``local`` (never), unset: locked
                                   when any secret is configured or ``SPACE_ID`` is set
``RAG_EVAL_ALLOWED_BASE_URLS``     endpoints visitors may pick (comma-separated; ``default``
                                   = the provider's own); default: the configured base URL
``RAG_EVAL_ALLOWED_MODELS``        models visitors may pick (``*`` = any); default: the
                                   configured model
``RAG_EVAL_ALLOW_VISITOR_KEYS``    ``1``: visitors may use their own key
``RAG_EVAL_VISITOR_BASE_URLS``     endpoints a visitor's own key may go to (default: the
                                   allowed endpoints)
``RAG_EVAL_LLM_CONCURRENCY`` /     ceilings on the server key's concurrency and rate
``RAG_EVAL_LLM_RPM``               (visitors may lower them, never raise them); held by the
                                   whole process (``llm.limiter.share_limits``)
``RAG_EVAL_PHOENIX_URL``           the Phoenix server the dashboard imports traces from
                                   (locked: the only one; ``PHOENIX_API_KEY`` goes nowhere else)
=================================  ==================================================

The policy is the one answer to "is this dashboard locked, and why" (:attr:`DeployPolicy.reason`):
every page, widget, download and command asks it before it reaches an address a visitor typed
(:meth:`DeployPolicy.phoenix_target`), shows or writes a server path
(:attr:`DeployPolicy.show_paths`) or accepts a setting from the address bar
(:func:`url_settings`). Locked, no visitor input becomes a network address: the owner's
configured hosts are the only egress. On every deployment, what a link or a configuration
file names is a proposal, never a route for the environment's key (:func:`held_by_link`,
:func:`file_endpoints`; docs/security.md, "Keys go where the owner says").

Pure: :func:`load_policy` reads settings through a lookup function, :func:`check` and
:func:`enforce` work on plain dicts, so the Settings page only wires them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_eval.config import SESSION_KEY_PREFIX, configured_secrets, setting
from rag_eval.llm.constants import DEFAULT_API_KEY_ENV, DEFAULT_MODEL, OPENAI_URL

ANY = "*"
PROVIDER_DEFAULT = ""  # the provider's own endpoint (api.openai.com)
DEFAULT_MAX_CONCURRENCY = 4
DEFAULT_MAX_RPM = 60.0
_TRUE = {"1", "true", "yes", "on"}
#: RAG_EVAL_DEPLOYMENT values that always lock: ``space`` is what a Space is (locked), so it means ``public``
LOCKED_MODES = ("public", "space")


class PolicyError(ValueError):
    """A visitor asked for something the deployment does not allow."""


@dataclass(frozen=True, slots=True)
class DeployPolicy:
    locked: bool = False
    reason: str = ""  # why locked, in words ("" when not)
    base_urls: tuple[str, ...] = (PROVIDER_DEFAULT,)  # first is the default
    models: tuple[str, ...] = (ANY,)  # first is the default
    api_key_env: str = DEFAULT_API_KEY_ENV
    visitor_keys: bool = False
    visitor_base_urls: tuple[str, ...] = ()
    max_concurrency: int | None = None
    max_rpm: float | None = None
    phoenix_url: str = ""  # the owner's Phoenix server ("" when none is configured)

    @property
    def show_paths(self) -> bool:
        """Server paths (data directory, uploads) are shown only outside deployment mode."""
        return not self.locked

    @property
    def any_model(self) -> bool:
        return ANY in self.models

    @property
    def visitor_addresses(self) -> bool:
        """Whether an address a visitor types may be reached (a Phoenix server, an endpoint
        outside the allowed list): only when the dashboard is not locked."""
        return not self.locked

    def phoenix_target(self, typed_url: str) -> tuple[str, bool]:
        """``(url, send_key)``: the Phoenix server an import may reach and whether the owner's
        ``PHOENIX_API_KEY`` may go with it. Locked: the owner's configured server only (what
        was typed is never used); unlocked: the typed address, with the key only when it is
        the configured server or none is configured (the user is the owner then)."""
        typed = _norm(typed_url)
        if self.locked:
            if not self.phoenix_url:
                raise PolicyError("this deployment imports traces from files only: the owner configured no Phoenix server")
            return self.phoenix_url, True
        if not typed:
            raise PolicyError("give a Phoenix server's address")
        return typed, (not self.phoenix_url or typed == self.phoenix_url)


def _norm(url: Any) -> str:
    text = str(url or "").strip().rstrip("/")
    return PROVIDER_DEFAULT if text.lower() in ("", "default") else text


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in re.split(r"[,\s]+", text or "") if p.strip())


def is_session_key(name: Any) -> bool:
    return str(name or "").startswith(SESSION_KEY_PREFIX)


def load_policy(lookup: Callable[[str], str | None] = setting, server_secret: bool | None = None) -> DeployPolicy:
    """The policy the settings describe. ``server_secret``: whether the server holds
    a secret (default: any configured secret, visitors' session keys excluded)."""
    mode = (lookup("RAG_EVAL_DEPLOYMENT") or "").strip().lower()
    if mode not in ("", "auto", *LOCKED_MODES, "local"):
        raise ValueError(f"RAG_EVAL_DEPLOYMENT must be 'public' (or 'space'), 'local', 'auto' or unset; got {mode!r}")
    if server_secret is None:
        server_secret = bool(configured_secrets(sessions=False))
    locked = mode in LOCKED_MODES or (mode != "local" and (server_secret or bool(lookup("SPACE_ID"))))
    reason = (f"RAG_EVAL_DEPLOYMENT={mode}" if mode in LOCKED_MODES else "a Hugging Face Space (SPACE_ID)"
              if lookup("SPACE_ID") else "a server secret is configured") if locked else ""
    phoenix_url = _norm(lookup("RAG_EVAL_PHOENIX_URL"))
    configured_url = _norm(lookup("RAG_EVAL_LLM_BASE_URL") or lookup("OPENAI_BASE_URL"))
    urls = tuple(_norm(u) for u in _split(lookup("RAG_EVAL_ALLOWED_BASE_URLS")))
    base_urls = tuple(dict.fromkeys((configured_url, *urls)))  # the configured endpoint is the default
    models = _split(lookup("RAG_EVAL_ALLOWED_MODELS")) or (lookup("RAG_EVAL_LLM_MODEL") or DEFAULT_MODEL,)
    visitor_urls = tuple(_norm(u) for u in _split(lookup("RAG_EVAL_VISITOR_BASE_URLS"))) or base_urls

    def number(name: str, default: float) -> float:
        raw = lookup(name)
        try:
            return float(raw) if raw else default
        except ValueError as err:
            raise ValueError(f"setting {name}: cannot read {raw!r} as a number") from err

    if not locked:
        return DeployPolicy(locked=False, phoenix_url=phoenix_url)
    return DeployPolicy(
        locked=True,
        reason=reason,
        phoenix_url=phoenix_url,
        base_urls=base_urls,
        models=models,
        api_key_env=lookup("RAG_EVAL_LLM_API_KEY_ENV") or DEFAULT_API_KEY_ENV,
        visitor_keys=(lookup("RAG_EVAL_ALLOW_VISITOR_KEYS") or "").strip().lower() in _TRUE,
        visitor_base_urls=visitor_urls,
        max_concurrency=int(number("RAG_EVAL_LLM_CONCURRENCY", DEFAULT_MAX_CONCURRENCY)),
        max_rpm=number("RAG_EVAL_LLM_RPM", DEFAULT_MAX_RPM),
    )


def check(policy: DeployPolicy, values: Mapping[str, Any]) -> list[str]:
    """Why these settings are not allowed (empty: they are). Messages never quote a
    key; they name the allowed choices."""
    if not policy.locked:
        return []
    problems = []
    url = _norm(values.get("base_url"))
    if is_session_key(values.get("api_key_env")):
        if not policy.visitor_keys:
            problems.append("this deployment does not take visitors' own keys")
        elif url not in policy.visitor_base_urls:
            problems.append("your own key can only be sent to one of the listed endpoints")
        return problems
    if str(values.get("api_key_env") or policy.api_key_env) != policy.api_key_env:
        problems.append("the key variable is set by the server and cannot be changed here")
    if url not in policy.base_urls:
        problems.append("the endpoint must be one the owner allowed (pick it from the list)")
    model = str(values.get("model") or "")
    if not policy.any_model and model not in policy.models:
        problems.append(f"model must be one of: {', '.join(policy.models)}")
    return problems


def enforce(policy: DeployPolicy, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` made allowed: anything not allowed is replaced by the owner's default
    (endpoint, key variable, model), and concurrency / rate are capped."""
    out = dict(values)
    if not policy.locked:
        return out
    own = is_session_key(out.get("api_key_env")) and policy.visitor_keys
    allowed_urls = policy.visitor_base_urls if own else policy.base_urls
    if _norm(out.get("base_url")) not in allowed_urls:
        out["base_url"] = allowed_urls[0] if allowed_urls else PROVIDER_DEFAULT
    else:
        out["base_url"] = _norm(out.get("base_url"))
    if not own:
        out["api_key_env"] = policy.api_key_env
        if not policy.any_model and out.get("model") not in policy.models:
            out["model"] = policy.models[0]
    if policy.max_concurrency is not None:
        out["concurrency"] = max(1, min(int(out.get("concurrency") or 1), policy.max_concurrency))
    if policy.max_rpm is not None:
        rpm = out.get("rate_limit_rpm")
        out["rate_limit_rpm"] = min(float(rpm), policy.max_rpm) if rpm else policy.max_rpm
    return out


#: The settings a link may propose but, while the server holds a key, not apply: where requests
#: (and so the key) go, and what the key is spent on (a link must not pick a pricier model on the
#: owner's bill either, nor switch on LLM answers). A link's key variable is never taken (the key
#: is the environment's).
LINK_HELD = ("base_url", "provider", "model", "use_llm_generator")


def _split_link(policy: DeployPolicy, base: Mapping[str, Any], proposed: Mapping[str, Any],
                server_key: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(applied, held)``: see :func:`url_settings` and :func:`held_by_link`."""
    offered = {name: value for name, value in proposed.items() if name != "api_key_env"}
    if policy.locked:  # the owner's allow-lists decide; nothing outside them is even proposed
        merged = {**base, **offered}
        enforced = enforce(policy, merged)
        kept = {name: value for name, value in offered.items() if enforced.get(name) == value}
        return (kept if not check(policy, {**base, **kept}) else {}), {}
    held = {name: offered[name] for name in LINK_HELD
            if name in offered and server_key and _norm(offered[name]) != _norm(base.get(name))}
    return {name: value for name, value in offered.items() if name not in held}, held


def url_settings(policy: DeployPolicy, base: Mapping[str, Any], proposed: Mapping[str, Any],
                 server_key: bool = False) -> dict[str, Any]:
    """The part of settings read from a link (``proposed``, over ``base``: what the
    environment configures) applied at once. On every deployment a link's key variable is
    dropped (``?key_env=HOME`` changes nothing). Locked, a value :func:`enforce` would replace
    or :func:`check` refuses is dropped too. Unlocked, while the environment holds a key
    (``server_key``), what decides where it goes (:data:`LINK_HELD`) is not applied but held
    (:func:`held_by_link`): a page a developer did not write must not route their key."""
    return _split_link(policy, base, proposed, server_key)[0]


def held_by_link(policy: DeployPolicy, base: Mapping[str, Any], proposed: Mapping[str, Any],
                 server_key: bool = False) -> dict[str, Any]:
    """The settings a link proposes that differ from ``base`` and would route the server's
    key (unlocked, with ``server_key``): shown for the user to confirm, used only after an
    explicit confirmation (the Settings page's button); empty when there is nothing to confirm."""
    return _split_link(policy, base, proposed, server_key)[1]


def file_endpoints(named: Mapping[str, Any], configured: Any) -> dict[str, str]:
    """The endpoints a configuration file names (``{field: url}``) that are not the one the
    environment configures (``configured``; empty: the provider's own). The environment's key
    does not go to these (:func:`rag_eval.config.key_for`): a configuration file can come from
    anyone, a pull request included; the command line, a Python argument or the environment
    name an endpoint for the key."""
    home = _norm(configured)
    return {name: _norm(url) for name, url in named.items()
            if url and _norm(url) not in (home, *((OPENAI_URL,) if not home else ()))}

