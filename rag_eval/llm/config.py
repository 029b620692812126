"""How to reach an LLM: model, endpoint, key variable, limits, cache.

Resolution order: explicit arguments (CLI flags) over environment variables over
``.streamlit/secrets.toml`` (``rag_eval.config.setting``) over defaults. The API key
itself is never stored on the object: only the *name* of the variable holding it, read
at call time, so it cannot leak through ``repr()``, ``to_dict()``, run records or
cache keys.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rag_eval import config as app_config
from rag_eval.llm.constants import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    OPENAI_URL,
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

# Setting name -> (field, converter). OPENAI_BASE_URL is the openai package's own name.
_ENV_SETTINGS: tuple[tuple[str, str, type], ...] = (
    ("RAG_EVAL_LLM_MODEL", "model", str),
    ("RAG_EVAL_LLM_BASE_URL", "base_url", str),
    ("OPENAI_BASE_URL", "base_url", str),
    ("RAG_EVAL_LLM_API_KEY_ENV", "api_key_env", str),
    ("RAG_EVAL_LLM_CONCURRENCY", "concurrency", int),
    ("RAG_EVAL_LLM_RPM", "rpm", float),
    ("RAG_EVAL_LLM_TPM", "tpm", float),
    ("RAG_EVAL_LLM_TIMEOUT_S", "timeout_s", float),
    ("RAG_EVAL_LLM_MAX_RETRIES", "max_retries", int),
    ("RAG_EVAL_LLM_MAX_TOKENS", "max_tokens", int),
    ("RAG_EVAL_LLM_CACHE_DIR", "cache_dir", str),
)


@dataclass(slots=True)
class LLMConfig:
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    concurrency: int = DEFAULT_CONCURRENCY
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    temperature: float = DEFAULT_TEMPERATURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    cache_dir: str | Path | None = None  # None: data_dir()/cache/llm, resolved at use
    prices: dict[str, Any] | None = None  # model -> {"input": USD/1M, "output": USD/1M}
    use_cache: bool = True
    json_mode: bool = True  # ask for JSON output where the provider supports it
    extra_headers: dict[str, str] = field(default_factory=dict)  # non-secret (e.g. OpenRouter X-Title)

    def __post_init__(self) -> None:
        if not self.model or not str(self.model).strip():
            raise ValueError("model: must not be empty")
        for name, low in (("concurrency", 1), ("max_retries", 0), ("max_tokens", 1)):
            if getattr(self, name) < low:
                raise ValueError(f"{name}: must be >= {low}, got {getattr(self, name)}")
        for name in ("timeout_s", "rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name}: must be > 0, got {value}")
        if not _ENV_NAME.match(str(self.api_key_env or "")):
            # Never echo the value: a common slip is passing the key itself here.
            raise ValueError(
                "api_key_env: must be the NAME of an environment variable holding the key "
                "(letters, digits, underscores), e.g. OPENAI_API_KEY, not the key itself"
            )

    @classmethod
    def from_settings(cls, **overrides: Any) -> LLMConfig:
        """Config from environment / secrets, then ``overrides`` (None values ignored)."""
        values: dict[str, Any] = {}
        for name, fld, convert in _ENV_SETTINGS:
            if fld in values:
                continue  # RAG_EVAL_LLM_BASE_URL wins over OPENAI_BASE_URL
            raw = app_config.setting(name)
            if raw is None:
                continue
            try:
                values[fld] = convert(raw)
            except ValueError as err:
                raise ValueError(f"setting {name}: cannot read {raw!r} as {convert.__name__}") from err
        prices = app_config.setting("RAG_EVAL_LLM_PRICES")
        if prices:
            try:
                values["prices"] = json.loads(prices)
            except json.JSONDecodeError as err:
                raise ValueError(f"setting RAG_EVAL_LLM_PRICES: not JSON ({err.msg})") from err
        known = {f.name for f in fields(cls)}
        for key, value in overrides.items():
            if key not in known:
                raise ValueError(f"unknown LLM setting {key!r}; known: {', '.join(sorted(known))}")
            if value is not None:
                values[key] = value
        return cls(**values)

    def api_key(self) -> str | None:
        """The key, read now from the variable named by ``api_key_env`` (env, then secrets),
        for this endpoint: none for one a configuration file named (``rag_eval.config.key_for``)."""
        return app_config.key_for(self.api_key_env, self.base_url)

    def has_key(self) -> bool:
        return bool(self.api_key())

    def resolved_cache_dir(self) -> Path:
        if self.cache_dir:
            return Path(self.cache_dir)
        return app_config.data_dir() / "cache" / "llm"

    def endpoint(self) -> str:
        """The endpoint as recorded in results, summaries and run records: without any
        user:password@ or query string, which some proxies use to carry credentials."""
        return public_url(self.base_url) if self.base_url else OPENAI_URL

    def to_dict(self) -> dict[str, Any]:
        """Plain settings for run records: no secret can be in here (only the variable
        name; credentials embedded in the URL are removed)."""
        d = asdict(self)
        d["base_url"] = public_url(self.base_url) if self.base_url else None
        d["cache_dir"] = str(self.cache_dir) if self.cache_dir else None
        return d


def public_url(url: str) -> str:
    """``url`` without user info and query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
