"""Where things live and how to reach services: environment first, then
``.streamlit/secrets.toml``, then explicit arguments (callers pass flags last).

Secrets are read here and handed to adapters; nothing in this module logs them.
"""

from __future__ import annotations

import os
import re
import secrets as _random
import threading
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import platformdirs

APP_NAME = "rag-eval"
# Where a Hugging Face Space mounts its persistent storage (when the owner attaches it).
SPACE_STORAGE = Path("/data")


def on_space() -> bool:
    """Whether this runs on a Hugging Face Space (the platform sets ``SPACE_ID``)."""
    return bool(os.environ.get("SPACE_ID"))


def _space_storage() -> Path | None:
    """``/data/rag-eval`` on a Space with persistent storage attached (and writable), else None."""
    if on_space() and SPACE_STORAGE.is_dir() and os.access(SPACE_STORAGE, os.W_OK | os.X_OK):
        return SPACE_STORAGE / APP_NAME
    return None


def data_dir() -> Path:
    """Root of the workbench's own files (qdrant/, runs.sqlite, cache/, models/).
    ``RAG_EVAL_HOME`` overrides; on a Space with persistent storage it is ``/data/rag-eval``;
    otherwise the platform default under the user's home (on a Space: the ephemeral disk)."""
    root = os.environ.get("RAG_EVAL_HOME") or _space_storage() or platformdirs.user_data_dir(APP_NAME)
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir_note() -> str:
    """One line for the Overview page: where runs and collections are kept, and for how long."""
    where = f"`{data_dir()}`"
    if os.environ.get("RAG_EVAL_HOME"):
        return f"Runs, collections and caches are kept in {where} (RAG_EVAL_HOME)."
    if _space_storage() is not None:
        return f"Runs, collections and caches are kept in {where}, on this Space's persistent storage."
    if on_space():
        return (f"Runs, collections and caches are kept in {where}, on this Space's ephemeral disk: they are lost "
                "when the Space restarts (attach persistent storage to keep them under /data).")
    return f"Runs, collections and caches are kept in {where}."


def shared_data_dir() -> Path:
    """The shared datasets (RAGBench parquet, BEIR collection...). ``RAG_EVAL_SHARED_DATA``
    overrides the default ``../shared/data`` next to the project root."""
    env = os.environ.get("RAG_EVAL_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@lru_cache(maxsize=1)
def _secrets() -> dict[str, Any]:
    for candidate in (Path.cwd() / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"):
        if candidate.is_file():
            try:
                return tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                return {}
    return {}


# Keys a dashboard visitor typed for their own use: in this process's memory only, under
# a random variable-like name that only their session knows (never in the environment,
# a file, a run record or a cache). ``setting(name)`` resolves these names first.
SESSION_KEY_PREFIX = "RAG_EVAL_SESSION_KEY_"
_session_keys: dict[str, str] = {}
_given_secrets: set[str] = set()  # secrets passed as values (remember_secret)
_session_keys_lock = threading.Lock()
_MAX_SESSION_KEYS = 1000

# THE list of settings that hold secrets whatever their name (the run store's redaction, the
# dashboard's error messages and every log read it through :func:`configured_secrets`); any
# other setting whose name ends like a secret's (``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
# ``*_PASSWORD``) counts as one too.
KNOWN_SECRET_SETTINGS = ("OPENAI_API_KEY", "RAG_EVAL_LLM_API_KEY", "LLM_API_KEY", "RAG_EVAL_API_KEY", "QDRANT_API_KEY",
                         "HF_TOKEN")
# Settings holding a URL whose password is a secret (the run store's database server).
SECRET_URL_SETTINGS = ("RAG_EVAL_DB_URL",)
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
_MIN_SWEPT_SECRET = 8  # a secret-named setting shorter than this ("1", "true") is not a secret


def register_session_key(key: str) -> str:
    """Keep a visitor's own key in memory; returns the random name that resolves to it
    (pass it as ``api_key_env``). Nothing is written anywhere."""
    name = SESSION_KEY_PREFIX + _random.token_hex(16).upper()
    with _session_keys_lock:
        while len(_session_keys) >= _MAX_SESSION_KEYS:
            _session_keys.pop(next(iter(_session_keys)))
        _session_keys[name] = key
    return name


def remember_secret(value: str) -> None:
    """Redact ``value`` from now on, as a configured secret (a key passed as a plugin judge's
    option: it is in no environment variable, yet must not reach a run record or a log)."""
    if len(value) >= 4:
        with _session_keys_lock:
            _given_secrets.add(value)


def forget_session_key(name: str | None) -> None:
    with _session_keys_lock:
        _session_keys.pop(str(name or ""), None)


# Names that look secret but hold public values (the official Python images' release-key fingerprint).
_PUBLIC_NAMES = frozenset({"GPG_KEY"})


def looks_secret(name: str) -> bool:
    """Whether a setting's name says it holds a secret."""
    return name in KNOWN_SECRET_SETTINGS or (name not in _PUBLIC_NAMES and bool(_SECRET_NAME.search(name)))


def url_passwords(url: str | None) -> list[str]:
    """The password inside a URL (``scheme://user:password@host/…``) as written and
    percent-decoded; empty when there is none."""
    if not url or "://" not in url:
        return []
    try:
        password = urlsplit(url).password
    except ValueError:
        return []
    return list(dict.fromkeys([password, unquote(password)])) if password else []


def configured_secrets(*names: str | None, sessions: bool = True) -> list[str]:
    """Every secret this process could hand out: the values of the named settings, of
    the known secret settings, the password of the run store's URL, of every environment variable or ``secrets.toml`` key
    whose name looks secret, and (``sessions``) of the visitors' session keys and the secrets given as judge options. Longest first, so a
    secret containing another is replaced whole."""
    values: set[str] = set()
    for name in (*names, *KNOWN_SECRET_SETTINGS, os.environ.get("RAG_EVAL_LLM_API_KEY_ENV")):
        value = setting(name) if name else None
        if value and len(value) >= 4:
            values.add(value)
    for name in SECRET_URL_SETTINGS:
        values.update(p for p in url_passwords(setting(name)) if len(p) >= 4)
    swept = [(k, v) for k, v in os.environ.items()] + [(str(k), v) for k, v in _secrets().items()]
    for name, value in swept:
        if isinstance(value, str) and len(value) >= _MIN_SWEPT_SECRET and looks_secret(name):
            values.add(value)
    if sessions:  # secrets given at run time, not the server's: they do not lock a dashboard
        with _session_keys_lock:
            values.update(_given_secrets)
            values.update(v for v in _session_keys.values() if len(v) >= 4)
    return sorted(values, key=len, reverse=True)


def setting(name: str, default: str | None = None) -> str | None:
    """A visitor's session key (by its random name), else an environment variable, else
    a top-level key of ``.streamlit/secrets.toml``."""
    if name.startswith(SESSION_KEY_PREFIX):
        with _session_keys_lock:
            return _session_keys.get(name, default)
    value = os.environ.get(name)
    if value:
        return value
    value = _secrets().get(name)
    return str(value) if value not in (None, "") else default


# Endpoints a configuration file named that the environment does not configure
# (``RagConfig.from_yaml``, by ``llm.policy.file_endpoints``): no key from the environment goes
# there in this process. Kept by address, so every copy of a configuration (a page's, a judge's,
# a serialised one) is covered: nothing has to carry where an endpoint came from.
_keyless_endpoints: set[str] = set()


def withhold_keys_from(url: str, withhold: bool = True) -> None:
    """From now on, :func:`key_for` gives no key for requests to ``url`` (``withhold=False``:
    it does again, the user trusted a file naming it)."""
    (_keyless_endpoints.add if withhold else _keyless_endpoints.discard)(url.strip().rstrip("/"))


# Key variables a configuration file named that are not the environment's LLM key variable
# (a file must not send PHOENIX_API_KEY or QDRANT_API_KEY to an LLM host): read for no request.
_withheld_variables: set[str] = set()


def withhold_key_variable(name: str, withhold: bool = True) -> None:
    """From now on, :func:`key_for` reads nothing from the variable ``name`` (``withhold=False``:
    it does again, the user trusted a file naming it)."""
    (_withheld_variables.add if withhold else _withheld_variables.discard)(name)


def key_for(api_key_env: str, base_url: str | None) -> str | None:
    """The key in ``api_key_env`` for a request to ``base_url``: None when a configuration
    file named that endpoint and the environment does not configure it, or named that key
    variable in place of the environment's (docs/security.md, "Keys go where the owner
    says"). The one place a request's key is read."""
    if base_url and base_url.strip().rstrip("/") in _keyless_endpoints:
        return None
    if api_key_env in _withheld_variables:
        return None
    return setting(api_key_env)


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret replaced, for error messages and logs."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
