"""The Ray wrapper of :func:`rag_eval.judges.factory.build_judge` (``--ray [ADDRESS]``;
optional extra ``rag-eval[ray]``). Nothing here imports Ray until a judge is built with
``ray=`` (which checks Ray is importable, a usage error otherwise) or a
:class:`RayJudge` judges.

What runs where:

- the **local judge** (CPU-bound: sentence embedding, features, heads) runs in Ray
  actors, each building its own judge from the driver's
  :class:`~rag_eval.judges.factory.JudgeSpec` (the calibration included, sent as its
  loaded JSON), so the model and its ONNX session load once per worker, not once per chunk;
- the **LLM judge** stays in the driver: its requests go through one client with one
  rate limiter per run (N workers must not each get the full rate), so
  :func:`ray_judge` returns the ordinary LLM judge for ``kind="llm"``.

The driver cuts the items into chunks, keeps at most ``max_in_flight`` chunks
submitted (bounded memory on both sides), and puts every chunk's results back at its
position: results come out in input order, whatever order the workers finish in.
A chunk whose worker died (node lost, process killed) is retried once on a fresh
worker; if that fails too its rows end as ``provider_error`` with the reason, so a
row is never lost. Cancelling stops submitting; rows not submitted end ``cancelled``.

Results equal a single-process run's, field for field except latency, because the
judge's embeddings do not depend on batch composition (see
:class:`~rag_eval.judges.encoder.JudgeEncoder`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag_eval.config import setting
from rag_eval.judges.base import BATCH_ROWS, Judge, JudgeSpec, JudgeUsageError, ProgressCallback, RaySpec
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus

CHUNK_ROWS = BATCH_ROWS  # rows per task: the local judge's own batch, so a worker embeds what one process would
IN_FLIGHT_PER_WORKER = 2  # one chunk running, one queued: workers never wait, memory stays bounded
MAX_ATTEMPTS = 2  # a chunk whose worker died is retried once
PASSED_ENV = ("RAG_EVAL_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "RAG_EVAL_SHARED_DATA")


#: The dashboard's Ray settings (environment, then ``.streamlit/secrets.toml``): the owner's
#: configuration only; no page field sets them, so a visitor cannot point the server at a cluster.
ADDRESS_SETTING = "RAG_EVAL_RAY_ADDRESS"
MAX_WORKERS_SETTING = "RAG_EVAL_RAY_MAX_WORKERS"
LOCAL_ADDRESS = "local"
DEFAULT_MAX_WORKERS = 8


@dataclass(frozen=True, slots=True)
class RayCluster:
    """The Ray cluster the owner configured for the dashboard: ``address`` is a cluster
    address (``auto``, ``ray://host:10001``) or None for a local Ray instance."""

    address: str | None
    max_workers: int = DEFAULT_MAX_WORKERS

    def label(self, show_address: bool = True) -> str:
        """How a page names it: the address, unless the deployment hides server details."""
        if self.address is None:
            return "a local Ray instance"
        return self.address if show_address else "the configured Ray cluster"


def configured_cluster(lookup: Callable[[str], str | None] = setting) -> RayCluster | None:
    """The cluster ``RAG_EVAL_RAY_ADDRESS`` names (``local``: a local Ray instance with
    as many CPUs as workers), or None when it is unset; ``RAG_EVAL_RAY_MAX_WORKERS``
    caps the workers a page may ask for. Reads settings only: nothing imports Ray."""
    address = (lookup(ADDRESS_SETTING) or "").strip()
    if not address:
        return None
    raw_max = (lookup(MAX_WORKERS_SETTING) or "").strip()
    try:
        max_workers = max(1, int(raw_max)) if raw_max else DEFAULT_MAX_WORKERS
    except ValueError:
        raise ValueError(f"{MAX_WORKERS_SETTING} must be a whole number, got {raw_max!r}") from None
    return RayCluster(None if address.lower() == LOCAL_ADDRESS else address, max_workers)


_init_lock = threading.Lock()
_owned_users: int | None = None  # judges using the Ray instance this module started (None: it started none)


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached."""


def _env() -> dict[str, str]:
    return {k: os.environ[k] for k in PASSED_ENV if os.environ.get(k)}


def init_ray(address: str | None = None, cpus: int = 2) -> None:
    """Connect to the cluster at ``address``, or start a local Ray instance with
    ``cpus`` CPUs whose workers import this very copy of rag_eval."""
    ray = _import_ray()
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address is None:
        package_root = str(Path(__file__).resolve().parent.parent.parent)
        path = os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])])
        kwargs.update(num_cpus=cpus, object_store_memory=256 * 1024 * 1024,
                      runtime_env={"env_vars": {"PYTHONPATH": path, **_env()}})
    else:
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address or 'local'}: {err}") from err


def require_ray() -> None:
    """Raise :class:`~rag_eval.judges.factory.JudgeUsageError` (one line) when Ray cannot
    be imported: checked when the judge is built, before any row is read."""
    try:
        _import_ray()
    except RayUnavailable as err:
        raise JudgeUsageError(str(err)) from None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise RayUnavailable("--ray needs Ray: pip install 'rag-eval[ray]' (or pip install ray)") from err
    return ray


class _Worker:
    """The actor body: one local judge per worker process, ONNX on one thread (the
    worker owns one CPU; Ray gives each worker its own)."""

    def __init__(self, spec: JudgeSpec, env: dict[str, str], build: Callable[[JudgeSpec], Judge]):
        os.environ.update(env)
        self.judge = build(spec)
        self.pid = os.getpid()

    def judge_chunk(self, items: list[EvalItem]) -> list[JudgeResult]:
        return self.judge.judge(items)

    def ping(self) -> int:
        return self.pid


def _failed(item: EvalItem, name: str, reason: str) -> JudgeResult:
    return JudgeResult(id=item.id, status=JudgeStatus.PROVIDER_ERROR, error=reason, judge=name,
                       extra={"judge_kind": name.split(":", 1)[0], "ray": True})


class RayJudge:
    """A :class:`~rag_eval.judges.base.Judge` running the judge ``spec`` names on ``workers``
    Ray actors, each built by ``build(spec)`` (:func:`~rag_eval.judges.factory.build_from_spec`,
    a top-level function the actors import). ``address`` is a cluster address (``"auto"``,
    ``"ray://host:10001"``) or ``None`` to start a local Ray instance with ``workers`` CPUs.
    ``driver_judge`` is the same judge built in this process (it names the judge and checked
    that the model and calibration load)."""

    def __init__(self, spec: JudgeSpec, build: Callable[[JudgeSpec], Judge], address: str | None = None,
                 workers: int = 2, chunk_rows: int = CHUNK_ROWS, max_in_flight: int | None = None):
        if workers < 1:
            raise ValueError(f"--ray-workers must be >= 1, got {workers}")
        self.build = build
        driver_judge = self.build(spec)
        if isinstance(spec.calibration, str):  # the workers get the loaded calibration, not a file name
            from rag_eval.judges.calibration import load_calibration

            spec = replace(spec, calibration=load_calibration(spec.calibration))
        self.spec = spec
        self.name = driver_judge.name
        self.model = getattr(driver_judge, "model", None)  # for the CLI's trust line, as LocalJudge.model
        self.calibration = getattr(driver_judge, "calibration", None)
        self.address = address
        self.workers = workers
        self.chunk_rows = max(1, chunk_rows)
        self.max_in_flight = max_in_flight or workers * IN_FLIGHT_PER_WORKER
        self._actors: list[Any] = []
        self._started_ray = False

    # ------------------------------------------------------------------ lifecycle
    def _start(self) -> Any:
        global _owned_users
        ray = _import_ray()
        if not self._started_ray:
            with _init_lock:  # judges of one process share its Ray connection (two Batch runs at once)
                if not ray.is_initialized():
                    init_ray(self.address, self.workers)
                    _owned_users = 0
                if _owned_users is not None:
                    _owned_users += 1
                    self._started_ray = True
        while len(self._actors) < self.workers:
            self._actors.append(self._new_actor(ray))
        return ray

    def _new_actor(self, ray: Any) -> Any:
        actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_Worker)
        env = dict(_env(), OMP_NUM_THREADS="1")
        return actor_class.remote(self.spec, env, self.build)

    def start(self) -> None:
        """Connect to (or start) Ray and start the workers; raises RayUnavailable when the
        cluster cannot be reached, so the engine fails before any row is judged."""
        self._start()

    def worker_pids(self) -> list[int]:
        """Process ids of the workers (started if needed), e.g. to kill one in a test."""
        ray = self._start()
        return list(ray.get([a.ping.remote() for a in self._actors]))

    def close(self) -> None:
        """Stop the workers, and Ray itself if this judge started it."""
        if not self._actors and not self._started_ray:
            return
        ray = _import_ray()
        for actor in self._actors:
            with contextlib.suppress(Exception):  # already dead is fine
                ray.kill(actor)
        self._actors = []
        if self._started_ray:
            global _owned_users
            with _init_lock:  # the last judge using a Ray instance this process started stops it
                self._started_ray = False
                if _owned_users is not None:
                    _owned_users -= 1
                    if _owned_users <= 0:
                        _owned_users = None
                        ray.shutdown()

    def __enter__(self) -> RayJudge:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ judging
    def judge(self, items: Sequence[EvalItem], progress: ProgressCallback | None = None,
              cancel: threading.Event | None = None) -> list[JudgeResult]:
        total = len(items)
        if total == 0:
            if progress is not None:
                progress(0, 0)
            return []
        ray = self._start()
        chunks = [list(items[i:i + self.chunk_rows]) for i in range(0, total, self.chunk_rows)]
        results: list[list[JudgeResult] | None] = [None] * len(chunks)
        attempts = [0] * len(chunks)
        todo = deque(range(len(chunks)))
        in_flight: dict[Any, tuple[int, int, Any]] = {}  # ref -> (chunk, worker slot, actor handle)
        load = [0] * self.workers
        done_rows = 0
        while todo or in_flight:
            while todo and len(in_flight) < self.max_in_flight and not (cancel is not None and cancel.is_set()):
                index = todo.popleft()
                slot = min(range(self.workers), key=lambda s: load[s])
                actor = self._actors[slot]
                attempts[index] += 1
                in_flight[actor.judge_chunk.remote(chunks[index])] = (index, slot, actor)
                load[slot] += 1
            if not in_flight:
                break  # cancelled with nothing running
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            ref = ready[0]
            index, slot, actor = in_flight.pop(ref)
            load[slot] -= 1
            try:
                results[index] = ray.get(ref)
            except ray.exceptions.RayError as err:
                reason = f"Ray worker failed: {type(err).__name__}: {str(err).strip().splitlines()[0][:200]}"
                if self._actors[slot] is actor:  # replace the dead worker once, whichever chunk notices first
                    self._actors[slot] = self._new_actor(ray)
                if attempts[index] < MAX_ATTEMPTS:
                    todo.appendleft(index)
                    continue
                results[index] = [_failed(it, self.name, f"{reason} (after {attempts[index]} attempts)")
                                  for it in chunks[index]]
            done_rows += len(chunks[index])
            if progress is not None:
                progress(done_rows, total)
        return [result for got, chunk in zip(results, chunks) for result in (got if got is not None else [  # not sent
            JudgeResult(id=it.id, status=JudgeStatus.CANCELLED, error="cancelled before judging", judge=self.name,
                        extra={"judge_kind": self.spec.kind}) for it in chunk])]


def ray_judge(spec: JudgeSpec, ray: RaySpec, build: Callable[[JudgeSpec], Judge], in_driver: bool = False) -> Judge:
    """What :func:`~rag_eval.judges.factory.build_judge` returns for ``ray=``: a
    :class:`RayJudge` for a judge that runs on this machine (the local judge, a plugin's;
    ``build(spec)`` checks in the driver that it loads); the ordinary judge when
    ``in_driver`` (an LLM judge: its calls stay in the driver under one rate limiter)."""
    if in_driver:
        return build(spec)
    return RayJudge(spec, build, address=ray.address, workers=ray.workers)
