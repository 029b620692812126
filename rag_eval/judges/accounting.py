"""What one judgement cost: every call's tokens, cost, retries and cache hits, the status
a provider failure maps to, and the loop that gives every item a result. Shared by the
TRACe judge and answer matching."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rag_eval.llm import errors
from rag_eval.llm.client import Completion, LLMClient
from rag_eval.schema import JudgeResult, JudgeStatus

T = TypeVar("T")
R = TypeVar("R", bound=JudgeResult)


def status_for_error(err: BaseException) -> JudgeStatus:
    """timeout for timeouts, cancelled for cancelled requests, provider_error otherwise."""
    if isinstance(err, errors.TimeoutError):
        return JudgeStatus.TIMEOUT
    if isinstance(err, errors.CancelledRequest):
        return JudgeStatus.CANCELLED
    return JudgeStatus.PROVIDER_ERROR


def judge_each(client: LLMClient, one: Callable[[T], Awaitable[R]], items: Sequence[T],
               failed: Callable[[T, JudgeStatus, str], R], progress: Callable[[int, int], None] | None = None,
               cancel: threading.Event | None = None, cancelled: str = "cancelled") -> list[R]:
    """``one(item)`` for every item through ``client``, in input order, never raising for an
    item: an item cancelled before its call, or whose call failed, gets ``failed(item,
    status, reason)``; a configuration error (e.g. no API key) fails every item the same way."""
    try:
        raw = client.map(one, items, progress, cancel, on_cancel=lambda item: failed(item, JudgeStatus.CANCELLED,
                                                                                      cancelled))
    except errors.ConfigError as err:
        return [failed(item, JudgeStatus.PROVIDER_ERROR, error_text(err)) for item in items]
    return [failed(item, status_for_error(result), error_text(result)) if isinstance(result, BaseException) else result
            for item, result in zip(items, raw)]


def error_text(err: BaseException) -> str:
    """A one-line reason (already redacted by the client)."""
    kind = type(err).__name__
    message = getattr(err, "message", None) or str(err) or kind
    retries = getattr(err, "retries", 0)
    suffix = f" (after {retries} retries)" if retries else ""
    return f"{kind}: {message}{suffix}"


@dataclass(slots=True)
class CallLog:
    """Every completion a judgement used, in order, and how many of them re-asked a
    question whose answer did not parse (what :mod:`rag_eval.runs.estimate` counts apart)."""

    calls: list[Completion] = field(default_factory=list)
    reasks: int = 0

    def add(self, completion: Completion) -> Completion:
        self.calls.append(completion)
        return completion

    def extend(self, other: CallLog) -> None:
        self.calls.extend(other.calls)
        self.reasks += other.reasks

    def tokens(self) -> dict[str, int]:
        return {part: sum(int(c.usage.get(f"{part}_tokens", 0)) for c in self.calls)
                for part in ("prompt", "completion", "total")}

    def cost_usd(self) -> float | None:
        """What the calls cost when made (cached answers keep their original cost);
        None when no price is known."""
        known = [c.cost_usd for c in self.calls if c.cost_usd is not None]
        return sum(known) if known else None

    def spent_usd(self) -> float | None:
        """What this run paid: calls answered from the cache are free."""
        known = [c.cost_usd for c in self.calls if c.cost_usd is not None and not c.cached]
        if not known:
            return 0.0 if self.calls and all(c.cached for c in self.calls) else None
        return sum(known)

    def summary(self) -> dict[str, Any]:
        return {
            "calls": len(self.calls),
            "cache_hits": sum(1 for c in self.calls if c.cached),
            "retries": sum(c.retries for c in self.calls),
            "reasks": self.reasks,
            "cost_usd_spent": self.spent_usd(),
        }
