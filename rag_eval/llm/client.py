"""The OpenAI-compatible client: cache, adaptive limiter, retries, usage and cost.

One request is one loop over ``range(max_retries + 1)`` (STYLE.md §3): check the
cache, wait for the limiter, send, and on a retryable failure back off and go round
again; after the last attempt raise a typed :mod:`rag_eval.llm.errors` error. The
``openai`` package sends the request (``AsyncOpenAI`` with ``max_retries=0``: the
retry policy is ours, so it can drive the limiter) with a per-request timeout.

Loop-bound resources (the ``AsyncOpenAI``/httpx client and the limiter) are created
inside the running loop by :meth:`LLMClient.session` and closed with it; nothing is
created at import or construction, so Streamlit reruns and ``asyncio.run`` per batch
are safe. The API key is read when a session opens and redacted from every message.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import json
import logging
import ssl
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from rag_eval.config import configured_secrets
from rag_eval.llm import errors
from rag_eval.llm.cache import LLMCache, cache_key
from rag_eval.llm.compat import RequestShape
from rag_eval.llm.config import LLMConfig
from rag_eval.llm.constants import NO_KEY_PLACEHOLDER
from rag_eval.llm.limiter import AdaptiveLimiter, SharedGate, shared_gate
from rag_eval.llm.pricing import cost_usd, estimate_message_tokens, price_for
from rag_eval.llm.redaction import redact_text, redact_value
from rag_eval.llm.retry import backoff_delay, parse_retry_after, should_retry

if TYPE_CHECKING:  # the package is imported when a request is sent (a cached rerun sends none)
    import openai

log = logging.getLogger(__name__)

Messages = Sequence[dict[str, Any]]
ProgressCallback = Callable[[int, int], None]
T = TypeVar("T")
R = TypeVar("R")

_JSON_HEADERS = {"Content-Type": "application/json"}

# Bumped when the cached value's shape changes, so old entries are not misread.
CACHE_FORMAT = 1


@dataclass(slots=True)
class Completion:
    """One answer. ``cached`` answers cost nothing now; ``cost_usd`` is what the
    original call cost (None when the price is unknown)."""

    text: str
    finish_reason: str | None
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens / completion_tokens / total_tokens
    latency_s: float = 0.0
    cached: bool = False
    retries: int = 0
    cost_usd: float | None = None
    refusal: str | None = None
    model: str = ""
    json_mode: bool = False  # whether JSON mode was actually used
    # The first answer token's alternatives, ``{token: log-probability}``, when they were asked
    # for (``top_logprobs``) and the endpoint returned them (G-Eval's weighted score reads them).
    first_token_logprobs: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:  # flat fields: no need for asdict's deep copy
        return {f: getattr(self, f) for f in self.__slots__} | {"usage": dict(self.usage)}


@dataclass(slots=True)
class ClientStats:
    requests: int = 0  # HTTP requests sent (each retry counts)
    cache_hits: int = 0
    retries: int = 0
    rate_limited: int = 0
    failures: int = 0  # calls that ended in an error after all retries


class _Session:
    """Loop-bound resources: the openai client and the limiter; ``shared``: the process-wide
    gate of this endpoint and key, when the process shares limits (``limiter.share_limits``)."""

    def __init__(self, aclient: openai.AsyncOpenAI, limiter: AdaptiveLimiter, key: str | None,
                 shared: SharedGate | None = None) -> None:
        self.aclient = aclient
        self.limiter = limiter
        self.shared = shared
        self.key = key
        self.loop = asyncio.get_running_loop()
        # Every secret this process holds (and this session's key): redacted from
        # every text the provider sends back, before anything parses or keeps it.
        self.secrets = configured_secrets() + ([key] if key else [])


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """The openai package's own default TLS verification (its HTTP library's
    ``create_ssl_context()``: system/OS trust store, SSL_CERT_FILE / SSL_CERT_DIR), built
    once per process. Building it loads every CA certificate, which costs more than a
    whole small batch, so sessions share it instead of rebuilding it."""
    import openai

    for base in openai.DefaultAsyncHttpxClient.__mro__:
        factory = getattr(sys.modules.get(base.__module__.split(".")[0]), "create_ssl_context", None)
        if callable(factory):
            return factory()
    return ssl.create_default_context()


def _usage_dict(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    out = {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens") if isinstance(usage.get(k), int)}
    if "total_tokens" not in out and out:
        out["total_tokens"] = out.get("prompt_tokens", 0) + out.get("completion_tokens", 0)
    return out


def _first_token_logprobs(logprobs: Any) -> dict[str, float] | None:
    """``{token: logprob}`` of the first answer token's alternatives (the chosen one
    included), from a chat completion's ``choices[0].logprobs``; None when absent."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content or not isinstance(content[0], dict):
        return None
    first = content[0]
    out = {str(t["token"]): float(t["logprob"]) for t in first.get("top_logprobs") or []
           if isinstance(t, dict) and isinstance(t.get("logprob"), int | float)}
    if isinstance(first.get("logprob"), int | float):
        out.setdefault(str(first.get("token")), float(first["logprob"]))
    return out or None


def _decode_chat(text: str) -> dict[str, Any]:
    """The chat completion as plain JSON (parsed here rather than into the package's
    models: we read five fields and this is the hot path of a large batch)."""
    value = json.loads(text)
    if not isinstance(value, dict) or not isinstance(value.get("choices"), list):
        raise ValueError(f"not a chat completion: {text[:200]!r}")
    return value


class LLMClient:
    """A client for one endpoint/model. Safe to share; each event loop gets its own session."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.stats = ClientStats()
        self.cache = LLMCache(config.resolved_cache_dir()) if config.use_cache else None
        self._price = price_for(config.model, config.prices)
        self._shape = RequestShape()  # optional parameters as this endpoint wants them
        self._sessions: dict[int, _Session] = {}

    # -- sessions ----------------------------------------------------------------------
    def _open_aclient(self) -> tuple[openai.AsyncOpenAI, str | None]:
        import openai  # about 0.4 s: only once a request is about to be sent

        key = self.config.api_key()
        if not key:
            if not self.config.base_url:
                raise errors.ConfigError(
                    f"no API key: set the environment variable {self.config.api_key_env} "
                    "(or pass --base-url for a local server that needs none)"
                )
            key = None
        aclient = openai.AsyncOpenAI(
            api_key=key or NO_KEY_PLACEHOLDER,
            base_url=self.config.base_url,
            max_retries=0,
            timeout=self.config.timeout_s,
            default_headers=self.config.extra_headers or None,
            http_client=openai.DefaultAsyncHttpxClient(verify=_tls_context()),
        )
        return aclient, key

    @property
    def waiting_on(self) -> str | None:
        """The rate limit this client's requests wait on now (:attr:`AdaptiveLimiter.waiting_on`), or None."""
        sessions = list(self._sessions.values())
        return next((w for s in sessions for w in (s.limiter.waiting_on, s.shared and s.shared.waiting_on) if w), None)

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[_Session]:
        """Open (or reuse) this loop's session; closed when the outermost user exits."""
        loop_id = id(asyncio.get_running_loop())
        existing = self._sessions.get(loop_id)
        if existing is not None and existing.loop is asyncio.get_running_loop():
            yield existing
            return
        aclient, key = self._open_aclient()
        limiter = AdaptiveLimiter(self.config.rpm, self.config.tpm, self.config.concurrency)
        sess = _Session(aclient, limiter, key, shared_gate(self.config.endpoint(), self.config.api_key_env))
        self._sessions[loop_id] = sess
        try:
            yield sess
        finally:
            self._sessions.pop(loop_id, None)
            await aclient.close()

    # -- one call ----------------------------------------------------------------------
    def _cache_payload(self, messages: Messages, params: dict[str, Any], namespace: str) -> dict[str, Any]:
        return {
            "format": CACHE_FORMAT,
            "endpoint": self.config.endpoint(),
            "model": self.config.model,
            "messages": list(messages),
            "params": params,
            "namespace": namespace,
        }

    def _params(self, temperature: float | None, max_tokens: int | None, json_mode: bool,
                top_logprobs: int = 0) -> dict[str, Any]:
        params: dict[str, Any] = {
            "temperature": self.config.temperature if temperature is None else temperature,
            "max_tokens": self.config.max_tokens if max_tokens is None else max_tokens,
            "json_mode": bool(json_mode),
        }
        if top_logprobs:  # only then: every other call keeps the cache key it always had
            params["top_logprobs"] = int(top_logprobs)
        return params

    def _error_text(self, err: BaseException, sess: _Session | None) -> str:
        secrets = sess.secrets if sess else configured_secrets(self.config.api_key_env)
        return redact_text(str(err) or type(err).__name__, secrets)

    async def complete(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        cache_namespace: str = "",
        use_cache: bool = True,
        top_logprobs: int = 0,
    ) -> Completion:
        """One chat completion. Raises an :class:`~rag_eval.llm.errors.LLMError`
        subclass when the provider cannot answer after the retries. ``top_logprobs``: ask
        for that many alternatives of each answer token (an endpoint that refuses them is
        asked again without; :attr:`Completion.first_token_logprobs` is then None)."""
        params = self._params(temperature, max_tokens, json_mode, top_logprobs)
        key = cache_key(self._cache_payload(messages, params, cache_namespace))
        use_cache = use_cache and self.cache is not None
        if use_cache:
            hit = self.cache.get(key)  # type: ignore[union-attr]
            if hit is not None and hit.get("format") == CACHE_FORMAT:
                self.stats.cache_hits += 1
                completion = Completion(**hit["completion"])
                completion.cached = True
                completion.retries = 0
                return completion
        async with self.session() as sess:
            completion = await self._send_with_retries(sess, messages, params)
        if use_cache:
            self.cache.put(key, {"format": CACHE_FORMAT, "completion": completion.to_dict()})  # type: ignore[union-attr]
        return completion

    async def _send_with_retries(self, sess: _Session, messages: Messages, params: dict[str, Any]) -> Completion:
        import openai  # loaded by the session already: a dictionary lookup

        cfg = self.config
        tokens = estimate_message_tokens(messages) + params["max_tokens"]
        retries = 0
        last: errors.LLMError | None = None
        attempt = 0
        while attempt <= cfg.max_retries:
            await sess.limiter.acquire(tokens)
            if sess.shared is not None:
                try:
                    await sess.shared.acquire()
                except BaseException:  # cancelled while waiting: give this session's slot back
                    sess.limiter.release()
                    raise
            start = time.perf_counter()
            status: int | None = None
            headers: Any = None
            try:
                self.stats.requests += 1
                body = self._shape.body(
                    cfg.model, list(messages), params["temperature"], params["max_tokens"], params["json_mode"],
                    params.get("top_logprobs", 0),
                )
                # The package's generic POST: same transport, auth, timeout and error
                # types as chat.completions.create, without its per-call re-validation
                # and deep copy of the messages (most of the client's CPU per request).
                text = await sess.aclient.post(
                    "/chat/completions",
                    content=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                    cast_to=str,
                    options={"timeout": cfg.timeout_s, "headers": _JSON_HEADERS},
                )
                text = redact_text(text, sess.secrets)  # the boundary: before parse, cache, store
                response = redact_value(_decode_chat(text), sess.secrets)
            except openai.APIStatusError as err:
                status, headers = err.status_code, err.response.headers
                last = errors.status_error(self._error_text(err, sess), status, retries)
            except openai.APITimeoutError as err:
                last = errors.TimeoutError(
                    f"no answer within {cfg.timeout_s:g} s ({self._error_text(err, sess)})", retries=retries
                )
            except openai.APIConnectionError as err:
                cause = err.__cause__ or err
                last = errors.ConnectionError(
                    f"connection failed: {self._error_text(cause, sess)}", retries=retries
                )
            except (openai.OpenAIError, ValueError) as err:  # e.g. a body that is not a chat completion
                last = errors.APIError(f"bad response: {self._error_text(err, sess)}", retries=retries)
            else:
                sess.limiter.on_success()
                return self._completion(
                    response, time.perf_counter() - start, retries, "response_format" in body
                )
            finally:  # also when cancelled: neither this session's slot nor the process-wide gate's is lost
                sess.limiter.release()
                if sess.shared is not None:
                    sess.shared.release()
            if status in (400, 422):
                # An optional parameter this endpoint does not take: adapt and resend
                # without spending a retry (the judge's parser tolerates prose).
                change = self._shape.adapt(last.message, body)
                if change is not None:
                    log.info("endpoint rejected a parameter (HTTP %s): %s; resending", status, change)
                    continue
            if attempt >= cfg.max_retries or not should_retry(status, headers):
                break
            retry_after = parse_retry_after(headers) if headers is not None else None
            delay = backoff_delay(attempt, retry_after)
            if status == 429:
                self.stats.rate_limited += 1
                sess.limiter.on_rate_limited(delay)
                if sess.shared is not None:
                    sess.shared.on_rate_limited(delay)
            log.warning("LLM request failed (%s); retry %d in %.2f s", last.message, attempt + 1, delay)
            retries += 1
            self.stats.retries += 1
            attempt += 1
            await asyncio.sleep(delay)
        assert last is not None
        last.retries = retries
        self.stats.failures += 1
        raise last

    def _completion(self, response: dict[str, Any], latency: float, retries: int, json_mode: bool) -> Completion:
        choices = response.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        usage = _usage_dict(response.get("usage"))
        return Completion(
            text=str(message.get("content") or ""),
            finish_reason=choice.get("finish_reason"),
            usage=usage,
            latency_s=latency,
            cached=False,
            retries=retries,
            cost_usd=cost_usd(usage, self._price),
            refusal=message.get("refusal"),
            model=str(response.get("model") or self.config.model),
            json_mode=json_mode,
            first_token_logprobs=_first_token_logprobs(choice.get("logprobs")),
        )

    # -- many calls ----------------------------------------------------------------------
    async def amap(
        self,
        fn: Callable[[T], Awaitable[R]],
        items: Sequence[T],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        on_cancel: Callable[[T], R] | None = None,
    ) -> list[R | BaseException]:
        """Run ``fn`` over ``items`` concurrently inside one session (at most
        ``concurrency`` items in progress), keeping order. An exception raised by
        ``fn`` becomes that item's result. Items not started when ``cancel`` is set
        get ``on_cancel(item)`` (default: a CancelledRequest)."""
        results: list[Any] = [None] * len(items)
        done = 0
        gate = asyncio.Semaphore(self.config.concurrency)

        async def run(i: int, item: T) -> None:
            nonlocal done
            async with gate:
                if cancel is not None and cancel.is_set():
                    results[i] = on_cancel(item) if on_cancel else errors.CancelledRequest("cancelled")
                else:
                    try:
                        results[i] = await fn(item)
                    except errors.LLMError as err:
                        results[i] = err
                    except Exception as err:  # noqa: BLE001 - one bad item must not stop the batch
                        log.exception("unexpected error on item %d", i)
                        results[i] = err
            done += 1
            if progress is not None:
                progress(done, len(items))

        async with self.session():
            await asyncio.gather(*(run(i, item) for i, item in enumerate(items)))
        return results

    def map(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Synchronous :meth:`amap`, same arguments (runs its own event loop)."""
        return run_sync(self.amap(*args, **kwargs))

    def complete_many(
        self,
        batch: Sequence[Messages],
        *,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        **kwargs: Any,
    ) -> list[Completion | errors.LLMError]:
        """Complete every chat of ``batch`` (order kept); a failed item is its LLMError."""

        async def one(messages: Messages) -> Completion:
            return await self.complete(messages, **kwargs)

        out = self.map(one, batch, progress, cancel)
        return [r if isinstance(r, (Completion, errors.LLMError)) else errors.LLMError(str(r)) for r in out]

    def complete_sync(self, messages: Messages, **kwargs: Any) -> Completion:
        """One blocking call (raises an LLMError on failure)."""
        return run_sync(self.complete(messages, **kwargs))


def run_sync(coro: Awaitable[R]) -> R:
    """Run ``coro`` to completion from synchronous code, even when the calling thread
    already runs an event loop (Jupyter, some Streamlit setups): then in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()  # type: ignore[arg-type]
