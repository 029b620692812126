"""Retrieval in every language of the shared multilingual QA data (issue 47), through the
pipeline's own ingestion and retrieval on an embedded Qdrant.

Per language of ``../shared/data/multilingual/qa_*.jsonl`` (TyDi QA GoldP: ar, bn, en, fi,
id, ko, ru, sw, te; JSQuAD: ja; CMRC 2018: zh; iApp Wiki QA: th): a corpus of that
language's passages (identical passages once; ``_id``, ``text``, no language given, so it is
detected at ingest), each question's gold passage. Prints, as markdown tables:

- recall@5 (document level: 20 chunks fetched, deduplicated to passages, cut at 5) for the
  default configuration (``auto``: the mode it resolved to is shown), BM25, dense and
  hybrid, each with its ratio to English's figure in the same mode;
- the share of chunks whose detected language is the file's;
- tokenizer speed (``rag_eval.text.words.words``, words/s, its cache cleared) and ingest
  speed (chunks/s) per language.

    nice -n 10 .venv/bin/python bench/bench_language_retrieval.py [--languages en,zh] [--fresh] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # figures appear as they are measured

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script too: the BEIR bench's options

from bench.bench_rag_retrieval import store_and_config  # noqa: E402
from rag_eval.config import shared_data_dir
from rag_eval.metrics.retrieval import recall_at_k
from rag_eval.rag import sparse
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.retrieve import resolve_mode, retrieve
from rag_eval.rag.store import collection_metadata, iter_chunks
from rag_eval.text import words as words_module

MODES = ("auto", "bm25", "dense", "hybrid")
CANDIDATE_CHUNKS = 20
K = 5


def load(root: Path) -> dict[str, tuple[dict[str, str], list[tuple[str, str]]]]:
    """language -> (passage id -> text, [(question, gold passage id)])."""
    rows: dict[str, list[dict]] = defaultdict(list)
    for path in sorted(root.glob("qa_*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    rows[row["language"]].append(row)
    out = {}
    for language, items in sorted(rows.items()):
        ids: dict[str, str] = {}
        questions = [(r["question"], ids.setdefault(r["contexts"][0], f"{language}-{len(ids)}")) for r in items]
        out[language] = ({i: text for text, i in ids.items()}, questions)
    return out


def tokenizer_speed(texts: list[str], language: str) -> float:
    words_module._words.cache_clear()  # time real tokenizing, not the cache
    started = time.perf_counter()
    count = sum(len(words_module.words(t, language)) for t in texts)
    return count / (time.perf_counter() - started)


def commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=Path(__file__).resolve().parent, check=False).stdout.strip()
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", help="Comma-separated ISO codes (default: every language of the data).")
    parser.add_argument("--fresh", action="store_true", help="Delete the cached collections and ingest again.")
    parser.add_argument("--store", default="/tmp/rag-eval-bench/languages", help="Embedded Qdrant folder.")
    parser.add_argument("--embedder-model", default=None, help="The embedder model (default: the configuration's).")
    args = parser.parse_args()

    root = shared_data_dir() / "multilingual"
    if not any(root.glob("qa_*.jsonl")):
        sys.exit(f"shared multilingual QA data not found under {root} (set RAG_EVAL_SHARED_DATA)")
    data = load(root)
    if args.languages:
        data = {code: data[code] for code in args.languages.split(",")}
    if "en" not in data:
        sys.exit("English is the reference of every ratio: include en")
    client, base = store_and_config(args)
    print(f"commit {commit()}, embedder {base.embedder.model}, sparse {sparse.SPARSE_VERSION}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n")

    print(f"## Retrieval recall@{K} per language (ratio to English in the same mode)\n")
    print("| language | passages | questions | chunks in its language | default (auto → mode) | BM25 | dense | hybrid |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    english: dict[str, float] = {}
    speeds = []
    for language in sorted(data, key=lambda code: (code != "en", len(data[code][0]))):  # English first: the reference
        passages, questions = data[language]
        recall, mode_used, chunks_per_s, written, share = measure(client, base, language, passages, questions)
        english = english or recall
        cells = [f"{recall[m]:.3f} ({recall[m] / max(english[m], 1e-9):.2f})" for m in MODES]
        cells[0] += f" → {mode_used}"
        print(f"| {language} | {len(passages)} | {len(questions)} | {share:.0%} | " + " | ".join(cells) + " |")
        ingest = f"{chunks_per_s:.1f}" if written else "(cached)"
        speeds.append(f"| {language} | {tokenizer_speed(list(passages.values()), language):,.0f} | {ingest} | {written} |")
    print("\n## Tokenizer and ingest speed per language\n")
    print("| language | tokenizer words/s | ingest chunks/s | chunks written |")
    print("|---|---:|---:|---:|")
    print("\n".join(speeds))


def measure(client, base, language: str, passages: dict[str, str], questions: list[tuple[str, str]]
            ) -> tuple[dict[str, float], str, float, int, float]:
    """Ingest one language's passages and ask its questions in every mode: recall@5 per mode,
    the mode ``auto`` resolved to, ingest chunks/s, chunks written and the share of chunks
    detected in the language."""
    collection = f"lang-{language}"
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / f"{language}.jsonl"
        corpus.write_text("".join(json.dumps({"_id": i, "text": t}, ensure_ascii=False) + "\n"
                                  for i, t in passages.items()), encoding="utf-8")
        report = ingest_paths([corpus], collection, base, client=client)
    chunks = list(iter_chunks(collection, limit=None, client=client))
    share = sum(c["language"] == language for c in chunks) / max(len(chunks), 1)
    recall = {}
    for mode in MODES:
        config = base.with_changes(**{"retrieval.mode": mode, "retrieval.k": CANDIDATE_CHUNKS})
        scores = []
        for question, gold in questions:
            ranked = list(dict.fromkeys(c.doc_id for c in retrieve(question, collection, config, client=client)))
            scores.append(recall_at_k(ranked[:K], {gold}, k=K))
        recall[mode] = statistics.fmean(scores)
    print(f"{language}: {len(chunks)} chunks, " + ", ".join(f"{m} {recall[m]:.3f}" for m in MODES),
          file=sys.stderr, flush=True)
    mode_used = resolve_mode(base, collection_metadata(client, collection) or {})
    return recall, mode_used, report.chunks_per_second, report.chunks_added, share


if __name__ == "__main__":
    main()
