"""Batch page reruns on a large upload (Streamlit AppTest, no browser): the CPU time of the
rerun that reads and checks an uploaded file, and of the reruns a click causes after it
(plain rerun, another row limit, another run name), which reuse the rows and the check.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m bench.bench_batch_page [--rows 10000]

The rows are real RAGBench validation rows from the shared data (repeated with new ids
to reach ``--rows``). Figures are CPU time of this process (``time.process_time``), so
they hold on a loaded machine; the budget is the issue's 2 s for a page's content.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["RAG_EVAL_HOME"] = tempfile.mkdtemp(prefix="rag-eval-bench-batch-page-")

from streamlit.testing.v1 import AppTest  # noqa: E402

from rag_eval.config import shared_data_dir  # noqa: E402
from rag_eval.io.rows import iter_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "dashboard.py")
UPLOAD = "Upload a file (JSONL, CSV, Parquet)"
KEEP = ("question", "documents", "response")
BUDGET_S = 2.0


def ragbench_rows() -> list[dict]:
    files = sorted((shared_data_dir() / "ragbench" / "parquet").glob("*/validation.parquet"))
    if not files:
        sys.exit(f"no RAGBench validation splits under {shared_data_dir()} (set RAG_EVAL_SHARED_DATA)")
    return [{k: row.get(k) for k in KEEP} for path in files for _, row in iter_rows(path) if isinstance(row, dict)]


def jsonl(rows: list[dict], n: int) -> bytes:
    out = (json.dumps({"id": f"r{i}", **row}, default=str) for i, row in enumerate(islice(cycle(rows), n)))
    return ("\n".join(out) + "\n").encode("utf-8")


def cpu(step) -> float:
    started = time.process_time()
    step()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    content = jsonl(ragbench_rows(), args.rows)
    at = AppTest.from_file(APP, default_timeout=3600)
    at.run()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value(UPLOAD).run()
    first = cpu(lambda: at.file_uploader(key="batch.upload").set_value(("big.jsonl", content, "application/json")).run())
    if at.exception:
        sys.exit(f"the page failed: {[e.value for e in at.exception]}")
    usable = next(m.value for m in at.markdown if "rows are usable" in m.value)
    name_key = next(t.key for t in at.text_input if t.key and t.key.startswith("batch.name"))
    reruns = {
        "plain rerun": lambda: at.run(),
        "another row limit": lambda: at.number_input(key="batch.limit").set_value(args.rows // 2).run(),
        "another run name": lambda: at.text_input(key=name_key).input("renamed").run(),
        "all rows again": lambda: at.number_input(key="batch.limit").set_value(args.rows).run(),
    }
    print(f"Batch page, upload of {args.rows:,} RAGBench rows ({len(content) / 1e6:.1f} MB): {usable.split(';')[0]}")
    print(f"  upload (save, read, check)  {first:7.2f} s CPU")
    for label, step in reruns.items():
        took = cpu(step)
        print(f"  {label:<27} {took:7.2f} s CPU   ({took / first:.2f} of the first view; "
              f"{took / BUDGET_S:.2f} of the {BUDGET_S:.0f} s budget)")


if __name__ == "__main__":
    main()
