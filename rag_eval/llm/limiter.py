"""An adaptive limiter for requests per minute, tokens per minute and concurrency.

Modelled on a leaky bucket (aiolimiter) with one addition: a *rate factor* in
``[MIN_RATE_FACTOR, 1]`` that scales every limit. A 429 halves the factor and pauses
all new requests for the server's Retry-After; each success raises it by a small step,
so throughput recovers slowly instead of hammering a provider that just pushed back.
When no RPM is configured the factor still scales the concurrency cap, which is the
only lever left.

Create it inside the running event loop (its waits belong to that loop); the clock
and sleep are injectable so tests can drive time by hand. Where one process must hold
ceilings across many clients, threads and loops (a locked dashboard: the owner's key,
many visitors), :func:`share_limits` turns on the process-wide :class:`SharedGate`
that every client then also waits on (:func:`shared_gate`).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable

from rag_eval.llm.constants import MIN_RATE_FACTOR, RECOVERY_STEP


class AdaptiveLimiter:
    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        concurrency: int = 16,
        *,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        min_factor: float = MIN_RATE_FACTOR,
        recovery_step: float = RECOVERY_STEP,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be > 0, got {value}")
        self.rpm = rpm
        self.tpm = tpm
        self.concurrency = concurrency
        self.factor = 1.0
        self.min_factor = min_factor
        self.recovery_step = recovery_step
        self._clock = clock or asyncio.get_running_loop().time
        self._sleep = sleep or asyncio.sleep
        self._in_flight = 0
        self._next_request_at = 0.0  # earliest start of the next request (RPM spacing)
        self._token_level = 0.0  # tokens in the bucket, leaking at tpm*factor/60 per s
        self._token_time = self._clock()
        self._paused_until = 0.0
        self._slot_freed = asyncio.Event()
        self._sleeping = 0  # callers waiting on a rate limit now
        self._reason: str | None = None  # the limit the latest of them waits on

    @property
    def concurrency_cap(self) -> int:
        return max(1, math.ceil(self.concurrency * self.factor))

    @property
    def waiting_on(self) -> str | None:
        """The limit requests are waiting on now ("the 60 requests/minute limit"), or None:
        what a progress line names while the rate, not the work, sets the pace."""
        return self._reason if self._sleeping else None

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _leak(self, now: float) -> None:
        if self.tpm is not None:
            rate = self.tpm * self.factor / 60.0
            self._token_level = max(0.0, self._token_level - (now - self._token_time) * rate)
        self._token_time = now

    def _wait_needed(self, tokens: float, now: float) -> tuple[float, str | None]:
        """Seconds until a request of ``tokens`` may start (0 = now), and the limit that
        holds it longest, in words."""
        wait, reason = max(0.0, self._paused_until - now), "the provider's pause after a 429 (Retry-After)"
        if self.rpm is not None and self._next_request_at - now > wait:
            wait, reason = self._next_request_at - now, f"the {self.rpm * self.factor:g} requests/minute limit"
        if self.tpm is not None:
            self._leak(now)
            capacity = self.tpm * self.factor
            # A request bigger than the whole bucket waits for an empty bucket.
            excess = self._token_level + tokens - capacity if tokens <= capacity else self._token_level
            if excess > 0 and excess / (capacity / 60.0) > wait:
                wait, reason = excess / (capacity / 60.0), f"the {capacity:g} tokens/minute limit"
        return wait, reason if wait > 0 else None

    async def acquire(self, tokens: float = 0.0) -> None:
        """Wait for a concurrency slot and for the rate limits; then count the request."""
        while True:
            if self._in_flight >= self.concurrency_cap:
                self._slot_freed.clear()
                await self._slot_freed.wait()
                continue
            now = self._clock()
            wait, reason = self._wait_needed(tokens, now)
            if wait <= 0:
                break
            self._sleeping, self._reason = self._sleeping + 1, reason
            try:
                await self._sleep(wait)
            finally:
                self._sleeping -= 1
        now = self._clock()
        self._in_flight += 1
        if self.rpm is not None:
            interval = 60.0 / (self.rpm * self.factor)
            self._next_request_at = max(now, self._next_request_at) + interval
        if self.tpm is not None:
            self._leak(now)
            self._token_level += tokens

    def release(self) -> None:
        """The request finished (whatever its outcome): free its concurrency slot."""
        if self._in_flight <= 0:
            raise ValueError("release() without a matching acquire()")
        self._in_flight -= 1
        self._slot_freed.set()

    def on_success(self) -> None:
        """Recover slowly towards the configured limits."""
        self.factor = min(1.0, self.factor + self.recovery_step)

    def on_rate_limited(self, pause_s: float = 0.0) -> None:
        """A 429: halve every limit and hold new requests for ``pause_s`` seconds."""
        self.factor = max(self.min_factor, self.factor / 2.0)
        self._paused_until = max(self._paused_until, self._clock() + max(0.0, pause_s))


class SharedGate:
    """One concurrency cap and one request rate for a whole process: every client that sends
    with the same key to the same endpoint waits here, whatever thread or event loop it runs
    on (Streamlit runs each session in a thread with its own loop, and an ``asyncio`` lock
    belongs to one loop). The state sits behind a ``threading.Lock``; a waiting request polls
    it with a short ``asyncio.sleep``, so it never blocks its loop. Requests are spaced
    ``60/rpm`` seconds apart, as :class:`AdaptiveLimiter` spaces them, so no window of ``w``
    seconds holds more than ``w*rpm/60 + 1`` starts."""

    POLL_S = 0.02  # how often a request waiting for a free slot looks again

    def __init__(self, concurrency: int | None, rpm: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.concurrency = max(1, int(concurrency)) if concurrency else None
        self.rpm = rpm if rpm and rpm > 0 else None
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight = 0
        self._next_start = 0.0
        self._paused_until = 0.0
        self._waiting_on: dict[int, str] = {}  # waiter -> the limit it waits on, in words

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def waiting_on(self) -> str | None:
        """The shared limit some request waits on now, or None (what Batch's progress names)."""
        return next(iter(list(self._waiting_on.values())), None)

    def _try_start(self) -> tuple[float, str | None]:
        """Start a request if the limits allow it now (``(0, None)``); else how long to wait
        before trying again and why."""
        with self._lock:
            now = self._clock()
            if self._paused_until > now:
                return self._paused_until - now, "the provider's pause after a 429 (Retry-After)"
            if self.concurrency is not None and self._in_flight >= self.concurrency:
                return self.POLL_S, f"the {self.concurrency}-at-a-time limit all sessions share"
            if self.rpm is not None and self._next_start > now:
                return self._next_start - now, f"the {self.rpm:g} requests/minute limit all sessions share"
            self._in_flight += 1
            if self.rpm is not None:
                self._next_start = max(now, self._next_start) + 60.0 / self.rpm
            return 0.0, None

    async def acquire(self) -> None:
        """Wait (without blocking the loop) until one more request may start, and count it."""
        waiter = id(asyncio.current_task())
        try:
            while True:
                wait, reason = self._try_start()
                if reason is None:
                    return
                self._waiting_on[waiter] = reason
                await asyncio.sleep(min(wait, 0.1))
        finally:
            self._waiting_on.pop(waiter, None)

    def release(self) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)

    def on_rate_limited(self, pause_s: float) -> None:
        """A 429 on the shared key pauses every session's requests, not just the one that got it."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + max(0.0, pause_s))


_SHARED_LIMITS: tuple[int | None, float | None] | None = None  # None: every client keeps its own limits
_GATES: dict[tuple[str, str], SharedGate] = {}
_GATES_LOCK = threading.Lock()


def share_limits(concurrency: int | None, rpm: float | None) -> None:
    """From now on, every client of this process that sends to one endpoint with one key
    variable shares one :class:`SharedGate` with these ceilings (a locked dashboard calls this
    with the owner's ``RAG_EVAL_LLM_CONCURRENCY`` / ``RAG_EVAL_LLM_RPM``, so eight visitors
    together stay within them). A visitor's own key has a variable name of its own session
    (``rag_eval.config.register_session_key``), so it gets a gate of its own. The CLI and the
    Python API never call this: each command keeps its own limits unless it opts in."""
    global _SHARED_LIMITS
    with _GATES_LOCK:
        if _SHARED_LIMITS != (concurrency, rpm):
            _GATES.clear()  # new ceilings: gates made from now on carry them
        _SHARED_LIMITS = (concurrency, rpm)


def stop_sharing() -> None:
    """Back to per-client limits (tests; a process that opted in and opts out)."""
    global _SHARED_LIMITS
    with _GATES_LOCK:
        _SHARED_LIMITS = None
        _GATES.clear()


def shared_gate(endpoint: str, key_env: str) -> SharedGate | None:
    """The process-wide gate for requests with ``key_env``'s key to ``endpoint``, created on
    first use; None while limits are not shared (:func:`share_limits`)."""
    from rag_eval.config import SESSION_KEY_PREFIX, setting

    key = (endpoint.rstrip("/").lower(), key_env)  # ``…/v1/`` and ``…/V1`` are one endpoint, one cap
    with _GATES_LOCK:
        if _SHARED_LIMITS is None:
            return None
        gate = _GATES.get(key)
        if gate is None:
            for old in [k for k, g in _GATES.items() if k[1].startswith(SESSION_KEY_PREFIX) and not g.in_flight
                        and setting(k[1]) is None]:  # a visitor's key forgotten: its idle gate goes too
                del _GATES[old]
            gate = _GATES[key] = SharedGate(*_SHARED_LIMITS)
        return gate
