"""A generated run store at size, for the page-load benchmark and the tests of the
dashboard at size: ``n_runs`` finished runs of ``n_items`` items each, written through
the store's public API (:meth:`RunStore.create_run`, :meth:`RunStore.add_items`,
:meth:`RunStore.finish_run`).

Items look like what ``rag-eval judge`` stores for RAGBench rows (``judge_only``'s
records): the packaged labelled RAGBench sample's keyed documents and response, the
judge's sentence labels (the sample's GPT-4 labels, perturbed per item so scores vary),
TRACe scores computed from them by the library, ground truth, tokens, cost and latency.
A share of the rows end in a failure status (``provider_error``, ``parse_error``, ``timeout``) with
an error and no scores, as a real log has. Runs spread over a few datasets,
configurations and tags. Deterministic for a given ``seed``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from harness.run_columns import set_run_columns
from rag_eval.demo import load_labelled_sample
from rag_eval.metrics.trace import score_item
from rag_eval.rag.config import default_config
from rag_eval.runs.prepare import PreparedRow, prepare_row
from rag_eval.runs.store import RunStore
from rag_eval.schema import JudgeStatus, Labels

DATASETS = (("ragbench-covidqa.jsonl", "sha256:1f0c"), ("ragbench-hotpotqa.jsonl", "sha256:2e9d"),
            ("ragbench-techqa.jsonl", "sha256:3a7b"))
TAGS: tuple[list[str], ...] = (["baseline"], ["nightly"], [], ["nightly", "hybrid"], [])
FAILED_SHARE = 0.04  # rows whose judge failed: explicit status, an error, no scores
FAILURES = {JudgeStatus.PROVIDER_ERROR.value: "HTTP 429 from the provider after 5 attempts",
            JudgeStatus.PARSE_ERROR.value: "the judge's reply is not the JSON schema asked for",
            JudgeStatus.TIMEOUT.value: "no reply within 60 s"}


def _prepared() -> list[tuple[PreparedRow, dict[str, Any]]]:
    out = []
    for number, row in enumerate(load_labelled_sample(), start=1):
        prepared = prepare_row(row, number, "sample")
        if prepared.item is not None:
            out.append((prepared, Labels.from_dict(row).to_dict()))
    return out


def _perturb(labels: dict[str, Any], doc_keys: list[str], rng: random.Random) -> dict[str, Any]:
    """The sample's labels with a few sentence keys added or dropped (so every item scores
    a little differently), as a judge's labels vary from row to row."""
    out = dict(labels)
    for field in ("all_relevant_sentence_keys", "all_utilized_sentence_keys"):
        keys = [k for k in out[field] if rng.random() > 0.2]
        keys += [k for k in rng.sample(doc_keys, min(len(doc_keys), rng.randint(0, 2))) if k not in keys]
        out[field] = keys
    out["all_utilized_sentence_keys"] = [k for k in out["all_utilized_sentence_keys"]
                                         if k in out["all_relevant_sentence_keys"] or rng.random() < 0.3]
    return out


def _record(position: int, prepared: PreparedRow, labels: dict[str, Any], config: Any, rng: random.Random,
            status: str) -> dict[str, Any]:
    item = prepared.item
    assert item is not None
    record: dict[str, Any] = {
        "id": f"q{position:05d}", "position": position, "question": prepared.question, "status": status,
        "error": None, "answer": item.response,
        "chunks": [{"id": f"q{position:05d}:{i}", "text": t, "doc_id": f"doc-{i}", "source": "given", "score": None,
                    "chunk_index": i} for i, t in enumerate(item.document_texts)],
        "retrieved_doc_ids": [], "labels": None, "scores": None, "trace": None, "retrieval": None,
        "judge": "llm:gpt-4o-mini", "tokens": {}, "cost_usd": None, "latency_s": round(rng.uniform(0.4, 3.0), 3),
        "timings": {}, "truth": prepared.truth,
        "item": {"documents_sentences": [[[s.key, s.text] for s in doc] for doc in item.documents],
                 "response_sentences": [[s.key, s.text] for s in item.response_sentences]},
    }
    if status != JudgeStatus.OK.value:
        record["error"] = FAILURES[status]
        return record
    prompt, completion = rng.randint(900, 2500), rng.randint(150, 450)
    scores = score_item(item, Labels.from_dict(labels), config.scoring_mode)
    record.update(labels=labels, tokens={"prompt": prompt, "completion": completion, "total": prompt + completion},
                  cost_usd=round(prompt * 1.5e-7 + completion * 6e-7, 7), trace=scores.to_dict(),
                  scores=dict(scores.metric_values(), adherence_score=scores.adherence_score))
    return record


def fill_store(store: RunStore, n_runs: int = 50, n_items: int = 2000, seed: int = 0,
               progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Add ``n_runs`` finished runs of ``n_items`` generated items to ``store``; returns
    their ids, oldest first (runs are dated one hour apart, ending now)."""
    rng = random.Random(seed)
    rows = _prepared()
    base = default_config("generated")
    ids = []
    start = datetime.now(UTC) - timedelta(hours=n_runs)
    for r in range(n_runs):
        dataset_path, fingerprint = DATASETS[r % len(DATASETS)]
        config = base.with_changes(**{"retrieval.k": 3 + r % 4, "judge.kind": "llm",
                                      "judge.model": ("gpt-4o-mini", "gpt-4o")[r % 2]})
        run_id = store.create_run(config, dataset_fingerprint=fingerprint, dataset_path=dataset_path,
                                  name=f"{dataset_path.split('.')[0]}-k{3 + r % 4}-{r:02d}", n_items=n_items,
                                  meta={"kind": "judge-given-responses"})
        records = []
        for position in range(n_items):
            prepared, labels = rows[(position * 7 + r) % len(rows)]
            failed = rng.random() < FAILED_SHARE
            status = rng.choice(sorted(FAILURES)) if failed else JudgeStatus.OK.value
            doc_keys = [s.key for doc in prepared.item.documents for s in doc] if prepared.item else []
            records.append(_record(position, prepared, _perturb(labels, doc_keys, rng), config, rng, status))
        for chunk in range(0, len(records), 500):
            store.add_items(run_id, records[chunk:chunk + 500])
        store.finish_run(run_id)
        store.annotate_run(run_id, tags=TAGS[r % len(TAGS)])
        set_run_columns(store, run_id, created_at=(start + timedelta(hours=r)).isoformat(timespec="seconds"))
        ids.append(run_id)
        if progress is not None:
            progress(r + 1, n_runs)
    return ids


def fill_store_bulk(store: RunStore, n_runs: int = 500, n_items: int = 2000, seed: int = 0, templates: int = 6,
                    progress: Callable[[int, int], None] | None = None) -> list[str]:
    """As :func:`fill_store`, quickly enough for a team's store (500 runs × 2,000 items):
    ``templates`` runs are generated and summarized through the store's API, and every
    further run copies one of them (items and summary) in bulk: PostgreSQL's ``COPY``,
    SQLite's ``executemany`` in one transaction. Records are the templates' (already
    redacted, test data); run ids, names, configurations, tags and dates differ per run."""
    import json

    from sqlalchemy import insert, select

    from rag_eval.runs.store.tables import items, now, runs

    made = fill_store(store, n_runs=min(templates, n_runs), n_items=n_items, seed=seed)
    pool = []
    for run_id in made:
        rows = store.db.read(select(items.c.id, items.c.position, items.c.status, items.c.error,
                                    items.c.question, items.c.record_json).where(items.c.run_id == run_id)
                             .order_by(items.c.position))
        summary = store.db.read(select(runs.c.summary_json).where(runs.c.id == run_id))[0][0]
        pool.append(([tuple(r) for r in rows], summary))
    ids = list(made)
    base = default_config("generated")
    start = datetime.now(UTC) - timedelta(hours=n_runs)
    stamp = now()
    for r in range(len(made), n_runs):
        dataset_path, fingerprint = DATASETS[r % len(DATASETS)]
        config = base.with_changes(**{"retrieval.k": 3 + r % 4, "judge.kind": "llm",
                                      "judge.model": ("gpt-4o-mini", "gpt-4o")[r % 2]})
        rows, summary = pool[r % len(pool)]
        run_id = f"{start + timedelta(hours=r):%Y%m%d-%H%M%S}-{r:06d}"
        store.db.write(insert(runs).values(
            id=run_id, name=f"{dataset_path.split('.')[0]}-k{3 + r % 4}-{r:03d}",
            created_at=(start + timedelta(hours=r)).isoformat(timespec="seconds"), finished_at=stamp,
            status="finished", config_name=config.name, config_hash=config.config_hash,
            config_json=json.dumps(config.to_dict()), collection=None, dataset_path=dataset_path,
            dataset_fingerprint=fingerprint, n_items=n_items, summary_json=summary,
            meta_json=json.dumps({"kind": "judge-given-responses"}), tags_json=json.dumps(TAGS[r % len(TAGS)])))
        columns = ("run_id", "id", "position", "status", "error", "question", "record_json", "updated_at")
        values = [(run_id, *row[:5], row[5], stamp) for row in rows]
        raw = store.engine.raw_connection()
        try:
            cursor = raw.cursor()
            if store.backend == "sqlite":
                cursor.execute("BEGIN IMMEDIATE")  # one transaction (the store's connections run in autocommit)
            if store.backend == "postgresql":
                with cursor.copy(f"COPY items ({', '.join(columns)}) FROM STDIN") as copy:
                    for value in values:
                        copy.write_row(value)
            else:
                cursor.executemany(f"INSERT INTO items ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                                   values)
            raw.commit()
        finally:
            raw.close()
        ids.append(run_id)
        if progress is not None:
            progress(r + 1, n_runs)
    return ids
