"""Trace import throughput vs the local judge: importing must never be the slow part.

A real Phoenix server (``phoenix serve`` from ``.venv-phoenix``, ``make phoenix-deps``) is
started in a temporary folder; the traced test application (harness/traced_app.py) sends
N small RAG traces (chain + retriever spans, the shape the OpenInference instrumentations write)
over OTLP/HTTP and writes the same spans to an OTLP JSON file. Then:

- **OTLP file**: ``import_files`` on that file (parse, group, map) -> traces/s;
- **Phoenix**: ``import_phoenix`` paging the REST API (1,000 spans a page) -> traces/s;
- **local judge**: the local judge on a sample of the imported rows -> rows/s.

Target: each import at least 10x the local judge's rows/s.

    .venv/bin/python -m bench.bench_traces [--traces 10000] [--judge-sample 300]

Phoenix's own ingestion of N traces takes minutes on a busy machine (it is not measured).
Prints a markdown table with the load average, since other jobs may share the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script too: the test fixtures live in tests/
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_eval.traces.importer import import_files, import_phoenix  # noqa: E402
from rag_eval.traces.phoenix import PhoenixClient  # noqa: E402


def local_judge_rate(rows: list[dict], sample: int) -> tuple[float, int]:
    from rag_eval.judges.registry import make_judge
    from rag_eval.runs.prepare import prepare_row

    items = [p.item for p in (prepare_row(r, i + 1) for i, r in enumerate(rows[:sample])) if p.item is not None]
    judge = make_judge("local")
    list(judge.judge(items[:5]))  # load the model first: a warm judge is what a batch sees
    start = time.perf_counter()
    results = list(judge.judge(items))
    seconds = time.perf_counter() - start
    return len(results) / seconds, len(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--judge-sample", type=int, default=300)
    args = parser.parse_args()

    import pytest

    from harness import phoenix as fixtures
    from harness.openai_server import start_server

    with tempfile.TemporaryDirectory(prefix="bench-traces-") as tmp:
        try:
            with fixtures.running_phoenix(Path(tmp)) as phoenix:
                openai = start_server()
                project = "bench-traces"
                t0 = time.perf_counter()
                run = fixtures.run_traced_app(phoenix, openai.base_url, Path(tmp) / "spans.jsonl", project,
                                              args.traces)
                openai.stop()
                sent_s = time.perf_counter() - t0
                fixtures.wait_for_traces(phoenix, project, len(run.kinds), timeout_s=300)
                ingest_s = time.perf_counter() - t0

                start = time.perf_counter()
                from_file = import_files([run.otlp_file])
                file_s = time.perf_counter() - start

                with PhoenixClient(phoenix.url) as client:
                    start = time.perf_counter()
                    from_phoenix = import_phoenix(client, project, page_size=1000)
                    phoenix_s = time.perf_counter() - start
        except pytest.fail.Exception as err:
            sys.exit(str(err))

    judge_rate, judged = local_judge_rate([r for r in from_file.rows if "response" in r], args.judge_sample)
    file_rate = from_file.summary.traces / file_s
    phoenix_rate = from_phoenix.summary.traces / phoenix_s
    load = os.getloadavg()
    print(f"\n{from_file.summary.traces} traces ({sum(from_phoenix.pages)} spans in {len(from_phoenix.pages)} pages); "
          f"the app sent them in {sent_s:.1f} s, Phoenix had ingested them after {ingest_s:.1f} s; "
          f"load average {load[0]:.1f} / {load[1]:.1f}\n")
    print("| step | traces (rows) | seconds | per second | x local judge |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| import OTLP JSON file | {from_file.summary.traces} | {file_s:.2f} | {file_rate:,.0f} | "
          f"{file_rate / judge_rate:,.0f}x |")
    print(f"| import from Phoenix (REST, 1,000 spans/page) | {from_phoenix.summary.traces} | {phoenix_s:.2f} | "
          f"{phoenix_rate:,.0f} | {phoenix_rate / judge_rate:,.0f}x |")
    print(f"| local judge (warm, {judged} rows) | {judged} | {judged / judge_rate:.2f} | {judge_rate:,.1f} | 1x |")
    slow = [name for name, rate in (("OTLP file", file_rate), ("Phoenix", phoenix_rate)) if rate < 10 * judge_rate]
    print("\ntarget (each import >= 10x the local judge): " + ("met" if not slow else f"NOT met by {', '.join(slow)}"))


if __name__ == "__main__":
    main()
