"""Datasets: format round trips, validation, the near-duplicate filter on real questions,
and synthetic-generation throughput against the local OpenAI-compatible server.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m bench.bench_datasets [--synth-n 40] [--latency 0.25]

1. Every shared RAGBench parquet row is imported, written and read back in each
   format: time, size, whether every row comes back identical, same fingerprint.
2. Validation throughput and what it finds in the real data.
3. The near-duplicate filter (MiniLM cosine, greedy) on the distinct questions of the
   RAGBench validation splits: the share of real, distinct questions each threshold
   would drop (a false-positive rate: none of them are duplicates by text).
4. ``synthesize_from_collection`` over the built-in demo collection, the LLM being the
   local test server with a fixed per-request latency (a stand-in for a provider;
   figures are about the client's concurrency and cache, not a model's speed).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script too: tests/ helpers
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAG_EVAL_HOME", str(Path(tempfile.gettempdir()) / "rag-eval-bench-datasets"))

from rag_eval.config import shared_data_dir
from rag_eval.datasets.fingerprint import fingerprint
from rag_eval.datasets.importers import import_ragbench
from rag_eval.datasets.io import (
    load_dataset,
    validate_file,
    write_dataset,
)


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def bench_formats(tmp: Path) -> list:
    files = sorted(glob.glob(str(shared_data_dir() / "ragbench" / "parquet" / "*" / "*.parquet")))
    if not files:
        raise SystemExit(f"no parquet files under {shared_data_dir() / 'ragbench' / 'parquet'}")
    result, seconds = timed(lambda: import_ragbench(files, prefix_subset=True))
    rows = result.rows
    print(f"## Formats ({len(rows)} RAGBench rows from {len(files)} parquet files)\n")
    print(f"import: {seconds:.2f} s ({len(rows) / seconds:,.0f} rows/s), {len(result.errors)} errors, "
          f"{len(result.issues) - len(result.errors)} warnings\n")
    records = [r.to_record() for r in rows]
    fp = fingerprint(rows)
    print("| format | write s | read+validate s | rows/s read | size MB | lossless | same fingerprint |")
    print("|---|---:|---:|---:|---:|---|---|")
    for fmt in ("jsonl", "json", "csv", "parquet"):
        path = tmp / f"ragbench.{fmt}"
        _, write_s = timed(lambda: write_dataset(rows, path))
        loaded, read_s = timed(lambda: load_dataset(path))
        same = [r.to_record() for r in loaded.rows] == records
        print(f"| {fmt} | {write_s:.2f} | {read_s:.2f} | {len(loaded.rows) / read_s:,.0f} | "
              f"{path.stat().st_size / 1e6:.1f} | {'yes' if same else 'NO'} | {'yes' if fingerprint(loaded.rows) == fp else 'NO'} |")
    _, fp_s = timed(lambda: fingerprint(rows))
    print(f"\nfingerprint: {fp_s * 1000:.0f} ms for {len(rows)} rows\n")
    return rows


def bench_validation(tmp: Path) -> None:
    print("## Validation of the raw RAGBench files (what the real data holds)\n")
    print("| file | rows | s | errors | warnings | kinds |")
    print("|---|---:|---:|---:|---:|---|")
    for path in sorted(glob.glob(str(shared_data_dir() / "ragbench" / "parquet" / "*" / "*.parquet"))):
        issues, seconds = timed(lambda: validate_file(path))
        rows = len(load_dataset(path).rows)
        kinds = Counter(re.sub(r"'[^']*'|\d+[a-z]*|: .*", "", i.message).strip() for i in issues)
        label = "/".join(Path(path).parts[-2:])
        errors = sum(i.severity.value == "error" for i in issues)
        print(f"| {label} | {rows} | {seconds:.2f} | {errors} | {len(issues) - errors} | "
              f"{'; '.join(f'{k} ×{v}' for k, v in kinds.most_common(3)) or '-'} |")
    print()


def bench_dedupe(rows) -> None:
    from rag_eval.datasets.schema import DatasetRow
    from rag_eval.encoders.embedder import Embedder
    from rag_eval.synth import drop_near_duplicates

    questions = list(dict.fromkeys(r.question.strip() for r in rows if "validation" in str(r.extras.get("dataset_name", ""))))
    unique_rows = [DatasetRow(id=str(i), question=q) for i, q in enumerate(questions)]
    embedder = Embedder()
    _, embed_s = timed(lambda: embedder.encode(questions))
    print(f"## Near-duplicate filter on {len(questions)} distinct real questions (RAGBench validation splits)\n")
    print(f"embedding: {embed_s:.1f} s ({len(questions) / embed_s:,.0f} questions/s, MiniLM on CPU, then cached)\n")
    print("| threshold | dropped | share of distinct questions dropped | filter s |")
    print("|---:|---:|---:|---:|")
    for threshold in (0.8, 0.85, 0.9, 0.95):
        (kept, dropped), seconds = timed(lambda: drop_near_duplicates(unique_rows, embedder.encode, threshold))
        print(f"| {threshold} | {len(dropped)} | {len(dropped) / len(questions):.1%} | {seconds:.2f} |")
    (_, dropped), _ = timed(lambda: drop_near_duplicates(unique_rows, embedder.encode, 0.9))
    print("\nexamples dropped at 0.9:")
    for row, why in dropped[:4]:
        print(f"- {row.question!r}: {why}")
    print()


def scripted(request_json):
    """Well-formed replies for every question type; the judge accepts every answer."""
    system = request_json["messages"][0]["content"]
    user = request_json["messages"][-1]["content"]
    if "annotator" in system:
        doc_keys = re.findall(r"^(\d+[a-z]+): ", user, re.M)
        resp = re.findall(r"^([a-z]+): ", user, re.M)
        return json.dumps({"all_relevant_sentence_keys": doc_keys[:1], "overall_supported": True,
                           "sentence_support_information": [{"response_sentence_key": k, "supporting_sentence_keys": doc_keys[:1],
                                                             "fully_supported": True} for k in resp],
                           "all_utilized_sentence_keys": doc_keys[:1]})
    given = dict(re.findall(r"\[(C\d)\][^\n]*\n([^\n]+)", user))
    words = given["C1"].split()
    question = "What does the manual say about " + " ".join(words[3:9]) + "?"
    support = ["C1", "C2"] if "Cite both" in user else ([] if "does not answer" in user else ["C1"])
    return json.dumps({"question": question, "answer": " ".join(words[:12]), "supporting_chunks": support,
                       "difficulty": "medium"})


def bench_synth(n: int, latency: float) -> None:
    from harness.openai_server import start_server
    from rag_eval.demo import DEMO_COLLECTION, ensure_demo_collection
    from rag_eval.llm.config import LLMConfig
    from rag_eval.synth import SynthOptions, make_answer_judge, synthesize_from_collection

    ensure_demo_collection()
    server = start_server(latency_s=latency)
    server.set_handler(scripted)
    print(f"## Synthetic generation: n={n} over the demo collection, local server with {latency:.2f} s per request\n")
    print("| concurrency | judge | cache | s | questions/s | kept | dropped (by stage) | requests |")
    print("|---:|---|---|---:|---:|---:|---|---:|")
    cache_dir = Path(tempfile.mkdtemp(prefix="synth-cache-"))
    try:
        for concurrency, judge_kind, cache in ((1, "none", "cold"), (8, "none", "cold"), (8, "none", "warm"),
                                               (8, "llm", "cold")):
            llm = LLMConfig(model="test-model", base_url=server.base_url, concurrency=concurrency,
                            cache_dir=cache_dir / f"{judge_kind}-{concurrency}" if cache == "cold" else cache_dir / "none-8")
            judge = make_answer_judge(judge_kind, llm)
            before = server.request_count
            result, seconds = timed(lambda: synthesize_from_collection(DEMO_COLLECTION, SynthOptions(n=n, seed=1), llm, judge=judge))
            s = result.summary()
            stages = ", ".join(f"{k} {v}" for k, v in sorted(s["dropped_by_stage"].items())) or "-"
            print(f"| {concurrency} | {judge_kind} | {cache} | {seconds:.1f} | {n / seconds:.1f} | {s['kept']} | {stages} | "
                  f"{server.request_count - before} |")
    finally:
        server.stop()
    print("\n(seconds include sampling, Qdrant neighbour queries, the MiniLM near-duplicate filter and, for llm, the judge calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth-n", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--skip-synth", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = bench_formats(Path(tmp))
        bench_validation(Path(tmp))
        bench_dedupe(rows)
    if not args.skip_synth:
        bench_synth(args.synth_n, args.latency)


if __name__ == "__main__":
    main()
