"""The adaptive limiter, driven by a hand-moved clock (no real waiting)."""

from __future__ import annotations

import asyncio

import pytest

from rag_eval.llm.limiter import AdaptiveLimiter


class FakeTime:
    """A clock that only moves when someone sleeps (aiolimiter's MockLoopTime idea)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def make(t: FakeTime, **kw) -> AdaptiveLimiter:
    return AdaptiveLimiter(clock=t.clock, sleep=t.sleep, **kw)


async def test_unlimited_never_waits():
    t = FakeTime()
    lim = make(t, concurrency=4)
    for _ in range(4):
        await lim.acquire(1000)
    assert t.sleeps == [] and lim.in_flight == 4


async def test_rpm_spaces_requests():
    t = FakeTime()
    lim = make(t, rpm=60, concurrency=100)
    for _ in range(5):
        await lim.acquire()
        lim.release()
    assert t.now == pytest.approx(4.0)  # 60/min = one per second after the first


async def test_tpm_waits_for_the_bucket_to_drain():
    t = FakeTime()
    lim = make(t, tpm=600, concurrency=100)  # 10 tokens/s
    await lim.acquire(600)
    lim.release()
    await lim.acquire(100)  # bucket full: wait until 100 tokens leaked
    assert t.now == pytest.approx(10.0)


async def test_request_bigger_than_bucket_waits_for_empty_bucket():
    t = FakeTime()
    lim = make(t, tpm=60, concurrency=100)
    await lim.acquire(30)
    await lim.acquire(500)  # larger than capacity: waits for 30 tokens to leak (30 s)
    assert t.now == pytest.approx(30.0)


async def test_rate_limited_halves_and_pauses_then_recovers():
    t = FakeTime()
    lim = make(t, rpm=120, concurrency=8, recovery_step=0.25)
    lim.on_rate_limited(pause_s=5.0)
    assert lim.factor == 0.5 and lim.concurrency_cap == 4
    await lim.acquire()
    assert t.now == pytest.approx(5.0)  # Retry-After pause honoured
    lim.release()
    await lim.acquire()  # now 60 rpm effective: 1 s spacing
    assert t.now == pytest.approx(6.0)
    lim.release()
    lim.on_success()
    lim.on_success()
    assert lim.factor == 1.0  # recovered (slowly: one step per success)
    lim.on_success()
    assert lim.factor == 1.0  # never above the configured limits


async def test_factor_has_a_floor():
    lim = make(FakeTime(), concurrency=2, min_factor=0.25)
    for _ in range(10):
        lim.on_rate_limited()
    assert lim.factor == 0.25 and lim.concurrency_cap == 1


async def test_concurrency_cap_blocks_until_release():
    lim = make(FakeTime(), concurrency=2)
    await lim.acquire()
    await lim.acquire()
    third = asyncio.ensure_future(lim.acquire())
    await asyncio.sleep(0)
    assert not third.done()
    lim.release()
    await asyncio.wait_for(third, 1)
    assert lim.in_flight == 2


@pytest.mark.parametrize("kwargs", [{"concurrency": 0}, {"rpm": 0}, {"tpm": -5}])
async def test_bad_limits_raise(kwargs):
    with pytest.raises(ValueError):
        make(FakeTime(), **kwargs)


async def test_release_without_acquire_raises():
    with pytest.raises(ValueError, match="release"):
        make(FakeTime()).release()


async def test_a_wait_names_the_limit_it_waits_on():
    """While a request sleeps for the RPM spacing, the limiter names that limit (Batch's
    progress line shows it); once the request may go, it names nothing."""
    seen: list[str | None] = []
    t = FakeTime()

    async def sleep(seconds: float) -> None:
        seen.append(lim.waiting_on)
        await t.sleep(seconds)

    lim = AdaptiveLimiter(rpm=60, tpm=None, concurrency=10, clock=t.clock, sleep=sleep)
    await lim.acquire()
    assert lim.waiting_on is None
    await lim.acquire()
    assert seen == ["the 60 requests/minute limit"] and lim.waiting_on is None
