"""Retrieval metrics on the shared BEIR collection (RAGBench retrieval split).

Ranks the corpus for every judged query with TF-IDF (scikit-learn; a deterministic,
model-free baseline), writes the run in TREC format, then prints our metrics per k,
the time ``evaluate_run`` takes, and the largest difference from ranx (run in a
subprocess in pure-Python mode, so no numba compilation is timed or needed).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_retrieval.py [--out /tmp/tfidf.run]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from rag_eval.config import shared_data_dir
from rag_eval.io.trec import read_qrels, read_run, write_trec_run
from rag_eval.metrics.registry import evaluate_run

KS = (1, 3, 5, 10)
METRICS = ("precision", "recall", "f1", "hit_rate", "mrr", "ndcg", "log_rank")
RANX_COMPARABLE = ("precision", "recall", "hit_rate", "mrr", "ndcg")
RANX_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
data = json.load(open(sys.argv[1]))
run = Run({q: {d: float(len(docs) - r) for r, d in enumerate(docs)} for q, docs in data["run"].items()})
print(json.dumps(evaluate(Qrels(data["qrels"]), run, data["metrics"], make_comparable=True)))
"""


def tfidf_run(base: Path, qrels: dict, depth: int) -> dict[str, list[str]]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    corpus = [json.loads(line) for line in (base / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    queries = [json.loads(line) for line in (base / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    queries = [q for q in queries if q["_id"] in qrels]
    texts = [d.get("title", "") + " " + d["text"] for d in corpus]
    vectorizer = TfidfVectorizer(sublinear_tf=True).fit(texts)
    scores = (vectorizer.transform([q["text"] for q in queries]) @ vectorizer.transform(texts).T).toarray()
    return {q["_id"]: [corpus[j]["_id"] for j in np.argsort(-scores[i], kind="stable")[:depth]] for i, q in enumerate(queries)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/rag_eval_tfidf.run"), help="where the TREC run is written")
    args = parser.parse_args()
    base = shared_data_dir() / "ragbench" / "retrieval"
    qrels, errors = read_qrels(base / "qrels" / "qrels.tsv")
    assert not errors, errors
    if not args.out.exists():
        write_trec_run(tfidf_run(base, qrels, max(KS)), args.out)
    run, errors = read_run(args.out)
    assert not errors, errors

    names = [f"{m}@{k}" for k in KS for m in METRICS]
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    ours = evaluate_run(run, qrels, names)
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    n_queries = next(iter(ours.values())).n_queries
    print(f"TF-IDF run over {n_queries} judged queries (run file: {args.out})\n")
    print("| k | " + " | ".join(METRICS) + " |")
    print("|---:|" + "---:|" * len(METRICS))
    for k in KS:
        print(f"| {k} | " + " | ".join(f"{ours[f'{m}@{k}'].value:.4f}" for m in METRICS) + " |")
    print(f"\n{len(names)} metrics x {n_queries} queries in {wall:.3f} s wall, {cpu:.3f} s CPU")

    comparable = [f"{m}@{k}" for k in KS for m in RANX_COMPARABLE]
    payload = Path("/tmp/rag_eval_bench_ranx.json")
    payload.write_text(json.dumps({"run": run, "qrels": qrels, "metrics": comparable}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", RANX_SCRIPT, str(payload)], env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"\nranx comparison skipped: {done.stderr.strip().splitlines()[-1:]}")
        return
    theirs = json.loads(done.stdout)
    worst = max(abs(ours[name].value - theirs[name]) for name in comparable)
    print(f"Largest |ours - ranx| over {len(comparable)} metrics: {worst:.2e}")


if __name__ == "__main__":
    main()
