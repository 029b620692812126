"""Sinks of :func:`rag_eval.runs.engine.evaluate`: where each finished record goes.

A sink is opened with the source's :class:`SourceInfo` and returns the items it already
holds (a resumed run's, which the engine skips), receives every record in input order, and
is closed with the run's final status. :class:`StoreSink` writes the run store in batches
(:data:`WRITE_BATCH` items or ``FLUSH_EVERY_S``, one transaction each: one per item caps a
run at a few hundred items a second), encoding the next batch while one is in the database;
:class:`FileSink` writes a ``rag-eval judge`` output file (``.jsonl`` as rows finish, other
formats at close); :class:`MemorySink` keeps the records (``ask``, :mod:`rag_eval.testing`).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rag_eval.runs.records import to_file_row, to_store
from rag_eval.runs.sources import SourceInfo
from rag_eval.runs.summary import SUMMARY_FIELDS
from rag_eval.schema import ItemRecord, JudgeStatus

FLUSH_EVERY_S = 0.5
#: items per store transaction (one multi-row upsert)
WRITE_BATCH = 500
#: statuses a resumed run judges again (transient failures); other items are kept
RETRY_STATUSES = frozenset({JudgeStatus.PROVIDER_ERROR.value, JudgeStatus.TIMEOUT.value, JudgeStatus.CANCELLED.value,
                            "retrieval_error", "generation_error"})

class StoreSink:
    """Records into a run of ``store``: a new one named ``name``, or ``resume`` (a run id,
    prefix or name) continued. ``run_id`` is set once opened."""

    def __init__(self, store: Any, config: Any, *, name: str | None = None, resume: str | None = None) -> None:
        self.store, self.config, self.name, self.resume = store, config, name, resume
        self.run_id: str | None = None
        self._held: list[dict[str, Any]] = []
        self._flushed = time.monotonic()
        self._writer: ThreadPoolExecutor | None = None
        self._in_database: Future[None] | None = None

    needs_info = True

    def open(self, info: SourceInfo | None) -> dict[str, dict[str, Any]]:
        if info is None:
            raise ValueError("a stored run needs the source's description")
        if self.resume:
            run = self.store.get_run(self.resume)
            if run["config_hash"] != self.config.config_hash:
                raise ValueError(f"run {run['id']} used configuration {run['config_hash']}, not "
                                 f"{self.config.config_hash}; resume it with its own configuration")
            if run.get("dataset_fingerprint") and run["dataset_fingerprint"] != info.fingerprint:
                raise ValueError(f"run {run['id']} evaluated another dataset (fingerprint {run['dataset_fingerprint']})")
            self.store.claim_run(run["id"])  # atomic: of two processes resuming at once, one wins (RunBusy)
            self.run_id = run["id"]
            kept = [i for i in self.store.items(run["id"], SUMMARY_FIELDS) if i.get("status") not in RETRY_STATUSES]
            return {str(i["id"]): i for i in kept}
        self.run_id = self.store.create_run(
            self.config, collection=info.collection, dataset_fingerprint=info.fingerprint,
            dataset_path=info.dataset_path, name=self.name, n_items=info.n_items,
            meta={key: value for key, value in (("kind", info.kind), ("retrieval_mode", info.retrieval_mode)) if value}
            or None)
        return {}

    def write(self, record: ItemRecord) -> None:
        self._held.append(to_store(record))
        if len(self._held) >= WRITE_BATCH or time.monotonic() - self._flushed >= FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        """Send the records held so far to the store: encoded here, then written by the
        sink's writer thread while the caller goes on (items show up for a reader within
        ``FLUSH_EVERY_S`` and one batch's write while records keep coming). A failed write
        raises from the next flush or from :meth:`close`."""
        held, self._held = self._held, []
        self._flushed = time.monotonic()
        if not held:
            return
        rows = self.store.encode_items(self.run_id, held)
        try:
            self.wait_for_writes()  # at most one batch in flight: memory stays bounded
        except Exception:
            self._held = held + self._held  # not written: close() tries these again
            raise
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-eval-store-writer")
        self._in_database = self._writer.submit(self.store.write_encoded_items, rows)

    def wait_for_writes(self) -> None:
        """Return once every batch :meth:`flush` sent is in the store (or raise its error)."""
        in_database, self._in_database = self._in_database, None
        if in_database is not None:
            in_database.result()

    def close(self, status: str, error: str | None = None) -> None:
        if self.run_id is not None:
            try:
                self.flush()  # also when the run stops on an error: every finished record is kept
                self.wait_for_writes()
            except Exception as err:  # a write failed: the run did not keep every record
                if status == "finished":
                    status, error = "failed", f"{type(err).__name__}: {err}"
                self.store.finish_run(self.run_id, status, error=error)
                raise
            finally:
                if self._writer is not None:
                    self._writer.shutdown(wait=True)
                    self._writer = None
            self.store.finish_run(self.run_id, status, error=error)
            # Every stored run carries its judge's expected error (docs/local-judge.md), whichever
            # entry point ran it: the calibration's cross-validated error, the shipped model's
            # leave-one-domain-out figures, or "unknown" for an LLM judge.
            from rag_eval.judges.expected_error import for_run

            self.store.add_to_summary(self.run_id, expected_judge_error=for_run(self.store.get_run(self.run_id)))


class FileSink:
    """Output rows (:func:`rag_eval.runs.records.to_file_row`) written to ``path`` as they come."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._held: list[dict[str, Any]] = []
        self._fh: Any = None
        self._flushed = 0.0

    needs_info = False
    run_id: str | None = None

    def open(self, info: SourceInfo | None = None) -> dict[str, dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.suffix.lower() == ".jsonl":
            self._fh = self.path.open("w", encoding="utf-8")
        return {}

    def write(self, record: ItemRecord) -> None:
        row = to_file_row(record)
        if self._fh is None:
            self._held.append(row)
            return
        self._fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        now = time.monotonic()
        if now - self._flushed >= FLUSH_EVERY_S:  # rows show up for a reader within a second
            self._fh.flush()
            self._flushed = now

    def close(self, status: str, error: str | None = None) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        else:
            from rag_eval.io.rows import write_rows

            write_rows(self._held, self.path)
            self._held = []


class MemorySink:
    """Keeps the records (for callers that show one or a few items)."""

    def __init__(self) -> None:
        self.records: list[ItemRecord] = []

    needs_info = False
    run_id: str | None = None

    def open(self, info: SourceInfo | None = None) -> dict[str, dict[str, Any]]:
        return {}

    def write(self, record: ItemRecord) -> None:
        self.records.append(record)

    def close(self, status: str, error: str | None = None) -> None:
        return None


