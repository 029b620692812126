"""An adaptive limiter for requests per minute, tokens per minute and concurrency.

Modelled on a leaky bucket (aiolimiter) with one addition: a *rate factor* in
``[MIN_RATE_FACTOR, 1]`` that scales every limit. A 429 halves the factor and pauses
all new requests for the server's Retry-After; each success raises it by a small step,
so throughput recovers slowly instead of hammering a provider that just pushed back.
When no RPM is configured the factor still scales the concurrency cap, which is the
only lever left.

Create it inside the running event loop (its waits belong to that loop); the clock
and sleep are injectable so tests can drive time by hand.
"""

from __future__ import annotations

import asyncio
import math
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
        self.waited_s = 0.0  # total time callers spent waiting, for reports
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
            self.waited_s += wait
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

    async def __aenter__(self) -> AdaptiveLimiter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None
