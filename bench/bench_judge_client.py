"""Client time of ``rag-eval judge --judge llm`` per row on RAGBench rows, cold and with a
warm cache, and the share of it spent splitting sentences.

The rows go through the same path as the command (read the file, build items, judge
over HTTP, parse, score, output rows) against the local OpenAI-compatible server, which
answers every prompt at once with the row's own RAGBench labels: what is timed is the
client. Rows are judged twice with the same cache directory (cold, then warm), both
with RAGBench's own sentences and with the sentences stripped (so every document and
response is split here). The splitting share is measured with cProfile on the cold run.

    nice .venv/bin/python bench/bench_judge_client.py [--rows 805]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.bench_judge_replay import label_answer  # noqa: E402
from harness.openai_server import start_server  # noqa: E402
from rag_eval.config import shared_data_dir  # noqa: E402
from rag_eval.io.rows import RowError, iter_rows  # noqa: E402
from rag_eval.judges.llm import LLMJudge  # noqa: E402
from rag_eval.llm.config import LLMConfig  # noqa: E402
from rag_eval.runs.engine import evaluate  # noqa: E402
from rag_eval.runs.sinks import MemorySink  # noqa: E402
from rag_eval.runs.sources import RowsSource  # noqa: E402

SPLIT_FILE = str(ROOT / "rag_eval" / "text" / "sentences.py")


def _rows(limit: int) -> list[dict]:
    rows: list[dict] = []
    for path in sorted((shared_data_dir() / "ragbench" / "parquet").glob("*/validation.parquet")):
        rows += [r for _, r in iter_rows(path) if not isinstance(r, RowError)]
    return rows[:limit]


def _split_seconds(profile: cProfile.Profile) -> float:
    stats = pstats.Stats(profile)
    return sum(v[3] for k, v in stats.stats.items()  # type: ignore[attr-defined]
               if k[0] == SPLIT_FILE and k[2] in ("split_sentences", "split_blocks"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=805)
    args = parser.parse_args()
    rows = _rows(args.rows)
    answers = {str(r["question"]): label_answer(r) for r in rows}
    server = start_server()
    server.set_handler(lambda body: answers[json.loads(body["messages"][1]["content"].split("\n")[2])])
    print(f"{len(rows)} RAGBench rows, local OpenAI-compatible server answering at once\n")
    print("| rows | run | seconds | ms/row | of which sentence splitting |")
    print("| --- | --- | ---: | ---: | ---: |")
    try:
        for variant in ("with RAGBench's sentences", "sentences stripped (split here)"):
            with tempfile.TemporaryDirectory() as tmp:
                data = Path(tmp) / "rows.jsonl"
                keep = variant.startswith("with")
                with data.open("w", encoding="utf-8") as fh:
                    for r in rows:
                        row = dict(r) if keep else {k: v for k, v in r.items()
                                                   if k not in ("documents_sentences", "response_sentences")}
                        fh.write(json.dumps(row, default=lambda v: v.tolist()) + "\n")
                judge = LLMJudge(LLMConfig(model="bench", base_url=server.base_url, cache_dir=str(Path(tmp) / "c"),
                                           max_retries=0, timeout_s=30.0))
                for run in ("cold", "warm cache"):
                    profile = cProfile.Profile()
                    started = time.perf_counter()
                    profile.enable()
                    sink = MemorySink()
                    evaluate(RowsSource(path=data), judge, sink, config="clean")
                    out = sink.records
                    profile.disable()
                    seconds = time.perf_counter() - started
                    split = _split_seconds(profile)
                    print(f"| {variant} ({len(out)}) | {run} | {seconds:.1f} | {1000 * seconds / len(out):.1f} | "
                          f"{split:.2f} s ({100 * split / seconds:.1f}%) |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
