"""Trace import throughput, the client's CPU apart from Phoenix's: importing must never be the slow part.

A real Phoenix server (``phoenix serve`` from ``.venv-phoenix``, ``make phoenix-deps``) is
started in a temporary folder; the traced test application (harness/traced_app.py) sends
N small RAG traces (chain + retriever spans, the shape the OpenInference instrumentations write)
over OTLP/HTTP and writes the same spans to an OTLP JSON file. Then, each measured ``--repeat``
times (the best run is shown, the machine being shared):

- **OTLP file**: ``import_files`` on that file (parse, group, map) and ``write_rows`` -> traces/s;
- **Phoenix**: ``import_phoenix`` paging the REST API and ``write_rows`` (what ``rag-eval traces
  import --phoenix`` does) -> traces/s of wall time, of this process's CPU (the client:
  ``time.process_time``) and of the Phoenix process's CPU (the server: utime + stime of
  ``/proc/<pid>/stat``), and one phase split of the client's CPU: HTTP + JSON decoding, spans
  (``phoenix_span``), mapping, writing;
- **local judge** (``--judge-sample``, 0 to skip): the local judge on a sample of the rows -> rows/s.

Targets (issue 35, item 7): >= 1,000 traces/s and >= 10x the local judge.

    .venv/bin/python -m bench.bench_traces [--traces 10000] [--page-size 1000] [--repeat 3] [--profile]

Phoenix's own ingestion of N traces takes minutes on a busy machine (it is not measured). CPU
seconds are the primary figures (wall time is disturbed by other work; the load average is printed).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script too: the test fixtures live in tests/
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_eval.io.rows import write_rows  # noqa: E402
from rag_eval.traces.importer import import_files, import_phoenix, map_spans  # noqa: E402
from rag_eval.traces.phoenix import PhoenixClient  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads, waited-for children) of another process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
    return (utime + stime + cutime + cstime) / TICKS


@dataclass
class Measured:
    traces: int
    wall_s: float
    client_s: float
    server_s: float

    def rate(self, seconds: float) -> float:
        return self.traces / seconds if seconds > 0 else float("inf")


def measure(step: Any, server_pid: int | None) -> tuple[Measured, Any]:
    server0 = process_cpu_s(server_pid) if server_pid else 0.0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    traces, result = step()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    server = process_cpu_s(server_pid) - server0 if server_pid else 0.0
    return Measured(traces, wall, cpu, server), result


def best(runs: list[Measured]) -> Measured:
    return min(runs, key=lambda m: m.client_s + m.server_s)


def phases(client: PhoenixClient, project: str, page_size: int, out: Path) -> dict[str, float]:
    """Client CPU seconds per phase of one import (the same work as import_phoenix, taken apart)."""
    from rag_eval.traces.files import phoenix_span

    split: dict[str, float] = {}
    t = time.process_time()
    raw: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": page_size, **({"cursor": cursor} if cursor else {})}
        body = client._request("GET", f"/v1/projects/{project}/spans", params=params) or {}
        raw.extend(body.get("data") or [])
        cursor = body.get("next_cursor")
        if not cursor:
            break
    split["HTTP + JSON decoding"] = time.process_time() - t
    t = time.process_time()
    spans = [s for s in (phoenix_span(r) for r in raw) if s is not None]
    split["spans (phoenix_span)"] = time.process_time() - t
    t = time.process_time()
    rows = [m.row for m in map_spans(spans, source="phoenix", project=project)]
    split["mapping (group + map_trace)"] = time.process_time() - t
    t = time.process_time()
    write_rows(rows, out)
    split["writing (write_rows .jsonl)"] = time.process_time() - t
    return split


def local_judge_rate(rows: list[dict], sample: int) -> tuple[float, int]:
    from rag_eval.judges.factory import build_judge
    from rag_eval.runs.prepare import prepare_row

    items = [p.item for p in (prepare_row(r, i + 1) for i, r in enumerate(rows[:sample])) if p.item is not None]
    judge = build_judge("local")
    list(judge.judge(items[:5]))  # load the model first: a warm judge is what a batch sees
    start = time.perf_counter()
    results = list(judge.judge(items))
    seconds = time.perf_counter() - start
    return len(results) / seconds, len(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--judge-sample", type=int, default=300)
    parser.add_argument("--profile", action="store_true", help="print the client's cProfile (top 25, own time)")
    parser.add_argument("--workdir", type=Path,
                        help="Phoenix's working directory, kept: a later run with the same one measures the "
                             "traces stored there instead of sending new ones (Phoenix ingests slowly)")
    args = parser.parse_args()

    import pytest

    from harness import phoenix_server as fixtures
    from harness.openai_server import start_server

    file_runs: list[Measured] = []
    phoenix_runs: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="bench-traces-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        out = Path(tmp) / "rows.jsonl"
        otlp = work / "spans.jsonl"
        try:
            with fixtures.running_phoenix(work) as phoenix:
                project = "bench-traces"
                t0 = time.perf_counter()
                if args.workdir and otlp.exists():
                    sent_s = ingest_s = float("nan")  # measured on the stored traces
                else:
                    openai = start_server()
                    run = fixtures.run_traced_app(phoenix, openai.base_url, otlp, project, args.traces)
                    openai.stop()
                    sent_s = time.perf_counter() - t0
                    fixtures.wait_for_traces(phoenix, project, len(run.kinds), timeout_s=300)
                    ingest_s = time.perf_counter() - t0
                pid = phoenix.process.pid

                def from_file() -> tuple[int, Any]:
                    result = import_files([otlp])
                    write_rows(result.rows, out)
                    return result.summary.traces, result

                def from_phoenix() -> tuple[int, Any]:
                    with PhoenixClient(phoenix.url) as client:
                        result = import_phoenix(client, project, page_size=args.page_size)
                    write_rows(result.rows, out)
                    return result.summary.traces, result

                for _ in range(args.repeat):
                    measured, file_result = measure(from_file, None)
                    file_runs.append(measured)
                    measured, phoenix_result = measure(from_phoenix, pid)
                    phoenix_runs.append(measured)
                with PhoenixClient(phoenix.url) as client:
                    split = phases(client, project, args.page_size, out)
                if args.profile:
                    profiler = cProfile.Profile()
                    profiler.runcall(from_phoenix)
                    text = io.StringIO()
                    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
                    print(text.getvalue())
        except pytest.fail.Exception as err:
            sys.exit(str(err))

    judge_rate, judged = (local_judge_rate([r for r in file_result.rows if "response" in r], args.judge_sample)
                          if args.judge_sample else (0.0, 0))
    f, p = best(file_runs), best(phoenix_runs)
    load = os.getloadavg()
    pages = phoenix_result.pages
    sent = ("stored by an earlier run (--workdir)" if sent_s != sent_s else
            f"the app sent them in {sent_s:.1f} s, Phoenix had ingested them after {ingest_s:.1f} s")
    print(f"\n{p.traces} traces ({sum(pages)} spans in {len(pages)} pages of {args.page_size}), {sent}; best of "
          f"{args.repeat}; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (2 cores)\n")
    print("| import | traces | wall s | client CPU s | server CPU s | traces/s (wall) | traces/s (client CPU) "
          "| traces/s (server CPU) | traces/s (client + server CPU) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, m in (("OTLP JSON file -> rows.jsonl", f), ("Phoenix REST -> rows.jsonl", p)):
        server = f"{m.server_s:.2f}" if name.startswith("Phoenix") else "-"
        server_rate = f"{m.rate(m.server_s):,.0f}" if name.startswith("Phoenix") else "-"
        print(f"| {name} | {m.traces:,} | {m.wall_s:.2f} | {m.client_s:.2f} | {server} | {m.rate(m.wall_s):,.0f} | "
              f"{m.rate(m.client_s):,.0f} | {server_rate} | {m.rate(m.client_s + m.server_s):,.0f} |")
    total = sum(split.values())
    print("\n| client phase (one Phoenix import) | CPU s | share | traces/s of this phase alone |")
    print("| --- | ---: | ---: | ---: |")
    for name, seconds in split.items():
        print(f"| {name} | {seconds:.2f} | {seconds / total:.0%} | {p.traces / seconds:,.0f} |")
    if judged:
        print(f"\nlocal judge (warm, {judged} rows): {judge_rate:,.1f} rows/s; Phoenix import (client CPU) = "
              f"{p.rate(p.client_s) / judge_rate:,.0f}x, (wall) = {p.rate(p.wall_s) / judge_rate:,.0f}x")
    verdict = "met" if p.rate(p.client_s) >= 1000 else "NOT met"
    print(f"\ntarget >= 1,000 traces/s of client CPU: {verdict}; wall: {p.rate(p.wall_s):,.0f} traces/s")


if __name__ == "__main__":
    main()
