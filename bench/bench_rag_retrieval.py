"""Retrieval benchmark on the shared RAGBench BEIR collection
(../shared/data/ragbench/retrieval: 2,742 documents, 823 queries of which 818 have a
relevant document, qrels from GPT-4 labels), through the pipeline's own ingestion and
retrieval (``bench/bench_retrieval.py`` is the metrics package's benchmark).

Ingests the corpus once into an embedded on-disk Qdrant (default /tmp/rag-eval-bench/qdrant;
a rerun finds every document unchanged and skips embedding), prints the ingestion speed,
then runs every query in dense, BM25 and hybrid mode and prints recall@5, nDCG@10, MRR@10
and the per-query latency (p50/p95, query embedding included) as a markdown table.

Chunks are mapped to their documents (best chunk per document) before scoring, since
the qrels judge documents.

    nice -n 10 .venv/bin/python bench/bench_rag_retrieval.py [--limit N] [--fresh] [--store DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # figures appear as they are measured

from rag_eval.config import shared_data_dir
from rag_eval.metrics.retrieval import ndcg_at_k, recall_at_k, reciprocal_rank
from rag_eval.rag.config import RagConfig, default_config
from rag_eval.rag.embedders import make_embedder
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.retrieve import retrieve
from rag_eval.rag.store import VectorStore, open_qdrant

COLLECTION = "ragbench-retrieval"
CANDIDATE_CHUNKS = 20  # chunks fetched per query, deduplicated to documents, cut at 10


def load_queries(root: Path, limit: int | None) -> tuple[list[dict], dict[str, set[str]]]:
    with (root / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    qrels: dict[str, set[str]] = {}
    with (root / "qrels" / "qrels.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if float(row["score"]) > 0:
                qrels.setdefault(row["query-id"], set()).add(row["corpus-id"])
    queries = [q for q in queries if q["_id"] in qrels]
    return (queries[:limit] if limit else queries), qrels


def store_and_config(args: argparse.Namespace) -> tuple[VectorStore, RagConfig]:
    """The embedded store at ``--store`` (emptied first with ``--fresh``) and the default
    configuration with ``--embedder-model`` (the retrieval benchmarks' common options)."""
    if args.fresh and Path(args.store).exists():
        shutil.rmtree(args.store)
    base = default_config("bench")
    if args.embedder_model:
        base = base.with_changes(**{"embedder.model": args.embedder_model})
    return open_qdrant(path=args.store), base


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="Only the first N queries (the corpus is always complete).")
    parser.add_argument("--fresh", action="store_true", help="Delete the cached collection and ingest again.")
    parser.add_argument("--store", default="/tmp/rag-eval-bench/qdrant", help="Embedded Qdrant folder.")
    parser.add_argument("--embedder-model", default=None,
                        help="The pipeline's embedder model, e.g. all-MiniLM-L6-v2-int8 (default: the configuration's).")
    args = parser.parse_args()

    root = shared_data_dir() / "ragbench" / "retrieval"
    if not (root / "corpus.jsonl").is_file():
        sys.exit(f"shared retrieval collection not found under {root} (set RAG_EVAL_SHARED_DATA)")
    client, base = store_and_config(args)

    shown = [-1]

    def progress(done: int, total: int) -> None:
        decile = 10 * done // total if total else 10
        if decile > shown[0]:
            shown[0] = decile
            print(f"ingest: {done}/{total} documents", file=sys.stderr, flush=True)

    cpu = time.process_time()
    report = ingest_paths([root / "corpus.jsonl"], COLLECTION, base, client=client, progress=progress)
    ingest_cpu = time.process_time() - cpu
    print(f"## Ingestion ({platform.machine()}, {os.cpu_count()} cores, embedder {base.embedder.model}, "
          f"chunking {base.chunking.strategy} {base.chunking.size}/{base.chunking.overlap})\n")
    print("| documents added | unchanged | chunks written | seconds | chunks/s | CPU ms per chunk | load (1 min) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {report.documents_added} | {report.documents_unchanged} | {report.chunks_added} | "
          f"{report.seconds:.1f} | {report.chunks_per_second:.1f} | "
          f"{1000 * ingest_cpu / max(report.chunks_added, 1):.1f} | {os.getloadavg()[0]:.2f} |")
    if report.chunks_added == 0:
        print("\n(collection cached from an earlier run: nothing embedded; use --fresh to time ingestion)")
    if report.errors:
        print(f"\n{len(report.errors)} ingestion problems, first: {report.errors[0]}")

    queries, qrels = load_queries(root, args.limit)
    retrieve("warm up", COLLECTION, base, client=client)  # load the model outside the timings
    print(f"\n## Retrieval over {len(queries)} queries (document level; latency per query, embedding included)\n")
    print("| mode | recall@5 | nDCG@10 | MRR@10 | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode in ("dense", "bm25", "hybrid"):
        config = base.with_changes(**{"retrieval.mode": mode, "retrieval.k": CANDIDATE_CHUNKS})
        recalls, ndcgs, mrrs, latencies = [], [], [], []
        embedder = make_embedder(config.embedder)
        if hasattr(embedder, "clear"):
            embedder.clear()  # every mode embeds its queries afresh: no mode rides on another's cache
        for q in queries:
            started = time.perf_counter()
            chunks = retrieve(q["text"], COLLECTION, config, client=client)
            latencies.append((time.perf_counter() - started) * 1000)
            ranked = list(dict.fromkeys(c.doc_id for c in chunks))[:10]
            gold = qrels[q["_id"]]
            recalls.append(recall_at_k(ranked, gold, k=5))
            ndcgs.append(ndcg_at_k(ranked, gold, k=10))
            mrrs.append(reciprocal_rank(ranked, gold, k=10))
        print(f"| {mode} | {statistics.fmean(recalls):.3f} | {statistics.fmean(ndcgs):.3f} | "
              f"{statistics.fmean(mrrs):.3f} | {percentile(latencies, 50):.1f} | {percentile(latencies, 95):.1f} |")


if __name__ == "__main__":
    main()
