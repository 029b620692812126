"""Throughput of the LLM judge against the local OpenAI-compatible server.

The server answers every request after a fixed latency (default 200 ms) with a valid
judgement, so the only limits are our concurrency and our own overhead. The ideal
batch time is rows x latency / concurrency; we print rows/s and the share of ideal.
A second run over the same cache directory must finish with zero requests.

    .venv/bin/python bench/bench_llm_judge.py [--rows 500] [--latency 0.2] [--concurrency 16 32]

Prints a markdown table. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_eval.judges.llm import LLMJudge
from rag_eval.llm.config import LLMConfig
from rag_eval.schema import EvalItem
from rag_eval.text.sentences import item_from_row


class ServerProcess:
    """harness/openai_server.py in its own process, answering judge prompts."""

    def __init__(self, latency_s: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "harness" / "openai_server.py"), "--latency", str(latency_s),
             "--responder", "judge"],
            stdout=subprocess.PIPE, text=True,
        )
        self.base_url = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not self.base_url.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError("the test server did not start")

    @property
    def request_count(self) -> int:
        with urllib.request.urlopen(f"{self.base_url}/_stats", timeout=10) as resp:
            return json.load(resp)["chat_requests"]

    def cpu_seconds(self) -> float | None:
        """CPU time the server process has used (Linux /proc), None elsewhere."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def build_items(n: int) -> list[EvalItem]:
    """``n`` distinct items from the committed RAGBench sample rows (cycled, each
    question made unique so no two prompts share a cache entry)."""
    rows = [json.loads(line) for line in (ROOT / "tests/data/ragbench_sample.jsonl").read_text().splitlines() if line]
    items = []
    for i in range(n):
        row = dict(rows[i % len(rows)])
        row["id"] = f"bench-{i}"
        row["question"] = f"{row['question']} (variant {i})"
        items.append(item_from_row(row))
    return items


def run_once(items, base_url: str, concurrency: int, cache_dir: str, server) -> dict:
    config = LLMConfig(model="bench-model", base_url=base_url, concurrency=concurrency, cache_dir=cache_dir,
                       timeout_s=30, max_retries=2)
    judge = LLMJudge(config)
    before = server.request_count
    server_cpu = server.cpu_seconds()
    start, cpu = time.perf_counter(), time.process_time()
    results = judge.judge(items)
    elapsed = time.perf_counter() - start
    after_cpu = server.cpu_seconds()
    requests = server.request_count - before
    return {
        "server_cpu_ms_per_request": (after_cpu - server_cpu) / requests * 1000
        if server_cpu is not None and after_cpu is not None and requests else None,
        "elapsed": elapsed,
        "cpu_ms_per_row": (time.process_time() - cpu) / len(items) * 1000,
        "requests": requests,
        "statuses": Counter(r.status.value for r in results),
        "rows": len(results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 32])
    args = parser.parse_args()

    server = ServerProcess(args.latency)
    items = build_items(args.rows)
    with tempfile.TemporaryDirectory(prefix="bench-llm-warmup-") as warm:
        # Process start-up (imports, the TLS trust store) is measured here, not in the runs.
        startup = run_once(build_items(1), server.base_url, 1, warm, server)["elapsed"]
    print(f"LLM judge throughput: {args.rows} rows, server latency {args.latency * 1000:.0f} ms, "
          f"local OpenAI-compatible server (own process) at {server.base_url}; "
          f"one-off client start-up {startup:.2f} s (excluded below)\n")
    print("| concurrency | run | wall s | rows/s | ideal rows/s | % of ideal | requests | client CPU ms/row "
          "| server CPU ms/request | statuses |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    try:
        for concurrency in args.concurrency:
            with tempfile.TemporaryDirectory(prefix="bench-llm-cache-") as cache_dir:
                ideal_s = max(args.rows * args.latency / concurrency, 1e-9)
                for label in ("cold", "cached rerun"):
                    r = run_once(items, server.base_url, concurrency, cache_dir, server)
                    rate = r["rows"] / r["elapsed"]
                    pct = f"{100 * ideal_s / r['elapsed']:.0f}%" if label == "cold" else "n/a"
                    statuses = ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items()))
                    print(f"| {concurrency} | {label} | {r['elapsed']:.2f} | {rate:.1f} | "
                          f"{args.rows / ideal_s:.1f} | {pct} | {r['requests']} | {r['cpu_ms_per_row']:.2f} | "
                          f"{'n/a' if r['server_cpu_ms_per_request'] is None else format(r['server_cpu_ms_per_request'], '.2f')} | "
                          f"{statuses} |")
    finally:
        server.stop()
    load = os.getloadavg()
    print("\nideal = rows x latency / concurrency; '% of ideal' = ideal time / measured time; "
          f"client CPU = this process only (the server runs in its own). "
          f"{os.cpu_count()} CPUs, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min).")


if __name__ == "__main__":
    main()
