"""Build the built-in demo (rag_eval/demo/): a small corpus and a 20-question dataset
taken from RAGBench's emanual validation split (CC-BY-4.0, see rag_eval/demo/ATTRIBUTION.md).

Deterministic: rows are ordered by sha1("emanual:<id>") and taken greedily while the
pooled documents stay within the document budget, keeping rows that have at least one
relevant document. Document ids follow the shared BEIR collection's convention
("d" + first 16 hex digits of sha1(text)), so they match ../shared/data/ragbench/retrieval.

    .venv/bin/python scripts/build_demo.py [--shared-data PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

import pandas as pd

QUESTIONS = 20
MAX_DOCUMENTS = 40
SUBSET = "emanual"
OUT = Path(__file__).resolve().parent.parent / "rag_eval" / "demo"
_KEY = re.compile(r"^\s*(\d+)([a-z]+)")


def doc_id(text: str) -> str:
    return "d" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def title(text: str) -> str:
    """An emanual page opens with its heading as a sentence ("Setting the screen to black and
    white. Settings General ..."): that sentence is the page's title (RAGBench keeps no other)."""
    head, dot, _ = text.partition(". ")
    return head if dot and len(head) <= 80 else ""


def relevant_documents(row) -> list[int]:
    found = {int(m.group(1)) for k in row["all_relevant_sentence_keys"] if (m := _KEY.match(str(k)))}
    return sorted(i for i in found if i < len(row["documents"]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared-data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = parser.parse_args()
    df = pd.read_parquet(Path(args.shared_data) / "ragbench" / "parquet" / SUBSET / "validation.parquet")
    df["_order"] = [hashlib.sha1(f"{SUBSET}:{i}".encode()).hexdigest() for i in df["id"]]
    corpus: dict[str, str] = {}
    questions = []
    seen: set[str] = set()
    for _, row in df.sort_values("_order").iterrows():
        relevant = relevant_documents(row)
        if not relevant or f"{SUBSET}-{row['id']}" in seen:  # one row per question (ids repeat per generator)
            continue
        docs = {doc_id(t): t for t in row["documents"]}
        if len(set(corpus) | set(docs)) > MAX_DOCUMENTS:
            continue
        corpus.update(docs)
        seen.add(f"{SUBSET}-{row['id']}")
        questions.append({
            "id": f"{SUBSET}-{row['id']}",
            "question": row["question"],
            "reference_answer": row["response"] if bool(row["adherence_score"]) else None,
            "gold_doc_ids": sorted({doc_id(row["documents"][i]) for i in relevant}),
            "metadata": {"question_source": f"ragbench:{SUBSET}", "domain": "consumer electronics manual"},
            "provenance": "llm",
        })
        if len(questions) == QUESTIONS:
            break
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for key in sorted(corpus):
            fh.write(json.dumps({"_id": key, "title": title(corpus[key]), "text": corpus[key]}, ensure_ascii=False) + "\n")
    with (OUT / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps({k: v for k, v in q.items() if v is not None}, ensure_ascii=False) + "\n")
    print(f"{len(corpus)} documents, {len(questions)} questions -> {OUT}")


if __name__ == "__main__":
    main()
