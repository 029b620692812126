"""Runs: create, claim, look up, list, finish, annotate, delete."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import delete, func, insert, or_, select, update

from rag_eval.runs.liveness import INTERRUPTED
from rag_eval.runs.stats import summarize_stored_run
from rag_eval.runs.store.database import Database
from rag_eval.runs.store.items import IDS_PER_QUERY, iter_items
from rag_eval.runs.store.lease import LEASE_S, Holdings
from rag_eval.runs.store.redaction import clean, dumps, store_secrets
from rag_eval.runs.store.tables import items, now, runs
from rag_eval.runs.summary import read_stored

RUN_STATUSES = ("running", "finished", "cancelled", "failed")


class RunNotFound(LookupError):
    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else "run not found"


class RunBusy(ValueError):
    """Another live process holds the run (resume refused)."""


class RecordedConfig(Protocol):
    """What a run records of the configuration it ran
    (:class:`~rag_eval.rag.config.RagConfig`): its dict and its hash."""

    @property
    def config_hash(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


def _check_status(status: str) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(f"run status must be one of {', '.join(RUN_STATUSES)}; got {status!r}")


class RunQueries:
    """The run methods of :class:`~rag_eval.runs.store.RunStore`."""

    db: Database
    holdings: Holdings
    owner: str
    _password: str | None

    def _secrets(self) -> list[str]:
        return store_secrets([self._password])

    def beat(self, run_id: str) -> None:
        """Refresh the heartbeat of a run this process holds."""
        self.db.write(update(runs).where(runs.c.id == run_id, runs.c.owner == self.owner).values(heartbeat_at=now()))

    def claim_run(self, run_id: str, lease_s: float = LEASE_S) -> None:
        """Take the run for this process, atomically: it succeeds when the run is not
        running, or is this store's, or its holder's heartbeat is older than ``lease_s``.
        Raises :class:`RunBusy` when another live process holds it."""
        run_id = self.resolve_run_id(run_id)
        stale = (datetime.now(UTC) - timedelta(seconds=lease_s)).isoformat(timespec="seconds")
        free = or_(runs.c.status != "running", runs.c.owner == self.owner, runs.c.owner.is_(None),
                   runs.c.heartbeat_at.is_(None), runs.c.heartbeat_at < stale)
        won = self.db.write(update(runs).where(runs.c.id == run_id, free).values(
            status="running", owner=self.owner, heartbeat_at=now(), error=None, finished_at=None))
        if won != 1:
            row = self.db.read(select(runs.c.owner, runs.c.heartbeat_at).where(runs.c.id == run_id))[0]
            raise RunBusy(f"run {run_id} is being run by {row[0]} (last heartbeat {row[1]}); if that process "
                          f"died, resume again after {lease_s:.0f} s")
        self.holdings.hold(run_id)

    def create_run(
        self,
        config: RecordedConfig | Mapping[str, Any],
        collection: str | None = None,
        dataset_fingerprint: str | None = None,
        dataset_path: str | None = None,
        name: str | None = None,
        n_items: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """A new run in status ``running``, held by this process; returns its id
        (``YYYYmmdd-HHMMSS-xxxxxx``). ``config`` is a :class:`~rag_eval.rag.config.RagConfig`
        or its dict."""
        if isinstance(config, Mapping):
            config_dict, config_hash = dict(config), str(config.get("config_hash", ""))
        else:
            config_dict, config_hash = config.to_dict(), config.config_hash
        run_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        secrets = self._secrets()
        self.holdings.lock(run_id)  # before the row exists, so the run never looks interrupted
        self.db.write(insert(runs).values(
            id=run_id, name=clean(name or f"{config_dict.get('name', 'run')}", secrets), created_at=now(),
            status="running", config_name=str(config_dict.get("name", "")), config_hash=config_hash,
            config_json=dumps(config_dict, secrets), collection=collection, dataset_path=clean(dataset_path, secrets),
            dataset_fingerprint=dataset_fingerprint, n_items=n_items, meta_json=dumps(meta or {}, secrets),
            owner=self.owner, heartbeat_at=now()))
        self.holdings.hold(run_id)
        return run_id

    def resolve_run_id(self, ref: str) -> str:
        """A run id from an exact id, a unique id prefix or a unique run name."""
        rows = self.db.read(select(runs.c.id).where(runs.c.id == ref))
        if rows:
            return str(rows[0][0])
        rows = self.db.read(select(runs.c.id).where(runs.c.id.startswith(ref, autoescape=True)))
        if len(rows) == 1:
            return str(rows[0][0])
        if not rows:
            rows = self.db.read(select(runs.c.id).where(runs.c.name == ref))
            if len(rows) == 1:
                return str(rows[0][0])
        if len(rows) > 1:
            raise RunNotFound(f"'{ref}' matches {len(rows)} runs ({', '.join(r[0] for r in rows[:5])}); give more of the id")
        raise RunNotFound(f"no run '{ref}' (see `rag-eval runs list`)")

    def _run_dict(self, row: Any) -> dict[str, Any]:
        d = dict(row._mapping)
        if d.get("status") == "running":
            why = self.holdings.stale(d)
            if why is not None:  # killed, crashed, lost its host: shown, not stored (--resume continues it)
                d["status"], d["status_detail"] = INTERRUPTED, why
        d["config"] = json.loads(d.pop("config_json"))
        d["summary"] = read_stored(json.loads(d.pop("summary_json"))) if d.get("summary_json") else None
        d["meta"] = json.loads(d.pop("meta_json")) if d.get("meta_json") else {}
        d["tags"] = json.loads(d.pop("tags_json")) if d.get("tags_json") else []
        d["note"] = d.get("note") or ""
        return d

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run as a dict (config and summary decoded); ``run_id`` may be a prefix or name."""
        run_id = self.resolve_run_id(run_id)
        d = self._run_dict(self.db.read(select(runs).where(runs.c.id == run_id))[0])
        d["n_done"] = int(self.db.read(select(func.count()).select_from(items).where(items.c.run_id == run_id))[0][0])
        return d

    def count_runs(self) -> int:
        """How many runs are stored (without reading them: a team's store holds hundreds)."""
        return int(self.db.read(select(func.count()).select_from(runs))[0][0])

    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Runs, newest first, each with ``n_done`` (items stored so far). A finished run's
        count is its summary's (items are only added while a run runs; a resumed run is
        summarized again), so a store of 500 runs × 2,000 items does not count a million
        index entries on every visit of a page: only running runs are counted, in a second
        query. (One query with a counting subquery per run made PostgreSQL's planner
        estimate the list as costly and compile it with JIT: 150 ms for 100 runs, on
        every visit, for a query that runs in under 1 ms.)"""
        query = select(runs).order_by(runs.c.created_at.desc(), runs.c.id.desc())
        if limit is not None:
            query = query.limit(int(limit))
        rows = self.db.read(query)
        unsummarized = [row.id for row in rows if row.summary_json is None or row.status == "running"]
        counts: dict[str, int] = {}
        for start in range(0, len(unsummarized), IDS_PER_QUERY):
            chunk = unsummarized[start:start + IDS_PER_QUERY]
            counts.update((str(run_id), int(n)) for run_id, n in self.db.read(
                select(items.c.run_id, func.count()).where(items.c.run_id.in_(chunk)).group_by(items.c.run_id)))
        counted = set(unsummarized)
        out = []
        for row in rows:
            run = self._run_dict(row)
            run["n_done"] = counts.get(run["id"], 0) if run["id"] in counted else int(
                (run["summary"] or {}).get("n_items", 0))
            out.append(run)
        return out

    def finish_run(self, run_id: str, status: str = "finished", error: str | None = None) -> dict[str, Any]:
        """Store the summary statistics of the run's items and its final status."""
        _check_status(status)
        summary = summarize_stored_run(lambda fields: iter_items(self.db, run_id, fields))
        secrets = self._secrets()
        self.holdings.unlock(run_id)
        self.db.write(update(runs).where(runs.c.id == run_id).values(
            status=status, finished_at=now(), summary_json=dumps(summary, secrets), error=clean(error, secrets)))
        self.holdings.release(run_id)
        return summary

    def add_to_summary(self, run_id: str, **parts: Any) -> None:
        """Merge ``parts`` into a finished run's stored summary (a run stored before the
        summary kept its agreement gets it when first computed); a run without a
        summary (still running) is left alone."""
        rows = self.db.read(select(runs.c.summary_json).where(runs.c.id == run_id))
        if not rows or not rows[0][0]:
            return
        summary = {**json.loads(rows[0][0]), **parts}
        self.db.write(update(runs).where(runs.c.id == run_id, runs.c.summary_json.is_not(None))
                      .values(summary_json=dumps(summary, self._secrets())))

    def annotate_run(self, run_id: str, tags: Iterable[str] | None = None, note: str | None = None) -> dict[str, Any]:
        """Set a run's tags (trimmed, deduplicated, order kept) and/or its free-text note;
        ``None`` leaves that field as it is. Returns the updated run."""
        run_id = self.resolve_run_id(run_id)
        secrets = self._secrets()
        if tags is not None:
            kept = list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
            self.db.write(update(runs).where(runs.c.id == run_id).values(tags_json=dumps(kept, secrets)))
        if note is not None:
            self.db.write(update(runs).where(runs.c.id == run_id).values(note=clean(note.strip(), secrets)))
        return self.get_run(run_id)

    def delete_run(self, run_id: str) -> None:
        run_id = self.resolve_run_id(run_id)
        with self.db.transaction(write=True) as conn:
            conn.execute(delete(items).where(items.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))
        self.holdings.forget(run_id)
