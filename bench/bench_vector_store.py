"""Embedded vector stores at real corpus sizes: qdrant-client local mode vs Qdrant Edge.

For each backend and size, a fresh process builds an on-disk store of N random unit
384-d vectors (MiniLM's size) with a small payload, then runs Q nearest-neighbour
queries (limit 10). It prints build time, p50/p95 query latency, the process's RSS
growth, disk size, and recall@10 against exact search (numpy). qdrant-client's local
mode searches by brute force; Qdrant Edge (``qdrant-edge-py``) builds an HNSW index
(``optimize()`` after the upserts, included in the build time), searched with its
default breadth and with ``hnsw_ef=128``. Random vectors are a hard case for HNSW
(every point is nearly equidistant), so recall here is a lower bound for real
embeddings; "top-1 found" says whether the point each query was made from is first.

    .venv/bin/python -m bench.bench_vector_store [--sizes 10000 100000] [--queries 200]

Needs ``qdrant-edge-py`` (requirements-dev.txt). Prints a markdown table with the
load average, since other jobs may share the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DIM = 384
BATCH = 1000
ROOT = Path(__file__).resolve().parent.parent


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _disk_mb(path: str) -> float:
    return sum(f.stat().st_blocks * 512 for f in Path(path).rglob("*") if f.is_file()) / 2**20  # allocated


def _data(n: int, queries: int):
    import numpy as np

    rng = np.random.default_rng(42)
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = x[rng.choice(n, queries, replace=False)] + 0.05 * rng.standard_normal((queries, DIM)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    exact = np.argsort(-(q @ x.T), axis=1)[:, :10]
    return x, q, exact


def _edge(x, queries, folder: str, hnsw_ef: int | None = None):
    import qdrant_edge as qe

    started = time.perf_counter()
    shard = qe.EdgeShard.create(folder, qe.EdgeConfig(vectors={"dense": qe.EdgeVectorParams(
        size=DIM, distance=qe.Distance.Cosine)}))
    for start in range(0, len(x), BATCH):
        shard.update(qe.UpdateOperation.upsert_points([
            qe.Point(i, {"dense": x[i].tolist()}, {"chunk": i}) for i in range(start, min(start + BATCH, len(x)))]))
    shard.optimize()
    shard.flush()
    build = time.perf_counter() - started

    def search(v) -> list[int]:
        params = qe.SearchParams(hnsw_ef=hnsw_ef) if hnsw_ef else None
        hits = shard.query(qe.QueryRequest(limit=10, query=qe.Query.Nearest(v.tolist(), using="dense"),
                                           with_payload=True, params=params))
        return [int(h.id) for h in hits]

    return build, search, shard


def _local(x, queries, folder: str):
    import warnings

    from qdrant_client import QdrantClient, models

    warnings.filterwarnings("ignore")  # local mode warns past 20,000 points: that is what we measure
    started = time.perf_counter()  # imports done above: build time is the store's own
    client = QdrantClient(path=folder)
    client.create_collection("bench", vectors_config={"dense": models.VectorParams(size=DIM,
                                                                                   distance=models.Distance.COSINE)})
    for start in range(0, len(x), BATCH):
        client.upsert("bench", [models.PointStruct(id=i, vector={"dense": x[i].tolist()}, payload={"chunk": i})
                                for i in range(start, min(start + BATCH, len(x)))])
    build = time.perf_counter() - started

    def search(v) -> list[int]:
        hits = client.query_points("bench", query=v.tolist(), using="dense", limit=10, with_payload=True).points
        return [int(h.id) for h in hits]

    return build, search, client


def measure(backend: str, n: int, queries: int, hnsw_ef: int | None = None) -> dict:
    import numpy as np

    x, q, exact = _data(n, queries)
    with tempfile.TemporaryDirectory() as folder:
        __import__("qdrant_edge" if backend == "edge" else "qdrant_client")  # imports are not the store's memory
        rss0 = _rss_mb()
        if backend == "edge":
            build, search, handle = _edge(x, q, folder, hnsw_ef)
        else:
            build, search, handle = _local(x, q, folder)
        rss1 = _rss_mb()
        search(q[0])  # warm
        times, recall, first = [], [], []
        for i, v in enumerate(q):
            t = time.perf_counter()
            ids = search(v)
            times.append(time.perf_counter() - t)
            recall.append(len(set(ids) & set(exact[i].tolist())) / 10)
            first.append(bool(ids) and ids[0] == int(exact[i][0]))
        disk = _disk_mb(folder)
        handle.close()
    return {"backend": backend, "n": n, "build_s": build, "p50_ms": 1000 * float(np.percentile(times, 50)),
            "p95_ms": 1000 * float(np.percentile(times, 95)), "rss_mb": rss1 - rss0, "disk_mb": disk,
            "recall": float(np.mean(recall)), "recall1": float(np.mean(first)), "hnsw_ef": hnsw_ef}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--backends", nargs="+", default=["local", "edge"])
    parser.add_argument("--hnsw-ef", type=int, nargs="+", default=[0, 128],
                        help="Qdrant Edge search breadths to measure (0: its default)")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # internal: backend n ef, in a fresh process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.queries, int(args.one[2]) or None)))
        return
    load = os.getloadavg()
    rows = []
    for n in args.sizes:
        for backend, ef in [(b, e) for b in args.backends for e in (args.hnsw_ef if b == "edge" else [0])]:
            proc = subprocess.run([sys.executable, "-m", "bench.bench_vector_store", "--one", backend, str(n),
                                   str(ef), "--queries", str(args.queries)], cwd=ROOT, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{backend} at {n}: failed\n{proc.stderr[-1500:]}", file=sys.stderr)
                continue
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    after = os.getloadavg()
    names = {"local": "qdrant-client local mode", "edge": "Qdrant Edge (qdrant-edge-py)"}
    print(f"{DIM}-d random unit vectors, {args.queries} queries of limit 10; load average (1/5/15 min) "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} before, {after[0]:.1f} / {after[1]:.1f} / "
          f"{after[2]:.1f} after, {os.cpu_count()} cores\n")
    print("| backend | points | build s | query p50 ms | query p95 ms | RSS growth MB | disk MB (allocated) "
          "| recall@10 | top-1 found |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        name = names[r["backend"]] + (f", hnsw_ef={r['hnsw_ef']}" if r.get("hnsw_ef") else "")
        print(f"| {name} | {r['n']:,} | {r['build_s']:.1f} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | "
              f"{r['rss_mb']:.0f} | {r['disk_mb']:.0f} | {r['recall']:.3f} | {r['recall1']:.3f} |")


if __name__ == "__main__":
    main()
