"""Pure retry policy: when to retry, and how long to wait.

Kept free of I/O so each rule is tested by a table (tests/llm/test_retry.py).
"""

from __future__ import annotations

import contextlib
import email.utils
import random
import time
from collections.abc import Callable, Mapping

from rag_eval.llm.constants import INITIAL_RETRY_DELAY_S, MAX_RETRY_DELAY_S, RETRY_AFTER_CAP_S, RETRY_JITTER, RETRYABLE_STATUS


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    return next((value for key, value in (headers or {}).items() if key.lower() == name), None)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms`` (OpenAI), ``Retry-After``
    as seconds or as an HTTP date. None when absent, unparsable or negative."""
    ms = _header(headers, "retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):
            value = float(ms) / 1000.0
            return value if value >= 0 else None
    raw = _header(headers, "retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        value = parsed.timestamp() - (time.time() if now is None else now)
    return value if value >= 0 else None


def backoff_delay(
    attempt: int, retry_after: float | None = None, rng: Callable[[], float] = random.random
) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (attempt counts from 0).

    A server's ``Retry-After`` up to RETRY_AFTER_CAP_S is honoured exactly; otherwise
    exponential backoff ``INITIAL * 2**attempt`` capped at MAX, minus up to 25% jitter
    so that concurrent clients do not retry in lockstep."""
    if attempt < 0:
        raise ValueError(f"attempt must be >= 0, got {attempt}")
    if retry_after is not None and 0 <= retry_after <= RETRY_AFTER_CAP_S:
        return float(retry_after)
    base = min(INITIAL_RETRY_DELAY_S * (2.0**attempt), MAX_RETRY_DELAY_S)
    return base * (1.0 - RETRY_JITTER * rng())


def should_retry(status: int | None, headers: Mapping[str, str] | None = None) -> bool:
    """Whether a failed request is worth sending again. ``status`` None means the
    connection failed or timed out (always retried). An explicit ``x-should-retry``
    header from the server wins, as in the openai package."""
    explicit = _header(headers, "x-should-retry")
    if explicit == "true":
        return True
    if explicit == "false":
        return False
    if status is None:
        return True
    return status in RETRYABLE_STATUS
