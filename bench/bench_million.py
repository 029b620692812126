"""A million items: evaluate() into the run store, then ``runs show`` and ``runs export``.

For each size (default 10k, 100k, 1M) and each backend (SQLite file, a throwaway
PostgreSQL from ``harness/pg_server.py``) a fresh process runs the engine
(:func:`rag_eval.runs.engine.evaluate`, what ``rag-eval run rows.jsonl --judge-only``
calls) over generated rows with a judge that answers instantly (labels replayed: the
first document sentence relevant and used, every response sentence supported by it, so
the figures measure the engine, the records and the store, not a model). Then fresh
processes run ``rag-eval runs show`` and ``rag-eval runs export --format parquet`` on
that run. Each step prints its CPU seconds (user + system of that process: the primary
figure on a shared machine), wall seconds, peak RSS and the load average.

``--cli`` runs the first step as ``rag-eval run rows.jsonl --judge-only`` instead, with
the LLM judge against the local OpenAI-compatible server (``tests/openai_server.py``) at
zero latency (slower: every row is an HTTP request; meant for 10k and 100k).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_million.py [--sizes 10000 100000 1000000]
        [--backends sqlite postgresql] [--workdir /tmp/rag-eval-million]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script too: the PostgreSQL harness is in tests/


# ---------------------------------------------------------------- the rows and the judge
def write_rows(path: Path, n: int) -> None:
    """``n`` small rows that carry a response (two documents of two sentences, two
    response sentences), written as JSON lines."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            row = {"id": f"q{i}", "question": f"What is the colour of item {i}?",
                   "documents": [f"Item {i} is blue. It was painted in {1900 + i % 100}.",
                                 f"Other items are red. Item {i + 1} is green."],
                   "response": f"Item {i} is blue. It was painted long ago."}
            fh.write(json.dumps(row) + "\n")


class InstantJudge:
    """Labels replayed at once: the first document sentence relevant and used, every
    response sentence supported by it (what tests/judges/fake_answers.py answers over HTTP)."""

    name = "replay:bench"
    chunk_size = 64

    def judge(self, items: Any, progress: Any = None, cancel: Any = None) -> list[Any]:
        from rag_eval.schema import JudgeResult, JudgeStatus, Labels, SentenceSupport

        out = []
        for item in items:
            first = item.document_keys[:1]
            support = [SentenceSupport(k, list(first), True, "replayed") for k in item.response_keys]
            labels = Labels(all_relevant_sentence_keys=list(first), all_utilized_sentence_keys=list(first),
                            sentence_support_information=support, overall_supported=True)
            out.append(JudgeResult(item.id, JudgeStatus.OK, labels=labels, judge=self.name))
        if progress is not None:
            progress(len(out))
        return out


# ---------------------------------------------------------------- one measured step per process
def _usage() -> dict[str, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": me.ru_utime + me.ru_stime, "peak_rss_mb": me.ru_maxrss / 1024}


def child_evaluate(rows: str, db: str) -> dict[str, Any]:
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RowsSource
    from rag_eval.runs.store import RunStore

    store = RunStore(db)
    config = RagConfig()
    sink = StoreSink(store, config)
    spent = {"encode_cpu_s": 0.0, "encode_wall_s": 0.0, "write_cpu_s": 0.0, "write_wall_s": 0.0,
             "summary_cpu_s": 0.0, "summary_wall_s": 0.0}

    def timed(fn: Any, key: str) -> Any:  # the store's share: CPU of the calling thread, and wall
        def call(*args: Any, **kwargs: Any) -> Any:
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[f"{key}_cpu_s"] += time.thread_time() - cpu
                spent[f"{key}_wall_s"] += time.perf_counter() - wall
        return call

    # The sink encodes a batch on the engine's thread, then its writer thread sends it while
    # the next batch is encoded: the store's writes are the two halves, timed apart.
    store.encode_items = timed(store.encode_items, "encode")  # type: ignore[method-assign]
    store.write_encoded_items = timed(store.write_encoded_items, "write")  # type: ignore[method-assign]
    store.finish_run = timed(store.finish_run, "summary")  # type: ignore[method-assign]
    started = time.perf_counter()
    summary = evaluate(RowsSource(path=rows), InstantJudge(), sink, config=config)
    return {"run_id": summary.run_id, "n_items": summary.n_items, "n_usable": summary.n_usable,
            "wall_s": time.perf_counter() - started, **spent}


def child_cli(args: list[str]) -> dict[str, Any]:
    from rag_eval.cli import cli

    started = time.perf_counter()
    with contextlib.redirect_stdout(open(os.devnull, "w")):  # noqa: SIM115 - the process ends right after
        try:
            cli.main(args, standalone_mode=False)
        except SystemExit as err:
            if err.code not in (0, None):
                raise
    return {"wall_s": time.perf_counter() - started}


def run_child(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One step in a fresh interpreter; what it printed last (JSON) plus its usage."""
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, check=False)
    if out.returncode != 0:
        raise SystemExit(f"step {args[0]} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the stores
@contextlib.contextmanager
def store_urls(backends: list[str], workdir: Path) -> Iterator[tuple[dict[str, Any], dict[str, int]]]:
    """Per backend, a store URL for ``n`` items; and each server's port (to read its CPU)."""
    urls: dict[str, Any] = {}
    ports: dict[str, int] = {}
    with contextlib.ExitStack() as stack:
        for backend in backends:
            if backend == "sqlite":
                urls[backend] = lambda n: str(workdir / f"runs-{n}.sqlite")
            else:
                from harness.pg_server import running_postgres

                server = stack.enter_context(running_postgres())

                ports[backend] = server.port

                def pg(n: int, server: Any = server) -> str:
                    server.admin(f"CREATE DATABASE runs_{n}")
                    return str(server.url(f"runs_{n}"))

                urls[backend] = pg
        yield urls, ports


def postgres_cpu_s(port: int) -> float:
    """CPU seconds the PostgreSQL server listening on ``port`` has used so far: its
    postmaster's own, its reaped backends' (the postmaster's cutime/cstime) and the live
    ones' (read from /proc), so a step's server share is the difference around it."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, list[str]] = {}
    postmaster = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry.name)] = fields
        if cmdline and cmdline[0].endswith(b"postgres") and str(port).encode() in cmdline:
            postmaster = int(entry.name)
    if postmaster is None:
        return float("nan")
    own = stats[postmaster]  # after ")": state ppid ... utime(12) stime(13) cutime(14) cstime(15)
    total = sum(int(own[i]) for i in (11, 12, 13, 14))
    total += sum(int(f[11]) + int(f[12]) for f in stats.values() if int(f[1]) == postmaster)
    return total / tick


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--workdir", type=Path, default=None, help="where the rows and SQLite stores go (default: temp)")
    parser.add_argument("--steps", nargs="+", default=["evaluate", "show", "export"])
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = child_evaluate(*rest) if kind == "evaluate" else child_cli(rest)
        print(json.dumps({**result, **_usage()}))
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="rag-eval-million-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"cpus {os.cpu_count()}; load at start {_load()}; workdir {workdir}")
    print("| backend | items | step | CPU s | wall s | items/s (CPU) | items/s (wall) | peak RSS MB | load 1/5/15 |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    with store_urls(args.backends, workdir) as (urls, ports):
        for n in args.sizes:
            rows = workdir / f"rows-{n}.jsonl"
            if not rows.exists():
                write_rows(rows, n)
            for backend in args.backends:
                db = urls[backend](n)
                port = ports.get(backend)
                server_before = postgres_cpu_s(port) if port else float("nan")
                done = run_child("evaluate", str(rows), db)
                time.sleep(0.5)  # the connections' backends exit and are reaped
                server_cpu = postgres_cpu_s(port) - server_before if port else float("nan")
                if done["n_items"] != n:
                    raise SystemExit(f"{backend}: {done['n_items']} items stored of {n}")
                steps = [("evaluate", done)]
                if "show" in args.steps:
                    steps.append(("runs show", run_child("cli", "runs", "show", done["run_id"], "--db", db)))
                if "export" in args.steps:
                    out = workdir / f"{backend}-{n}.parquet"
                    steps.append(("runs export parquet", run_child(
                        "cli", "runs", "export", done["run_id"], "--format", "parquet", "-o", str(out), "--db", db)))
                if "write_cpu_s" in done:
                    steps += [("  of which encoding the items (encode_items, the engine's thread)", {
                        "cpu_s": done["encode_cpu_s"], "wall_s": done["encode_wall_s"], "peak_rss_mb": float("nan")}),
                              ("  writing them (write_encoded_items: the writer thread, overlapped; wall includes GIL and server waits)", {
                        "cpu_s": done["write_cpu_s"], "wall_s": done["write_wall_s"], "peak_rss_mb": float("nan")}),
                              ("  of which the stored summary (finish_run)", {
                        "cpu_s": done["summary_cpu_s"], "wall_s": done["summary_wall_s"], "peak_rss_mb": float("nan")})]
                if port:
                    steps.append(("  the server's CPU during evaluate (postgres processes)", {
                        "cpu_s": server_cpu, "wall_s": float("nan"), "peak_rss_mb": float("nan")}))
                for name, r in steps:
                    print(f"| {backend} | {n:,} | {name} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | "
                          f"{n / r['cpu_s']:,.0f} | {n / r['wall_s']:,.0f} | {r['peak_rss_mb']:.0f} | {_load()} |",
                          flush=True)


if __name__ == "__main__":
    main()
