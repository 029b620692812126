"""Process entry points for the run-store concurrency tests (importable, for ``spawn``)."""

from __future__ import annotations

from typing import Any


def write_items(location: str, run_id: str, worker: int, n: int, shared: int, barrier: Any) -> None:
    """Write ``n`` items of this worker plus ``shared`` items every worker writes, one transaction each."""
    from rag_eval.runs.store import RunStore

    store = RunStore(location)
    barrier.wait(timeout=120)
    for i in range(n):
        store.add_items(run_id, [{"id": f"w{worker}-{i}", "position": worker * n + i, "status": "ok",
                                "question": f"q{i}"}])
        if i < shared:
            store.add_items(run_id, [{"id": f"shared-{i}", "position": i, "status": "ok", "question": "shared"}])
    store.close()


def claim(location: str, run_ids: list[str], barrier: Any, results: Any, worker: int) -> None:
    """Race to claim each run; record which ones this worker won."""
    from rag_eval.runs.store import RunBusy, RunStore

    store = RunStore(location)
    barrier.wait(timeout=120)
    for run_id in run_ids:
        try:
            store.claim_run(run_id)
            results.put((run_id, worker))
        except RunBusy:
            pass
    store.close()
