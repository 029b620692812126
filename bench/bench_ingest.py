"""Ingest time against the embedder alone on the same chunks.

Pages of Debian's PostgreSQL 15 manual (``apt-get install -y postgresql-doc-15``; the
bench says so and exits when it is absent) are ingested into a fresh embedded Qdrant
store with the default configuration; then the same chunks are embedded alone, in the
same batches (both cut by ``rag_eval.rag.ingest.chunk_document``, so they are the same
chunks). Prepare (extract, split, chunk) alone is timed too. The model is exported,
loaded and warmed before any timing, and its vector cache emptied before each timed
run. Each step prints its wall time and the process CPU time it used (the primary
figure on a shared machine), with the load average.

    nice .venv/bin/python bench/bench_ingest.py [--pages 150] [--seed 0] [--embedder-model all-MiniLM-L6-v2-int8]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=150, help="pages sampled from the manual (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder-model", default=None,
                        help="The pipeline's embedder model, e.g. all-MiniLM-L6-v2-int8 (default: the configuration's).")
    args = parser.parse_args()
    pages = sorted(MANUAL.glob("*.html")) if MANUAL.is_dir() else []
    if not pages:
        print(f"skipped: {MANUAL} not found (apt-get install -y postgresql-doc-15)")
        return
    if args.pages:
        pages = sorted(random.Random(args.seed).sample(pages, min(args.pages, len(pages))))
    os.environ["RAG_EVAL_HOME"] = tempfile.mkdtemp(prefix="bench-ingest-")
    import platformdirs

    models = Path(platformdirs.user_data_dir("rag-eval")) / "models"
    if models.is_dir():  # reuse exported models if the user has them
        (Path(os.environ["RAG_EVAL_HOME"]) / "models").symlink_to(models, target_is_directory=True)

    from rag_eval.rag.config import default_config
    from rag_eval.rag.embedders import make_embedder
    from rag_eval.rag.ingest import BATCH_CHUNKS, chunk_document, ingest_paths
    from rag_eval.rag.loaders import load_file

    config = default_config()
    if args.embedder_model:
        config = config.with_changes(**{"embedder.model": args.embedder_model})
    embedder = make_embedder(config.embedder)
    embedder.encode(["warm up the model", "and its session"])

    loads = [os.getloadavg()[0]]
    t, cpu = time.perf_counter(), time.process_time()
    texts = []
    for path in pages:
        for doc in load_file(path):
            if hasattr(doc, "text"):
                texts.extend(c.text for c in chunk_document(doc, config)[1])
    prepare = time.perf_counter() - t, time.process_time() - cpu

    embedder.clear()
    loads.append(os.getloadavg()[0])
    t, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), BATCH_CHUNKS):
        embedder.encode(texts[i:i + BATCH_CHUNKS])
    embed = time.perf_counter() - t, time.process_time() - cpu

    embedder.clear()
    loads.append(os.getloadavg()[0])
    cpu = time.process_time()
    report = ingest_paths([str(p) for p in pages], "bench", config)
    ingest = report.seconds, time.process_time() - cpu
    loads.append(os.getloadavg()[0])
    print(f"{len(pages)} pages of {MANUAL} ({report.chunks_added} chunks; {len(texts)} when chunked alone), "
          f"{config.embedder.label}, {os.cpu_count()} cores; load average (1 min) at each step: "
          + " / ".join(f"{x:.2f}" for x in loads) + "\n")
    print("| step | wall s | chunks/s | CPU s | CPU ms per chunk |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (wall, cpu_s), n in (("prepare alone (extract, split, chunk)", prepare, len(texts)),
                                   ("embedder alone (same chunks, same batches)", embed, len(texts)),
                                   ("ingest (prepare, embed, write overlapped)", ingest, report.chunks_added)):
        print(f"| {name} | {wall:.1f} | {n / wall:.1f} | {cpu_s:.1f} | {1000 * cpu_s / max(n, 1):.1f} |")
    print(f"\ningest / embedder alone: {ingest[0] / embed[0]:.2f}x wall, {ingest[1] / embed[1]:.2f}x CPU "
          "(target <= 1.0x)")


if __name__ == "__main__":
    main()
