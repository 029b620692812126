"""A guard against the next silent slowdown: CPU time of the hot paths against their
committed baselines (``bench/baselines.json``), run by ``make test`` before pytest.

Four paths, each in a fresh child process, measured as the CPU time (user + system)
of that process and its own children (``getrusage(RUSAGE_CHILDREN)``), not wall time:
CPU time moves far less than wall time when other jobs share the machine.

- ``help``: ``rag-eval --help`` (CPU s, median of 3);
- ``local_judge``: ``rag-eval judge ROWS --judge local`` (CPU ms per row, start-up included, median of 3);
- ``cached_rerun``: ``rag-eval judge ROWS --judge llm`` again over a full cache (CPU ms per
  row; the first run, against the local OpenAI-compatible server, fills the cache);
- ``ingest``: ingest of the committed documents ``tests/data/docs/*.html`` (CPU ms per chunk).

ROWS are about 100 RAGBench validation rows (15 per subset) from the shared data when
present, else the committed samples under ``tests/data``; each source has its own
baseline. What is timed never includes exporting a model: a warm-up run comes first
(the exported models are kept in the data directory, as a user's are).

A figure above ``FACTOR`` times its baseline fails the guard (exit 1). Baselines change
deliberately, in the commit that changes a path: ``python -m bench.guard --update``
rewrites the measured entries (docs/benchmarks.md, "The guard").

    .venv/bin/python -m bench.guard [--update] [--only help,ingest]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BASELINES = ROOT / "bench" / "baselines.json"
FACTOR = 1.5
ROWS_PER_SUBSET = 15
KEEP = ("id", "question", "documents", "response", "documents_sentences", "response_sentences")
DOCS = sorted((ROOT / "tests" / "data" / "docs").glob("*.html"))


def child_cpu(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """(CPU seconds of ``command`` and its children, its stdout); raises when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: some row failed its gate, still a timed run
        raise RuntimeError(f"{' '.join(command[:4])}... failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def write_rows(out: Path) -> str:
    """About 100 real rows into ``out``; returns the source's name (baselines are per source)."""
    from rag_eval.config import shared_data_dir
    from rag_eval.io.rows import iter_rows

    rows: list[dict] = []
    source = "shared"
    files = sorted((shared_data_dir() / "ragbench" / "parquet").glob("*/validation.parquet"))
    for path in files:
        taken = 0
        for _, row in iter_rows(path):
            if isinstance(row, dict) and taken < ROWS_PER_SUBSET:
                rows.append({k: row.get(k) for k in KEEP})
                taken += 1
    if not rows:
        source = "fixture"
        for path in (ROOT / "tests" / "data" / "ragbench_sample.jsonl", ROOT / "tests" / "data" / "ragbench_msmarco_24.jsonl"):
            rows += [r for _, r in iter_rows(path) if isinstance(r, dict)]
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)) + "\n")
    return source


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "rag_eval.cli", *args]


def measure_help(env: dict[str, str], tmp: Path) -> float:
    child_cpu(cli("--help"), env)  # .pyc files and the page cache
    return statistics.median(child_cpu(cli("--help"), env)[0] for _ in range(3))


def measure_local_judge(env: dict[str, str], tmp: Path) -> float:
    rows = tmp / "rows.jsonl"
    n = sum(1 for _ in rows.open())
    warm = tmp / "warm.jsonl"
    warm.write_text("".join(rows.read_text().splitlines(keepends=True)[:2]))
    child_cpu(cli("judge", str(warm), "--judge", "local", "--out", str(tmp / "warm-out.jsonl")), env)  # exports the model
    # One process: the CPU of worker processes would not be the child's (and per row it is the same work).
    # The median of three: single runs of the same code read 32.7-37.9 ms/row on one idle machine.
    command = cli("judge", str(rows), "--judge", "local", "--workers", "1", "--out", str(tmp / "local.jsonl"))
    return 1000 * statistics.median(child_cpu(command, env)[0] for _ in range(3)) / n


def measure_cached_rerun(env: dict[str, str], tmp: Path) -> float:
    from harness.fake_answers import answer_text
    from harness.openai_server import start_server

    rows = tmp / "rows.jsonl"
    n = sum(1 for _ in rows.open())
    with start_server(latency_s=0.0) as server:
        server.set_handler(answer_text)
        common = [str(rows), "--judge", "llm", "--model", "guard-model", "--base-url", server.base_url,
                  "--concurrency", "32", "--cache", str(tmp / "llm-cache"), "--max-retries", "0"]
        child_cpu(cli("judge", *common, "--out", str(tmp / "first.jsonl")), env)
        sent = server.request_count
        cpu, _ = child_cpu(cli("judge", *common, "--out", str(tmp / "again.jsonl")), env)
        if server.request_count != sent:
            raise RuntimeError(f"the cached rerun sent {server.request_count - sent} request(s)")
    return 1000 * cpu / n


INGEST = """
import sys
from rag_eval.rag.config import default_config
from rag_eval.rag.ingest import ingest_paths
report = ingest_paths(sys.argv[2:], sys.argv[1], default_config())
print(report.chunks_added)
"""


def measure_ingest(env: dict[str, str], tmp: Path) -> float:
    child_cpu([sys.executable, "-c", INGEST, "warm", str(DOCS[0])], env)  # exports the model
    cpu, out = child_cpu([sys.executable, "-c", INGEST, "guard", *map(str, DOCS)], env)
    return 1000 * cpu / max(1, int(out.strip().splitlines()[-1]))


PATHS: dict[str, tuple[str, Callable[[dict[str, str], Path], float], bool]] = {
    # name: (unit, measure, baseline depends on the rows' source)
    "help": ("CPU s", measure_help, False),
    "local_judge": ("CPU ms/row", measure_local_judge, True),
    "cached_rerun": ("CPU ms/row", measure_cached_rerun, True),
    "ingest": ("CPU ms/chunk", measure_ingest, False),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="write the measured figures as the new baselines")
    parser.add_argument("--only", default="", help="comma-separated paths (default: all)")
    args = parser.parse_args()
    names = [n for n in PATHS if not args.only or n in args.only.split(",")]
    baselines = json.loads(BASELINES.read_text()) if BASELINES.exists() else {}
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rag-eval-guard-") as name:
        tmp = Path(name)
        home = tmp / "home"
        home.mkdir()
        from rag_eval.config import data_dir

        models = data_dir() / "models"  # the user's exported models: exported once, kept
        models.mkdir(parents=True, exist_ok=True)
        (home / "models").symlink_to(models, target_is_directory=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "RAG_EVAL_HOME": str(home)}
        source = write_rows(tmp / "rows.jsonl")
        measured = {n: PATHS[n][1](env, tmp) for n in names}
    print(f"bench.guard: rows from {source}; {os.cpu_count()} cores; load average (1 min) {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after; {time.perf_counter() - started:.0f} s\n")
    print(f"| path | unit | measured | baseline | ratio | limit {FACTOR}x |")
    print("|---|---|---:|---:|---:|---|")
    failed = []
    for n in names:
        unit, _, per_source = PATHS[n]
        entry = baselines.get(n)
        base = entry.get(source) if per_source and isinstance(entry, dict) else entry
        ratio = measured[n] / base if isinstance(base, (int, float)) and base > 0 else None
        verdict = "no baseline" if ratio is None else ("ok" if ratio <= FACTOR else "SLOWER")
        if ratio is not None and ratio > FACTOR:
            failed.append(n)
        print(f"| {n} | {unit} | {measured[n]:.3g} | {base if base is not None else '-'} | "
              f"{f'{ratio:.2f}' if ratio is not None else '-'} | {verdict} |")
        if args.update:
            value = round(measured[n], 4)
            baselines[n] = {**(entry if isinstance(entry, dict) else {}), source: value} if per_source else value
    if args.update:
        BASELINES.write_text(json.dumps(baselines, indent=2, sort_keys=True) + "\n")
        print(f"\nwrote {BASELINES.relative_to(ROOT)}")
    elif failed:
        sys.exit(f"\nslower than {FACTOR}x the committed baseline: {', '.join(failed)} "
                 "(a deliberate change updates bench/baselines.json: python -m bench.guard --update)")


if __name__ == "__main__":
    main()
