"""Real 384-d vectors for the vector-store benchmark, cached as .npy (regenerated, never committed).

Chunk texts: every distinct sentence of the shared RAGBench documents (all seven
validation subsets, ``documents_sentences``) plus the 2- and 3-sentence windows over
them (the overlapping chunks a sentence chunker makes), in a fixed order; queries: the
subsets' distinct questions. Both embedded with the project's embedder (the packaged
all-MiniLM-L6-v2 under ONNX Runtime). The cache lives in ``bench/out/vectors/``
(gitignored) and is reused by later runs.

    .venv/bin/python -m bench.vector_corpus [--max 100000]
"""

from __future__ import annotations

import argparse
import glob
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / "out" / "vectors"


def shared_data() -> Path:
    path = Path(os.environ.get("RAG_EVAL_SHARED_DATA") or ROOT.parent / "shared" / "data")
    if not (path / "ragbench").is_dir():
        raise SystemExit(f"RAGBench not found under {path}; set RAG_EVAL_SHARED_DATA")
    return path


def texts(limit: int) -> tuple[list[str], list[str]]:
    """(chunk texts, questions), both deduplicated, in a fixed order."""
    import pyarrow.parquet as pq

    docs: list[list[str]] = []
    questions: dict[str, None] = {}
    for path in sorted(glob.glob(str(shared_data() / "ragbench" / "parquet" / "*" / "*.parquet"))):
        for row in pq.read_table(path, columns=["question", "documents_sentences"]).to_pylist():
            questions.setdefault(row["question"].strip(), None)
            for doc in row["documents_sentences"]:
                docs.append([s.strip() for _, s in doc if s.strip()])
    seen: dict[str, None] = {}
    for width in (1, 2, 3):
        for doc in docs:
            for i in range(len(doc) - width + 1):
                seen.setdefault(" ".join(doc[i:i + width]), None)
                if len(seen) >= limit:
                    return list(seen), list(questions)
    return list(seen), list(questions)


def load(n: int, queries: int) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """The first ``n`` chunk vectors and ``queries`` question vectors (raises if not cached)."""
    x = np.load(CACHE / "chunks.npy", mmap_mode="r")
    q = np.load(CACHE / "questions.npy")
    if len(x) < n:
        raise SystemExit(f"only {len(x)} cached chunk vectors; run python -m bench.vector_corpus --max {n}")
    chunk_texts, question_texts = texts(n)
    return np.ascontiguousarray(x[:n]), q[:queries], chunk_texts[:n], question_texts[:queries]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max", type=int, default=100_000)
    args = parser.parse_args()
    from rag_eval.encoders.embedder import Embedder

    chunk_texts, question_texts = texts(args.max)
    CACHE.mkdir(parents=True, exist_ok=True)
    embedder = Embedder(cache_size=0)
    started = time.perf_counter()
    q = embedder.encode(question_texts)
    np.save(CACHE / "questions.npy", q)
    done = np.load(CACHE / "chunks.npy") if (CACHE / "chunks.npy").exists() else np.zeros((0, q.shape[1]), np.float32)
    parts = [done]
    step = 5000
    for start in range(len(done), len(chunk_texts), step):
        parts.append(embedder.encode(chunk_texts[start:start + step]))
        np.save(CACHE / "chunks.npy", np.concatenate(parts))  # resumable
        print(f"{start + len(parts[-1])} / {len(chunk_texts)} in {time.perf_counter() - started:.0f} s", flush=True)
    print(f"{len(chunk_texts)} chunks, {len(question_texts)} questions cached in {CACHE}")


if __name__ == "__main__":
    main()
