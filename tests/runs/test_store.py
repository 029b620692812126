"""The run store on SQLite and PostgreSQL: migrations, concurrent writers, atomic
resume claims, lookups, no secrets stored, store-to-store copy.

``store_url`` (harness/pg_server.py) runs each test on a SQLite file and on a fresh
database of a throwaway PostgreSQL server."""

import multiprocessing
import sqlite3

import pytest
from sqlalchemy import inspect

from harness.run_columns import set_run_columns
from rag_eval.rag.config import default_config
from rag_eval.runs.store import (
    SCHEMA_VERSION,
    RunBusy,
    RunNotFound,
    RunStore,
    StoreUnavailable,
    display_location,
)
from rag_eval.runs.store_copy import CopyError, copy_store

FAKE_KEY = "test-key-not-real-123"


def _fill(store: RunStore, run: str, n: int = 3) -> None:
    for i in range(n):
        store.add_items(run, [{"id": f"i{i}", "position": i, "status": "ok", "question": f"q{i}",
                             "scores": {"completeness": i / max(n - 1, 1)}}])


def test_migrations_give_the_same_schema_on_both_backends(store_url):
    store = RunStore(store_url)
    assert store.schema_version() == SCHEMA_VERSION
    assert {"runs", "items", "human_labels", "alembic_version"} <= set(inspect(store.engine).get_table_names())
    assert {"id", "config_hash", "config_json", "dataset_fingerprint", "summary_json", "meta_json", "owner",
            "heartbeat_at"} <= set(store.columns("runs"))
    assert {"run_id", "id", "status", "error", "record_json"} <= set(store.columns("items"))
    assert store.migrate() == store.schema_version()  # idempotent
    assert RunStore(store_url).schema_version() == store.schema_version()  # reopening applies nothing twice


def test_in_memory_store_migrates():
    store = RunStore(":memory:")
    assert store.schema_version() == SCHEMA_VERSION and store.backend == "sqlite"


def test_file_store_uses_wal_and_default_path(rag_eval_home, monkeypatch):
    store = RunStore()
    assert store.path == str(rag_eval_home / "runs.sqlite")
    assert sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    monkeypatch.setenv("RAG_EVAL_DB", str(rag_eval_home / "other.sqlite"))
    assert RunStore().path.endswith("other.sqlite")


def test_rag_eval_db_url_selects_postgresql_and_hides_the_password(pg_url, monkeypatch, postgres_server):
    monkeypatch.setenv("RAG_EVAL_DB_URL", pg_url)
    store = RunStore()
    assert store.backend == "postgresql" and postgres_server.password not in store.url
    assert store.url == display_location(pg_url) and "***" in store.url


def test_unreachable_or_refused_server_gives_a_password_free_error(postgres_server, tmp_path):
    bad = postgres_server.url("postgres").replace(postgres_server.password, "wrong-pass-not-real-9")
    with pytest.raises(StoreUnavailable, match="password authentication failed") as info:
        RunStore(bad)
    assert "wrong-pass-not-real-9" not in str(info.value)
    with pytest.raises(StoreUnavailable, match="cannot open the run store") as info:
        RunStore("postgresql+psycopg://u:secret-pw-not-real@127.0.0.1:1/x?connect_timeout=3")
    assert "secret-pw-not-real" not in str(info.value)


def test_run_lifecycle_and_summary(store_url):
    store = RunStore(store_url)
    run = store.create_run(default_config("base"), collection="demo", dataset_fingerprint="sha256:abc", n_items=3)
    store.add_items(run, [{"id": "a", "position": 0, "status": "ok", "question": "qa",
                         "scores": {"completeness": 1.0, "adherence": 1.0}, "latency_s": 0.5}])
    store.add_items(run, [{"id": "b", "position": 1, "status": "ok", "question": "qb\x00",
                         "scores": {"completeness": 0.5, "adherence": 0.0}, "latency_s": 1.5}])
    store.add_items(run, [{"id": "c", "position": 2, "status": "timeout", "error": "took too long"}])
    running = store.create_run(default_config("base"), name="still running")  # counted, having no summary
    store.add_items(running, [{"id": "x", "position": 0, "status": "ok"}])
    assert {r["id"]: r["n_done"] for r in store.list_runs()} == {run: 3, running: 1}
    store.delete_run(running)
    summary = store.finish_run(run)
    assert summary["n_items"] == 3 and summary["n_scored"] == 2 and summary["coverage"] == pytest.approx(2 / 3)
    assert summary["status_counts"] == {"ok": 2, "timeout": 1}
    completeness = summary["trace"]["completeness"]
    assert completeness["mean"] == 0.75 and completeness["n"] == 2 and completeness["coverage"] == pytest.approx(2 / 3)
    assert completeness["ci_low"] <= 0.75 <= completeness["ci_high"]
    got = store.get_run(run[:12])
    assert got["status"] == "finished" and got["config"]["name"] == "base" and got["n_done"] == 3
    assert got["config_hash"] == default_config().config_hash
    assert [i["id"] for i in store.items(run)] == ["a", "b", "c"]
    store.add_items(run, [{"id": "c", "position": 2, "status": "ok"}])  # a resumed run replaces a failed item
    assert store.item_statuses(run) == {"a": "ok", "b": "ok", "c": "ok"}
    assert store.list_runs()[0]["id"] == run and store.list_runs(limit=1)[0]["n_done"] == 3
    store.delete_run(run)
    assert store.list_runs() == [] and store.items(run) == []


def test_lookup_errors(store_url):
    store = RunStore(store_url)
    with pytest.raises(RunNotFound, match="no run 'zzz'"):
        store.get_run("zzz")
    store.create_run(default_config(), name="same")
    store.create_run(default_config(), name="same")
    with pytest.raises(RunNotFound, match="matches 2 runs"):
        store.get_run("2")  # both ids start with the year
    with pytest.raises(RunNotFound, match="no run"):
        store.get_run("2_%")  # LIKE wildcards are literal


def test_bad_records_are_rejected(store_url):
    store = RunStore(store_url)
    run = store.create_run(default_config())
    with pytest.raises(ValueError, match="id"):
        store.add_items(run, [{"status": "ok"}])
    with pytest.raises(ValueError, match="run status"):
        store.finish_run(run, status="done")


def _dump(store_url: str, postgres_server) -> str:
    if "://" in store_url:
        return postgres_server.dump(store_url.rsplit("/", 1)[1])
    return "\n".join(sqlite3.connect(store_url).iterdump())


def test_secrets_never_reach_the_database(store_url, monkeypatch, request):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    store = RunStore(store_url)
    password = store._password or FAKE_KEY  # the PostgreSQL URL's password is a secret too
    run = store.create_run(default_config(), meta={"note": f"key {FAKE_KEY}"})
    store.add_items(run, [{"id": "a", "status": "provider_error",
                         "error": f"401 for key {FAKE_KEY}", "raw": f"Bearer {FAKE_KEY} db {password}"}])
    store.finish_run(run, error=f"failed with {FAKE_KEY} and {password}")
    store.close()
    dump = _dump(store_url, request.getfixturevalue("postgres_server") if "://" in store_url else None)
    assert FAKE_KEY not in dump and password not in dump and "***" in dump


def _processes(target, args_list):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=target, args=args) for args in args_list]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * len(procs)


def test_four_processes_writing_into_one_run_lose_and_duplicate_nothing(store_url):
    from tests.runs.store_workers import write_items

    store = RunStore(store_url)
    run = store.create_run(default_config())
    n, shared, workers = 500, 20, 4
    barrier = multiprocessing.get_context("spawn").Barrier(workers)
    _processes(write_items, [(store_url, run, w, n, shared, barrier) for w in range(workers)])
    ids = [i["id"] for i in store.items(run)]
    expected = {f"w{w}-{i}" for w in range(workers) for i in range(n)} | {f"shared-{i}" for i in range(shared)}
    assert len(ids) == len(set(ids)) == workers * n + shared and set(ids) == expected
    assert store.get_run(run)["n_done"] == workers * n + shared


def test_two_processes_racing_to_resume_one_wins(store_url):
    from tests.runs.store_workers import claim

    store = RunStore(store_url)
    runs = [store.create_run(default_config(f"r{i}")) for i in range(3)]
    for run in runs:
        store.finish_run(run, "failed", error="crashed")
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    _processes(claim, [(store_url, runs, barrier, results, w) for w in range(2)])
    winners: dict[str, list[int]] = {}
    while not results.empty():
        run, worker = results.get()
        winners.setdefault(run, []).append(worker)
    assert sorted(winners) == sorted(runs) and all(len(w) == 1 for w in winners.values())
    assert all(store.get_run(r)["status"] == "running" for r in runs)


def test_a_live_claim_blocks_a_second_process_until_its_lease_lapses(store_url):
    first, second = RunStore(store_url), RunStore(store_url)
    run = first.create_run(default_config())
    with pytest.raises(RunBusy, match="is being run by"):
        second.claim_run(run)
    first.claim_run(run)  # the holder itself may resume
    second.claim_run(run, lease_s=-1)  # its heartbeat is older than a (negative) lease: the holder died
    assert second.get_run(run)["owner"] == second.owner
    second.finish_run(run, "cancelled")
    first.claim_run(run)  # a finished run is free again


def test_a_postgresql_connection_attempt_is_bounded(pg_url):
    """A database server that does not answer fails the store in seconds: the dashboard
    opens it before it listens (rag_eval.ui.warm_up), a page before it draws."""
    from sqlalchemy import event

    from rag_eval.runs.store import CONNECT_TIMEOUT_S

    store = RunStore(pg_url)
    seen: list[dict] = []
    event.listen(store.engine, "do_connect", lambda dialect, record, cargs, cparams: seen.append(dict(cparams)))
    store.engine.dispose()  # the next read opens a new connection
    assert store.list_runs() == []
    assert seen and seen[0]["connect_timeout"] == CONNECT_TIMEOUT_S
    store.close()

    own = RunStore(pg_url + ("&" if "?" in pg_url else "?") + "connect_timeout=3")  # the URL's own value wins
    seen.clear()
    event.listen(own.engine, "do_connect", lambda dialect, record, cargs, cparams: seen.append(dict(cparams)))
    own.engine.dispose()
    own.list_runs()
    assert str(seen[0]["connect_timeout"]) == "3"
    own.close()


def test_copy_to_another_store_is_idempotent_and_verified(tmp_path, pg_url, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    source = RunStore(tmp_path / "local.sqlite")
    runs = [source.create_run(default_config(f"c{i}")) for i in range(2)]
    for run in runs:
        _fill(source, run, 4)
        source.finish_run(run)
    target = RunStore(pg_url)
    report = {r.table: r for r in copy_store(source, target, batch_rows=3)}
    assert (report["runs"].source_rows, report["runs"].copied, report["runs"].missing) == (2, 2, 0)
    assert (report["items"].source_rows, report["items"].copied, report["items"].target_rows) == (8, 8, 8)
    again = {r.table: r for r in copy_store(source, target)}
    assert again["items"].copied == 0 and again["items"].target_rows == 8
    assert target.get_run(runs[0])["summary"] == source.get_run(runs[0])["summary"]
    assert target.items(runs[1]) == source.items(runs[1])
    back = RunStore(tmp_path / "back.sqlite")  # and back from the server to a file
    copied = {r.table: r.copied for r in copy_store(target, back)}
    assert (copied.pop("runs"), copied.pop("items")) == (2, 8)
    assert not any(copied.values())  # the other tables (human labels, tags) are empty here
    with pytest.raises(CopyError, match="same store"):
        copy_store(target, RunStore(pg_url))


def test_the_holder_keeps_its_claim_alive_with_a_heartbeat(tmp_path, monkeypatch):
    import time

    from rag_eval.runs.store import lease

    monkeypatch.setattr(lease, "HEARTBEAT_S", 0.1)
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.create_run(default_config())
    set_run_columns(store, run, heartbeat_at="2000-01-01T00:00:00+00:00")
    deadline = time.monotonic() + 10
    while store.get_run(run)["heartbeat_at"].startswith("2000") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not store.get_run(run)["heartbeat_at"].startswith("2000")  # refreshed by the holder
    with pytest.raises(RunBusy):
        RunStore(tmp_path / "runs.sqlite").claim_run(run)  # so nobody else may take it
    store.finish_run(run)
    deadline = time.monotonic() + 10
    while store.holdings.thread is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.holdings.thread is None  # no claims left: the heartbeat thread has ended
    store.close()


def test_picked_fields_read_alike_on_both_backends(store_url):
    """A run's items read as a few fields (what a run's summary reads: top-level fields, which
    PostgreSQL picks from one parse of each record) give the same objects on both backends:
    every field named, in the order asked, null when the record lacks it."""
    store = RunStore(store_url)
    run = store.create_run(default_config(), name="picked")
    store.add_items(run, [
        {"id": "a", "position": 0, "status": "ok", "question": "q?", "scores": {"relevance": 0.5},
         "item": {"question": "q", "documents": [["d"]]}},
        {"id": "b", "position": 1, "status": "failed", "error": "timeout"},
    ])
    top = store.items(run, ["id", "scores", "error", "absent"])
    assert top == [{"id": "a", "scores": {"relevance": 0.5}, "error": None, "absent": None},
                   {"id": "b", "scores": None, "error": "timeout", "absent": None}]
    assert [list(d) for d in top] == [["id", "scores", "error", "absent"]] * 2
    assert store.items(run, ["question"]) == [{"question": "q?"}, {"question": None}]
    assert store.items(run, ["item.question", "id"]) == [{"item": {"question": "q"}, "id": "a"},
                                                            {"item": {"question": None}, "id": "b"}]
