"""Batch runs of the RAG system: every dataset question through retrieve -> generate -> judge -> score,
each item stored as soon as it is done. :func:`run_dataset` is a short caller of
:func:`rag_eval.runs.engine.evaluate` (the RAG source, the run store sink); an interrupted run keeps its
finished items and ``resume_run_id`` continues it (:data:`rag_eval.runs.sinks.RETRY_STATUSES` are retried).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from rag_eval.judges.base import Judge
from rag_eval.rag.config import RagConfig
from rag_eval.runs.sinks import StoreSink
from rag_eval.runs.sources import RagSource


def run_dataset(
    rows: Iterable[Any],
    config: RagConfig,
    collection: str,
    store: Any,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    resume_run_id: str | None = None,
    judge: Judge | None = None,
    client: Any = None,
    llm_client: Any = None,
    dataset_path: str | None = None,
) -> str:
    """Run every row and return the run id. Raises ``ValueError`` before anything is
    stored when the collection is unusable, the judge cannot be built or a resumed run
    does not match."""
    from rag_eval.judges.factory import build_judge
    from rag_eval.runs.engine import evaluate

    judge = judge or build_judge(config.judge)  # before the run exists: a bad judge stores nothing
    source = RagSource(rows, config, collection, label=dataset_path, client=client, llm_client=llm_client)
    sink = StoreSink(store, config, name=name, resume=resume_run_id)
    return str(evaluate(source, judge, sink, config=config, cancel=cancel, progress=progress).run_id)
