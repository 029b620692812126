"""Judging rows as a stream: read -> prepare -> send -> parse/score -> write, overlapped.

A thread prepares rows and hands them over a bounded queue to an event loop that keeps
``concurrency`` judgements in flight and passes each finished row to the ``sink`` in input
order. At most ``window`` rows are between read and written, so memory stays flat, the first
request leaves as soon as the first row is prepared, and CPU work overlaps the network wait.
An async ``judge_one`` (the LLM judge) is driven row by row in one client session; any other
:class:`~rag_eval.judges.base.Judge` is called on small batches. When ``cancel`` is set, rows
not yet sent finish as ``cancelled`` (their place kept); a row in flight finishes normally.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rag_eval.judges.base import BATCH_ROWS, ClientJudge, Judge, PooledClient
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus

T = TypeVar("T")
DEFAULT_CONCURRENCY = 16


@dataclass(slots=True)
class Pending(Generic[T]):
    """One item waiting in the stream: an ``item`` to judge, or an output ``done`` already
    (an invalid row, a row answered from the cache, a row cancelled before preparing).
    (Not ``Job``: that name is the dashboard's background work, :mod:`rag_eval.ui.jobs`.)"""

    item: EvalItem | None = None
    done: T | None = None
    context: Any = None  # whatever ``finish`` needs besides the item (e.g. a cache key)


class _Stop:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def cancelled_result(item: EvalItem, judge_name: str, prompt_id: str | None = None) -> JudgeResult:
    return JudgeResult(item.id, JudgeStatus.CANCELLED, error="cancelled before it was judged",
                       judge=judge_name, prompt_id=prompt_id)


def _failed_result(item: EvalItem, judge: Judge, err: BaseException) -> JudgeResult:
    from rag_eval.judges.accounting import error_text, status_for_error

    return JudgeResult(item.id, status_for_error(err), error=error_text(err), judge=judge.name,
                       prompt_id=getattr(judge, "prompt_id", None))


@dataclass(frozen=True, slots=True)
class JudgeStream(Generic[T]):
    """How :func:`stream_judge` judges: ``judge`` labels each job's item, ``finish(job,
    result)`` makes its output and ``sink`` takes the outputs in input order, with
    ``concurrency`` judgements in flight (default: the judge's) and at most ``window`` rows
    between read and written; ``cancel``; ``progress(rows written)`` after each row."""

    judge: Judge
    finish: Callable[[Pending[T], JudgeResult], T]
    sink: Callable[[T], None]
    concurrency: int | None = None
    window: int | None = None
    cancel: threading.Event | None = None
    progress: Callable[[int], None] | None = None


def stream_judge(jobs: Iterable[Pending[T]], stream: JudgeStream[T]) -> int:
    """Judge every job's item and pass ``finish(job, result)`` (or ``job.done``) to the
    stream's ``sink`` in the order of ``jobs``. ``jobs`` is iterated in a separate thread,
    so the preparation it does overlaps the judging. Returns the number of rows passed to
    ``sink``."""
    concurrency = stream.concurrency
    if concurrency is None:
        config = getattr(stream.judge, "config", None)
        concurrency = int(getattr(config, "concurrency", DEFAULT_CONCURRENCY) or DEFAULT_CONCURRENCY)
    concurrency = max(1, concurrency)
    window = max(stream.window or 4 * concurrency, concurrency, 2)
    if asyncio.iscoroutinefunction(getattr(stream.judge, "judge_one", None)):  # the LLM judge
        from rag_eval.llm.client import run_sync

        return run_sync(_run_async(iter(jobs), stream, concurrency, window))
    size = max(1, int(getattr(stream.judge, "chunk_size", BATCH_ROWS) or BATCH_ROWS))
    return _run_batches(iter(jobs), stream, max(window, 2 * size), size)


# -- the preparing thread -------------------------------------------------------------------
class _Producer(threading.Thread):
    """Iterates ``jobs`` and calls ``put`` for each (``put`` blocks while the queue is full)."""

    def __init__(self, jobs: Iterator[Pending[Any]], put: Callable[[Any], bool]) -> None:
        super().__init__(name="rag-eval-prepare", daemon=True)
        self.jobs, self.put, self.stopping = jobs, put, threading.Event()

    def run(self) -> None:
        end = _Stop()
        try:
            for job in self.jobs:
                if self.stopping.is_set() or not self.put(job):
                    return
        except BaseException as err:  # noqa: BLE001 - handed to the consumer, which re-raises
            end = _Stop(err)
        finally:
            if not self.stopping.is_set():
                self.put(end)


# -- async judges (the LLM judge) --------------------------------------------------------------
#: Finished jobs (rows answered from the row cache, invalid rows) handed to the event loop
#: together: one wake-up of the loop per row cost more than the row itself (a cached rerun).
HANDOFF_ROWS = 64


async def _run_async(jobs: Iterator[Pending[T]], stream: JudgeStream[T], concurrency: int, window: int) -> int:
    judge: Any = stream.judge
    finish, sink, cancel, progress = stream.finish, stream.sink, stream.cancel, stream.progress
    loop = asyncio.get_running_loop()
    # Lists of jobs from the producer thread. ``slots`` bounds the lists in flight without
    # a round trip through the loop per hand-over (the producer waits only when full).
    ready: asyncio.Queue[list[Any]] = asyncio.Queue()
    slots = threading.Semaphore(max(2, window // HANDOFF_ROWS + 1))
    held: list[Any] = []

    def hand_over() -> bool:
        while not slots.acquire(timeout=0.2):
            if producer.stopping.is_set():
                return False
        batch = held.copy()
        held.clear()
        loop.call_soon_threadsafe(ready.put_nowait, batch)
        return True

    def put(value: Any) -> bool:  # from the producer thread: a row to judge goes at once, finished rows in lists
        held.append(value)
        if isinstance(value, _Stop) or value.item is not None or len(held) >= HANDOFF_ROWS:
            return hand_over()
        return True

    producer = _Producer(jobs, put)
    gate = asyncio.Semaphore(concurrency)
    room = asyncio.Semaphore(window)  # rows taken from the queue but not yet written
    order: asyncio.Queue[Any] = asyncio.Queue()
    prompt_id = getattr(judge, "prompt_id", None)

    async def one(job: Pending[T]) -> T:
        item = job.item
        assert item is not None
        async with gate:
            if cancel is not None and cancel.is_set():
                result = cancelled_result(item, judge.name, prompt_id)
            else:
                try:
                    result = await judge.judge_one(item)
                except Exception as err:  # noqa: BLE001 - one bad row must not stop the stream
                    result = _failed_result(item, judge, err)
        return finish(job, result)

    async def dispatch() -> None:
        session_open = False
        while True:
            values = await ready.get()
            slots.release()
            for value in values:
                await room.acquire()
                if isinstance(value, _Stop):
                    await order.put(value)
                    return
                if value.item is None:
                    fut: asyncio.Future[Any] = loop.create_future()
                    fut.set_result(value.done)
                    await order.put(fut)
                else:
                    if not session_open:  # opened for the first row to judge: a cached rerun opens none
                        session_open = True
                        try:
                            await open_session()
                        except Exception as err:  # noqa: BLE001 - raised by the writing loop below
                            await order.put(_Stop(err))
                            return
                    await order.put(asyncio.ensure_future(one(value)))

    written = 0
    async with contextlib.AsyncExitStack() as stack:

        async def open_session() -> None:
            """One client session for every row (connections reused), closed with the stream."""
            if isinstance(judge, ClientJudge) and isinstance(judge.client, PooledClient):
                from rag_eval.llm import errors

                with contextlib.suppress(errors.ConfigError):  # no key: every row then fails on its own
                    await stack.enter_async_context(judge.client.session())

        producer.start()
        dispatcher = asyncio.ensure_future(dispatch())
        try:
            while True:
                head = await order.get()
                if isinstance(head, _Stop):
                    if head.error is not None:
                        raise head.error
                    break
                sink(await head)
                written += 1
                room.release()
                if progress is not None:
                    progress(written)
        finally:
            producer.stopping.set()
            dispatcher.cancel()
            pending = [f for f in list(order._queue) if isinstance(f, asyncio.Future)]  # type: ignore[attr-defined]
            for f in pending:
                f.cancel()
            await asyncio.gather(dispatcher, *pending, return_exceptions=True)
    return written


# -- batch judges (the local judge) ------------------------------------------------------------
def _run_batches(jobs: Iterator[Pending[T]], stream: JudgeStream[T], window: int, size: int) -> int:
    import queue

    judge, finish, sink, cancel, progress = stream.judge, stream.finish, stream.sink, stream.cancel, stream.progress
    ready: queue.Queue[Any] = queue.Queue(maxsize=window)

    def put(value: Any) -> bool:
        while not producer.stopping.is_set():
            try:
                ready.put(value, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    producer = _Producer(jobs, put)
    producer.start()
    written = 0
    batch: deque[Pending[T]] = deque()

    def flush() -> None:
        nonlocal written
        todo = [j for j in batch if j.item is not None]
        items = [j.item for j in todo if j.item is not None]
        if cancel is not None and cancel.is_set():
            results = [cancelled_result(i, judge.name, getattr(judge, "prompt_id", None)) for i in items]
        elif items:
            try:
                results = judge.judge(items, cancel=cancel)
            except Exception as err:  # noqa: BLE001 - a judge breaking its never-raise contract loses no row
                results = [_failed_result(i, judge, err) for i in items]
        else:
            results = []
        by_job = {id(j): r for j, r in zip(todo, results)}
        while batch:
            job = batch.popleft()
            sink(job.done if job.item is None else finish(job, by_job[id(job)]))  # type: ignore[arg-type]
            written += 1
            if progress is not None:
                progress(written)

    try:
        while True:
            try:  # take what is ready; wait only when nothing is
                value = ready.get(timeout=0.05) if batch else ready.get()
            except queue.Empty:
                flush()
                continue
            if isinstance(value, _Stop):
                flush()
                if value.error is not None:
                    raise value.error
                return written
            batch.append(value)
            if sum(1 for j in batch if j.item is not None) >= size:
                flush()
    finally:
        producer.stopping.set()
