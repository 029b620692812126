"""Stored runs for tests, benchmarks and the example store: two short callers of the one engine
(:func:`rag_eval.runs.engine.evaluate`) with the run store as the sink. They lived in the package
(``runs/runner.py``, ``runs/judge_only.py``) although no product path used them; the CLI, the API and
the pages call the engine themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rag_eval.io.rows import RowError
from rag_eval.judges.base import Judge
from rag_eval.rag.config import RagConfig


def run_dataset(rows: Iterable[Any], config: RagConfig, collection: str, store: Any, name: str | None = None,
                progress: Callable[[int, int], None] | None = None, cancel: threading.Event | None = None,
                resume_run_id: str | None = None, judge: Judge | None = None, client: Any = None,
                llm_client: Any = None, dataset_path: str | None = None) -> str:
    """Every question through retrieve -> generate -> judge -> score, stored; returns the run id."""
    from rag_eval.judges.factory import build_judge
    from rag_eval.runs.engine import RunHooks, evaluate
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RagSource

    judge = judge or build_judge(config.judge)  # before the run exists: a bad judge stores nothing
    source = RagSource(rows, config, collection, label=dataset_path, client=client, llm_client=llm_client)
    sink = StoreSink(store, config, name=name, resume=resume_run_id)
    return str(evaluate(source, judge, sink, config=config, hooks=RunHooks(cancel, progress)).run_id)


def judge_dataset(rows: Sequence[tuple[int, dict[str, Any] | RowError]], config: RagConfig, store: Any, judge: Any,
                  name: str | None = None, progress: Callable[[int, int], None] | None = None,
                  cancel: threading.Event | None = None, dataset_path: str | None = None,
                  use_row_cache: bool = True, resume_run_id: str | None = None) -> str:
    """Judge every ``(row number, row)``'s given response, stored; returns the run id."""
    from rag_eval.runs.engine import RunHooks, evaluate
    from rag_eval.runs.row_cache import RowCache
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RowsSource

    source = RowsSource(rows, label=dataset_path, row_cache=RowCache.for_judge(judge) if use_row_cache else None)
    sink = StoreSink(store, config, name=name, resume=resume_run_id)
    return str(evaluate(source, judge, sink, config=config, hooks=RunHooks(cancel, progress)).run_id)
