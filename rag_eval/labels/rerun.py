"""Judge a run's rows again with another judge (e.g. the calibrated local judge), as a new run.

The new run holds the same items (same ids, same keyed sentences) as the old one, so
the human labels of the old run's reviewed rows are compared with the new judge's in
the Judges view, and its records name the judge (``local:<version>+<calibration>``).
"""

from __future__ import annotations

from typing import Any

from rag_eval.labels.store import item_from_record
from rag_eval.runs.store import RunStore


def run_rows(store: RunStore, run_id: str, only: set[str] | None = None) -> list[dict[str, Any]]:
    """The run's judgeable items as RAGBench-format rows (``only``: these item ids)."""
    rows = []
    for record in store.items(run_id):
        if only is not None and str(record["id"]) not in only:
            continue
        try:
            item = item_from_record(record)
        except (ValueError, KeyError, TypeError):
            continue
        if not item.documents or not item.response_sentences:
            continue
        rows.append({
            "id": item.id, "question": item.question,
            "response": item.response or " ".join(s.text for s in item.response_sentences),
            "documents_sentences": [[[s.key, s.text] for s in doc] for doc in item.documents],
            "response_sentences": [[s.key, s.text] for s in item.response_sentences],
        })
    return rows


def rejudge_run(store: RunStore, run_id: str, judge: Any, only: set[str] | None = None,
                name: str | None = None) -> str:
    """A new judge-only run of ``run_id``'s items with ``judge`` (one evaluation:
    :func:`rag_eval.runs.engine.evaluate`); returns its id."""
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.row_cache import RowCache
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RowsSource

    run = store.get_run(run_id)
    try:
        config = RagConfig.from_dict({k: v for k, v in (run.get("config") or {}).items() if k != "config_hash"})
    except ValueError:
        config = RagConfig()
    rows = run_rows(store, run["id"], only)
    if not rows:
        raise ValueError(f"run {run['id']} has no rows with documents and a response to judge")
    source = RowsSource(list(enumerate(rows, 1)), label=f"run:{run['id']}", row_cache=RowCache.for_judge(judge))
    sink = StoreSink(store, config, name=name or f"{run['name']} · {judge.name}")
    return str(evaluate(source, judge, sink, config=config).run_id)
