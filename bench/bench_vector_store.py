"""Embedded vector stores at real corpus sizes: Qdrant Edge against qdrant-client local mode.

Vectors are real: RAGBench passages (sentences and 2-3 sentence windows of the shared
validation documents) and RAGBench questions, embedded with the project's packaged
all-MiniLM-L6-v2 and cached by ``bench/vector_corpus.py`` (run it first). A size larger
than the cache is filled by repeating the real vectors with Gaussian noise (sigma 0.02
per dimension, renormalised) and their texts; the table says which rows are tiled.

For each engine and size a fresh process builds a store through the product's own
adapter (``rag_eval.rag.store``: the same collection schema, payloads, dense + BM25
sparse vectors, and for Edge the HNSW build ingestion runs at the end), then runs the
questions as dense, BM25 and hybrid (RRF) queries of limit 10. Printed: build time,
p50/p95 query latency, RSS growth of the process, disk (allocated), dense recall@10
against exact search (numpy), and for BM25/hybrid the overlap@10 with local mode's
results (both exact there). Edge is searched at several HNSW breadths (``hnsw_ef``) and
exactly. Then the end-to-end figure: ``rag_eval.rag.retrieve.retrieve`` (collection
check, embedding the question, query, payloads) p50 on the Edge store at 100k chunks,
against the 20 ms target.

    .venv/bin/python -m bench.vector_corpus --max 100000     # once: embeds and caches
    nice .venv/bin/python -m bench.bench_vector_store [--sizes 10000 100000] [--queries 200] [--million]

``--million`` adds 1,000,000 points (Edge only: local mode would take seconds per
query; its build alone is long on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BATCH = 1000
LIMIT = 10
NOISE = 0.01
TARGET_MS = 20.0
EDGE_EFS = [64, 128, 256]  # dense search breadths compared (then exact); the product uses edge.HNSW_EF


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _disk_mb(path: str) -> float:
    return sum(f.stat().st_blocks * 512 for f in Path(path).rglob("*") if f.is_file()) / 2**20


def data(n: int, queries: int) -> tuple[np.ndarray, np.ndarray, list[str], list[str], int]:
    """(chunk vectors, question vectors, chunk texts, questions, how many chunks are real)."""
    from bench.vector_corpus import CACHE, load

    if not (CACHE / "chunks.npy").is_file():
        raise SystemExit("no cached vectors: run `python -m bench.vector_corpus --max 100000` first")
    cached = len(np.load(CACHE / "chunks.npy", mmap_mode="r"))
    real = min(n, cached)
    x, q, texts, questions = load(real, queries)
    if n > real:
        rng = np.random.default_rng(7)
        parts, tiled_texts = [x], list(texts)
        while sum(len(p) for p in parts) < n:
            take = min(real, n - sum(len(p) for p in parts))
            noisy = x[:take] + NOISE * rng.standard_normal((take, x.shape[1])).astype(np.float32)
            parts.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
            tiled_texts.extend(texts[:take])
        x, texts = np.concatenate(parts), tiled_texts
    return np.ascontiguousarray(x, dtype=np.float32), q, texts, questions, real


def exact_top(x: np.ndarray, q: np.ndarray, k: int = LIMIT) -> np.ndarray:
    out = []
    for start in range(0, len(q), 50):
        scores = q[start:start + 50] @ x.T
        top = np.argpartition(-scores, k, axis=1)[:, :k]
        order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
        out.append(np.take_along_axis(top, order, axis=1))
    return np.concatenate(out)


def _pid(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def _index(point_id: str) -> int:
    return uuid.UUID(str(point_id)).int - 1


def measure(backend: str, n: int, queries: int, e2e: bool) -> dict:
    from qdrant_client import models

    from rag_eval.rag import store as st
    from rag_eval.rag.config import ChunkingConfig, EmbedderConfig, RagConfig
    from rag_eval.rag.sparse import document_vector, query_vector

    x, q, texts, questions, real = data(n, queries)
    exact = exact_top(x, q)
    q_sparse = [query_vector(t) for t in questions]
    config = RagConfig()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as folder:
        rss0 = _rss_mb()
        started = time.perf_counter()
        client = st.open_qdrant(path=folder, backend=backend)
        st.ensure_collection(client, "bench", EmbedderConfig(), x.shape[1], ChunkingConfig())
        for start in range(0, n, BATCH):
            points = []
            for i in range(start, min(start + BATCH, n)):
                sparse = document_vector(texts[i])
                points.append(models.PointStruct(id=_pid(i), vector={
                    st.DENSE: x[i].tolist(), st.SPARSE: models.SparseVector(indices=sparse.indices, values=sparse.values)},
                    payload={"doc_id": f"d{i // 20}", "chunk_index": i % 20, "text": texts[i], "source": "bench"}))
            client.upsert("bench", points=points, wait=True)
        st.finish_writes(client, "bench")
        build = time.perf_counter() - started
        rss1 = _rss_mb()

        def dense(v: np.ndarray) -> list:
            return client.query_points("bench", query=v.tolist(), using=st.DENSE, limit=LIMIT, with_payload=True).points

        def sparse_q(i: int) -> list:
            s = q_sparse[i]
            return client.query_points("bench", query=models.SparseVector(indices=s.indices, values=s.values),
                                       using=st.SPARSE, limit=LIMIT, with_payload=True).points

        def hybrid(i: int) -> list:
            s = q_sparse[i]
            prefetch = [models.Prefetch(query=q[i].tolist(), using=st.DENSE, limit=40),
                        models.Prefetch(query=models.SparseVector(indices=s.indices, values=s.values),
                                        using=st.SPARSE, limit=40)]
            return client.query_points("bench", prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF),
                                       limit=LIMIT, with_payload=True).points

        def timed(fn, count: int) -> tuple[list[float], list[list[int]]]:
            fn(0)  # warm
            times, ids = [], []
            for i in range(count):
                t = time.perf_counter()
                hits = fn(i)
                times.append(time.perf_counter() - t)
                ids.append([_index(h.id) for h in hits])
            return times, ids

        rows = []
        # local mode scans everything (seconds per BM25/hybrid query at 100k on a loaded machine): it gets
        # fewer questions there, the first ones, so overlap@10 compares the same questions
        count = len(q) if backend == "edge" else min(len(q), max(20, 3_000_000 // n))
        efs: list[int | None] = [None]
        if backend == "edge":
            efs = [*EDGE_EFS, 0]  # 0: exact search
        for ef in efs:
            if backend == "edge":
                client.hnsw_ef = ef or None
                client.exact = ef == 0
            times, ids = timed(lambda i: dense(q[i]), count)
            recall = float(np.mean([len(set(a) & set(b.tolist())) / LIMIT for a, b in zip(ids, exact[:count], strict=True)]))
            rows.append({"mode": "dense", "ef": ef, "times": times, "recall": recall, "queries": count})
        if backend == "edge":
            from rag_eval.rag.edge import HNSW_EF

            client.hnsw_ef, client.exact = HNSW_EF, False  # the product's setting for BM25, hybrid, end to end
        for mode, fn in (("bm25", sparse_q), ("hybrid", hybrid)):
            times, ids = timed(fn, count)
            rows.append({"mode": mode, "ef": client.hnsw_ef if backend == "edge" and mode == "hybrid" else None,
                         "times": times, "ids": ids, "queries": count})
        e2e_ms = None
        if e2e:
            from rag_eval.rag.embedders import make_embedder
            from rag_eval.rag.retrieve import retrieve

            embedder = make_embedder(config.embedder)
            embedder.encode(["warm up the model"])
            forget = getattr(embedder, "clear", lambda: None)  # every question embedded afresh, never cached
            times, embed_times = [], []
            for question in questions:
                forget()
                t = time.perf_counter()
                embedder.encode([question])
                embed_times.append(time.perf_counter() - t)
                forget()
                t = time.perf_counter()
                retrieve(question, "bench", config, client=client)
                times.append(time.perf_counter() - t)
            e2e_ms = [1000 * float(np.percentile(times, p)) for p in (50, 95)]
            e2e_ms.append(1000 * float(np.percentile(embed_times, 50)))
        disk = _disk_mb(folder)
        st.close_clients()
    for r in rows:
        r["p50_ms"] = 1000 * float(np.percentile(r["times"], 50))
        r["p95_ms"] = 1000 * float(np.percentile(r["times"], 95))
        del r["times"]
    return {"backend": backend, "n": n, "real": real, "build_s": build, "rss_mb": rss1 - rss0, "disk_mb": disk,
            "rows": rows, "e2e_ms": e2e_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="also 1,000,000 points (Edge only)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--backends", nargs="+", default=["local", "edge"])
    parser.add_argument("--save", help="also write the measurements to this JSON file")
    parser.add_argument("--load", nargs="+", help="print the table from saved JSON files (no measuring)")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: backend n, in a fresh process
    args = parser.parse_args()
    if args.one:
        backend, n = args.one[0], int(args.one[1])
        print(json.dumps(measure(backend, n, args.queries, e2e=backend == "edge" and n == 100_000)))
        return
    sizes = args.sizes + ([1_000_000] if args.million else [])
    load = os.getloadavg()
    results = []
    for path in args.load or []:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        results.extend(saved["results"])
        load = saved["load"]
    for n in sizes if not args.load else []:
        for backend in args.backends:
            if backend == "local" and n > 100_000:
                continue
            proc = subprocess.run([sys.executable, "-m", "bench.bench_vector_store", "--one", backend, str(n),
                                   "--queries", str(args.queries)], cwd=ROOT, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{backend} at {n}: failed\n{proc.stderr[-1500:]}", file=sys.stderr)
                continue
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"done: {backend} at {n:,}", file=sys.stderr, flush=True)
    after = os.getloadavg()
    if args.save:
        Path(args.save).write_text(json.dumps({"results": results, "load": load}), encoding="utf-8")
    print(f"MiniLM vectors of RAGBench passages, {args.queries} RAGBench questions, limit {LIMIT}; load average "
          f"(1/5/15 min) {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} before, {after[0]:.1f} / {after[1]:.1f} / "
          f"{after[2]:.1f} after, {os.cpu_count()} cores\n")
    print("| engine | points | build s | RSS growth MB | disk MB | mode | search | queries | p50 ms | p95 ms | "
          "recall@10 (dense) / overlap@10 with local mode |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|")
    local = {(r["n"], row["mode"]): row for r in results if r["backend"] == "local" for row in r["rows"]}
    names = {"local": "qdrant-client local mode", "edge": "Qdrant Edge"}
    for r in results:
        points = f"{r['n']:,}" + ("" if r["real"] >= r["n"] else f" ({r['real']:,} real, rest tiled)")
        for row in r["rows"]:
            search = "exact (brute force)" if r["backend"] == "local" else (
                "exact" if row["ef"] == 0 else f"HNSW ef={row['ef']}" if row["ef"] else "sparse index")
            if row["mode"] == "dense":
                quality = f"{row['recall']:.3f}"
            else:
                ref = local.get((r["n"], row["mode"]))
                if r["backend"] == "local":
                    quality = "1 (reference)"
                elif ref is None:
                    quality = "n/a"
                else:
                    overlap = [len(set(a) & set(b)) / LIMIT for a, b in zip(row["ids"], ref["ids"], strict=False)]
                    quality = f"{np.mean(overlap):.3f}"
            print(f"| {names[r['backend']]} | {points} | {r['build_s']:.1f} | {r['rss_mb']:.0f} | {r['disk_mb']:.0f} | "
                  f"{row['mode']} | {search} | {row['queries']} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | {quality} |")
    for r in results:
        if r.get("e2e_ms"):
            p50, p95, embed = r["e2e_ms"]
            print(f"\nEnd to end at {r['n']:,} chunks (Qdrant Edge, dense, retrieve(): collection check + embedding "
                  f"the question + query + payloads): p50 {p50:.1f} ms, p95 {p95:.1f} ms, of which embedding the "
                  f"question alone p50 {embed:.1f} ms; target p50 <= {TARGET_MS:.0f} ms: ratio {p50 / TARGET_MS:.2f} "
                  "of the target")


if __name__ == "__main__":
    main()
