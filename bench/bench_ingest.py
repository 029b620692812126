"""Ingest time against the embedder alone on the same chunks.

Pages of Debian's PostgreSQL 15 manual (``apt-get install -y postgresql-doc-15``; the
bench says so and exits when it is absent) are ingested into a fresh embedded Qdrant
store with the default configuration; then the same chunks are embedded alone, in the
same batches. Prepare (extract, split, chunk) alone is timed too. The model is loaded
and warmed before any timing, and its vector cache emptied before each timed run.

    nice .venv/bin/python bench/bench_ingest.py [--pages 150] [--seed 0]
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

    from rag_eval.rag.chunking import chunk_text
    from rag_eval.rag.config import default_config
    from rag_eval.rag.embedders import make_embedder
    from rag_eval.rag.ingest import BATCH_CHUNKS, document_units, ingest_paths
    from rag_eval.rag.loaders import load_file

    config = default_config()
    embedder = make_embedder(config.embedder)
    embedder.encode(["warm up the model", "and its session"])

    t = time.perf_counter()
    texts = []
    for path in pages:
        for doc in load_file(path):
            if hasattr(doc, "text"):
                texts.extend(c.text for c in chunk_text(doc.text, config.chunking, document_units(doc)))
    prepare_s = time.perf_counter() - t

    embedder.clear()
    t = time.perf_counter()
    for i in range(0, len(texts), BATCH_CHUNKS):
        embedder.encode(texts[i:i + BATCH_CHUNKS])
    embed_s = time.perf_counter() - t

    embedder.clear()
    report = ingest_paths([str(p) for p in pages], "bench", config)
    ingest_s = report.seconds
    print(f"{len(pages)} pages of {MANUAL} ({report.chunks_added} chunks; {len(texts)} when chunked alone), "
          f"{config.embedder.label}, {os.cpu_count()} cores\n")
    print("| step | seconds | chunks/s |")
    print("| --- | ---: | ---: |")
    print(f"| prepare alone (extract, split, chunk) | {prepare_s:.1f} | {len(texts) / prepare_s:.1f} |")
    print(f"| embedder alone (same chunks, same batches) | {embed_s:.1f} | {len(texts) / embed_s:.1f} |")
    print(f"| ingest (prepare, embed, write overlapped) | {ingest_s:.1f} | {report.chunks_added / ingest_s:.1f} |")
    print(f"\ningest / embedder alone: {ingest_s / embed_s:.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
