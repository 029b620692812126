"""End-to-end throughput of ``rag-eval judge --judge llm`` on real RAGBench rows.

The shared RAGBench validation splits (every subset, one file) are judged by the CLI,
run as a separate process so start-up is included, against the local
OpenAI-compatible server (harness/openai_server.py) answering every request after a
fixed latency. The ideal is ``ceil(rows / concurrency) * latency``: the time the
requests alone take with ``concurrency`` in flight. Then the identical command runs
again: every answer is in the cache, so nothing is sent.

    .venv/bin/python -m bench.bench_judge_pipeline [--latency 0.5] [--concurrency 32] [--limit N]

Needs the shared data (RAG_EVAL_SHARED_DATA). Prints a markdown table with the load
average, since other jobs may share the machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script too: the local test server lives in tests/
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from harness.fake_answers import answer_text  # noqa: E402
from harness.openai_server import start_server  # noqa: E402
from rag_eval.config import shared_data_dir  # noqa: E402
from rag_eval.io.rows import iter_rows  # noqa: E402

KEEP = ("id", "question", "documents", "response", "documents_sentences", "response_sentences")


def write_rows(out: Path, limit: int | None) -> int:
    files = sorted((shared_data_dir() / "ragbench" / "parquet").glob("*/validation.parquet"))
    if not files:
        sys.exit(f"no RAGBench validation splits under {shared_data_dir()} (set RAG_EVAL_SHARED_DATA)")
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for path in files:
            for _, row in iter_rows(path):
                if isinstance(row, dict):
                    fh.write(json.dumps({k: row.get(k) for k in KEEP}, default=str) + "\n")
                    n += 1
                    if limit and n >= limit:
                        return n
    return n


STARTED: list[float] = []
CPU_S: list[float] = []  # CPU seconds of each command run (the child process and its children)


def run_cli(args: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "RAG_EVAL_BENCH_KEY": "test-key-not-real-123"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    STARTED.append(started)
    proc = subprocess.run([sys.executable, "-m", "rag_eval.cli", "judge", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_S.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return time.perf_counter() - started, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, start_server(latency_s=args.latency) as server:
        first_request: list[float] = []

        def handler(body: dict) -> str:
            if not first_request:
                first_request.append(time.perf_counter())
            return answer_text(body)

        server.set_handler(handler)
        src = Path(tmp) / "ragbench_validation.jsonl"
        n = write_rows(src, args.limit)
        common = [str(src), "--judge", "llm", "--model", "bench-model", "--base-url", server.base_url,
                  "--api-key-env", "RAG_EVAL_BENCH_KEY", "--concurrency", str(args.concurrency),
                  "--cache", str(Path(tmp) / "cache"), "--max-retries", "0"]
        first_s, first = run_cli([*common, "--out", str(Path(tmp) / "first.jsonl")])
        sent = server.request_count
        again_s, again = run_cli([*common, "--out", str(Path(tmp) / "again.jsonl")])
        sent_again = server.request_count - sent
        for proc in (first, again):
            if proc.returncode not in (0, 1):
                sys.exit(f"rag-eval judge failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        ok = sum(1 for line in (Path(tmp) / "first.jsonl").open() if '"status": "ok"' in line)
        same = (Path(tmp) / "first.jsonl").read_text().count('"status": "ok"') == \
            (Path(tmp) / "again.jsonl").read_text().count('"status": "ok"')
    startup_s = _startup()
    load_after = os.getloadavg()
    ideal = math.ceil(n / args.concurrency) * args.latency
    print(f"RAGBench validation rows: {n} (7 subsets); latency {args.latency} s; concurrency {args.concurrency}")
    print(f"load average (1/5/15 min) before: {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}; "
          f"after: {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} on {os.cpu_count()} cores\n")
    print("| run | wall s (start-up included) | rows/s | CPU s | CPU ms/row | requests | ideal s | fraction of ideal "
          "| target |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print(f"| first run | {first_s:.1f} | {n / first_s:.1f} | {CPU_S[0]:.2f} | {1000 * CPU_S[0] / n:.2f} | {sent} | "
          f"{ideal:.1f} | {ideal / first_s:.2f} | >= 0.95 |")
    print(f"| identical rerun (cached) | {again_s:.2f} | {n / again_s:.0f} | {CPU_S[1]:.2f} | {1000 * CPU_S[1] / n:.2f} "
          f"| {sent_again} | - | - | >= 2,000 rows/s |")
    print(f"\nrows ok: {ok}/{n}; rerun gives the same statuses: {same}; first request sent "
          f"{first_request[0] - STARTED[0]:.2f} s after the command started; "
          f"`rag-eval judge --help` start-up: {startup_s:.2f} s")


def _startup() -> float:
    t, _ = run_cli(["--help"])
    return t


if __name__ == "__main__":
    main()
