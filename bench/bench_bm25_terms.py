"""BM25 terms by language, measured without Qdrant: recall@5 of each question's gold passage
on the shared multilingual QA data, for the BM25 terms of ``rag_eval.rag.sparse`` (word
prefixes, plus character 3-grams outside English, plus the 3-grams and Han characters of
runs written without spaces) against word prefixes alone (the rules before the grams).
Plain in-memory BM25 (k1 1.2, b 0.75, the corpus's own average length) over the first
``--questions`` questions of each language and their passages: it compares term rules
quickly; ``bench/bench_language_retrieval.py`` measures the real pipeline.

    RAG_EVAL_SHARED_DATA=../shared/data .venv/bin/python -m bench.bench_bm25_terms
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from collections.abc import Callable

from rag_eval.config import shared_data_dir
from rag_eval.rag import sparse

FILES = ("qa_tydiqa_goldp_dev.jsonl", "qa_jsquad_valid.ja.jsonl", "qa_cmrc2018_dev.zh.jsonl",
         "qa_iapp_wikiqa_test.th.jsonl")


def words_only(text: str, language: str | None) -> list[str]:
    return sparse._terms(text, language)[0]


def recall_at_5(rows: list[dict], language: str, terms: Callable[[str, str | None], list[str]]) -> float:
    passages: dict[str, int] = {}
    for r in rows:
        passages.setdefault(r["contexts"][0], len(passages))
    docs = [terms(text, language) for text in passages]
    average = sum(map(len, docs)) / len(docs)
    df = Counter(t for d in docs for t in set(d))
    idf = {t: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    counts = [Counter(d) for d in docs]
    hits = 0
    for r in rows:
        query = set(terms(r["question"], language))
        scores = []
        for i, tf in enumerate(counts):
            norm = 1.2 * (1 - 0.75 + 0.75 * len(docs[i]) / average)
            scores.append((sum(idf[t] * tf[t] * 2.2 / (tf[t] + norm) for t in query if t in tf), i))
        top = [i for _, i in sorted(scores, reverse=True)[:5]]
        hits += passages[r["contexts"][0]] in top
    return hits / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=250, help="Questions per language.")
    args = parser.parse_args()
    folder = shared_data_dir() / "multilingual"
    by_language: dict[str, list[dict]] = {}
    for name in FILES:
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            by_language.setdefault(row["language"], []).append(row)
    print(f"| language | word prefixes | today's terms ({sparse.SPARSE_VERSION}) |")
    print("|---|---:|---:|")
    for language in sorted(by_language, key=lambda code: (code != "en", code)):
        rows = by_language[language][: args.questions]
        before, after = recall_at_5(rows, language, words_only), recall_at_5(rows, language, sparse.tokenize)
        print(f"| {language} | {before:.3f} | {after:.3f} |", flush=True)


if __name__ == "__main__":
    main()
