"""Sentence splitters on RAGBench documents: speed and agreement with RAGBench's own
sentence boundaries (``documents_sentences``).

Agreement is boundary F1: each document's sentence ends, counted in non-white-space
characters (so white space a splitter keeps or drops does not matter), compared with
the ends RAGBench's sentences give. Documents whose RAGBench sentences do not rebuild
the document text are left out (counted in the header). Speed is documents per second
of CPU time on the same documents, one run after a warm-up call.

    nice .venv/bin/python bench/bench_sentence_split.py [--per-subset 150]
"""

from __future__ import annotations

import argparse
import glob
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag_eval.config import shared_data_dir

_WS = re.compile(r"\s+")


def _ends(sentences: list[str]) -> set[int]:
    out, n = set(), 0
    for s in sentences:
        n += len(_WS.sub("", s))
        out.add(n)
    return out


def load_documents(per_subset: int) -> tuple[list[tuple[str, list[str]]], int]:
    import pandas as pd

    docs: list[tuple[str, list[str]]] = []
    skipped = 0
    for path in sorted(glob.glob(str(shared_data_dir() / "ragbench" / "parquet" / "*" / "validation.parquet"))):
        frame = pd.read_parquet(path, columns=["documents", "documents_sentences"])
        taken = 0
        for documents, sentences in zip(frame["documents"], frame["documents_sentences"]):
            for text, pairs in zip(documents, sentences):
                gold = [str(p[1]) for p in pairs]
                if _WS.sub("", text) != _WS.sub("", "".join(gold)):
                    skipped += 1
                    continue
                docs.append((str(text), gold))
                taken += 1
            if taken >= per_subset:
                break
    return docs, skipped


def splitters() -> dict[str, Callable[[str], list[str]]]:
    out: dict[str, Callable[[str], list[str]]] = {}
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    out["pysbd 0.3"] = lambda t: [s.sent for s in seg.segment(t)]
    import blingfire

    out["blingfire"] = lambda t: [t[a:b] for a, b in blingfire.text_to_sentences_and_offsets(t)[1]]
    import sentencex

    out["sentencex"] = lambda t: list(sentencex.segment("en", t))
    import nupunkt

    out["nupunkt"] = lambda t: nupunkt.sent_tokenize(t)
    from rag_eval.text.sentences import split_sentences

    out["rag_eval split_sentences (sentencex + units)"] = lambda t: [s for s, _, _ in split_sentences(t)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-subset", type=int, default=150, help="documents per RAGBench subset")
    args = parser.parse_args()
    docs, skipped = load_documents(args.per_subset)
    chars = sum(len(t) for t, _ in docs)
    print(f"{len(docs)} RAGBench documents ({chars / 1e6:.2f} M characters; {skipped} whose sentences "
          "do not rebuild the text left out)\n")
    print("| splitter | docs/s (CPU) | boundary precision | boundary recall | boundary F1 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, split in splitters().items():
        split("Warm up. Twice.")
        cpu = time.process_time()
        predicted = [split(text) for text, _ in docs]
        seconds = time.process_time() - cpu
        tp = fp = fn = 0
        for (_, gold), pred in zip(docs, predicted):
            g, p = _ends(gold), _ends(pred)
            tp += len(g & p)
            fp += len(p - g)
            fn += len(g - p)
        precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        print(f"| {name} | {len(docs) / max(seconds, 1e-9):,.0f} | {precision:.3f} | {recall:.3f} | {f1:.3f} |")


if __name__ == "__main__":
    main()
