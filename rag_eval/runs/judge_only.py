"""Judge rows that already carry a response and its contexts, stored as a run: :func:`judge_dataset` is
a short caller of :func:`rag_eval.runs.engine.evaluate` (rows source with the row cache, run store sink),
kept for scripts and the labels rerun. Rows' RAGBench ground-truth scores go into each record
(``truth``), so Runs can show RMSE and AUROC against them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rag_eval.io.rows import RowError
from rag_eval.rag.config import RagConfig


def judge_dataset(
    rows: Sequence[tuple[int, dict[str, Any] | RowError]],
    config: RagConfig,
    store: Any,
    judge: Any,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    dataset_path: str | None = None,
    use_row_cache: bool = True,
    resume_run_id: str | None = None,
) -> str:
    """Judge every ``(row number, row)``'s given response, store one record per row and
    return the run id (``resume_run_id``: continue that run)."""
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.row_cache import RowCache
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RowsSource

    source = RowsSource(rows, label=dataset_path, row_cache=RowCache.for_judge(judge) if use_row_cache else None)
    sink = StoreSink(store, config, name=name, resume=resume_run_id)
    return str(evaluate(source, judge, sink, config=config, cancel=cancel, progress=progress).run_id)
