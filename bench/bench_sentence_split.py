"""Sentence splitters on RAGBench documents: speed and agreement with RAGBench's own
sentence boundaries (``documents_sentences``).

Agreement is boundary F1: each document's sentence ends, counted in non-white-space
characters (so white space a splitter keeps or drops does not matter), compared with
the ends RAGBench's sentences give. Documents whose RAGBench sentences do not rebuild
the document text are left out (counted in the header). Speed is documents per second
of CPU time on the same documents, one run after a warm-up call.

    nice .venv/bin/python bench/bench_sentence_split.py [--per-subset 150]

``--languages`` measures instead how often a unit of ``split_sentences`` / ``split_blocks``
still holds two or more sentences, per language, before (the splitter of ``--before``, a
git revision: always English rules, every cut without white space after it re-joined) and
after (the language given or detected): on the shared multilingual passages and on
Debian's reference manual in Japanese, Chinese and German (``apt-get install
debian-reference-ja debian-reference-zh-cn debian-reference-de``), extracted as ingest
does. A sentence end inside a unit is a full stop, question or exclamation mark of any
script (``。！？।॥؟۔።။``, or ``.!?`` after a word of two letters) followed by the start of
another sentence (a capital or a letter of a script without case): a rough count, the
same for both splitters.

    nice .venv/bin/python bench/bench_sentence_split.py --languages [--before main]
"""

from __future__ import annotations

import argparse
import glob
import re
import subprocess
import sys
import time
import types
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import regex

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


_INNER_END = regex.compile(
    r"(?:[。！？][」』）”]*(?=[^\s」』）”。！？])|(?:(?<=\p{L}\p{L})[.!?]|[।॥؟۔።။])[\"'”’)]*\s+(?=[\p{Lu}\p{Lo}]))"
)
_DEBIAN = Path("/usr/share/debian-reference")


def _previous_splitter(revision: str) -> types.ModuleType:
    """``rag_eval/text/sentences.py`` as it was at ``revision`` (git), as a module."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(["git", "-C", str(root), "show", f"{revision}:rag_eval/text/sentences.py"],
                            check=True, capture_output=True, text=True).stdout
    module = types.ModuleType("sentences_before")
    exec(compile(source, f"{revision}:rag_eval/text/sentences.py", "exec"), module.__dict__)  # noqa: S102
    return module


def _language_documents(per_language: int) -> dict[str, list[tuple[str, list[tuple[int, int, str]] | None, str]]]:
    """{corpus: [(text, blocks or None, language)]}: shared passages per language, Debian pages."""
    import json

    out: dict[str, list[tuple[str, list[tuple[int, int, str]] | None, str]]] = defaultdict(list)
    folder = shared_data_dir() / "multilingual"
    for path in sorted(folder.glob("qa_*.jsonl")):
        seen: set[str] = set()
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                key = f"passages {row['language']}"
                passage = row["contexts"][0]
                if passage not in seen and len(out[key]) < per_language:
                    seen.add(passage)
                    out[key].append((passage, None, row["language"]))
    from rag_eval.rag.extract.html import extract_html

    for suffix, language in (("ja", "ja"), ("zh-cn", "zh"), ("de", "de")):
        for page in sorted(_DEBIAN.glob(f"*.{suffix}.html")):
            text, spans = extract_html(page.read_text(encoding="utf-8")).assemble()
            out[f"Debian reference {suffix}"].append((text, [(b.start, b.end, b.kind) for b in spans], language))
    return dict(sorted(out.items()))


def _multi_sentence_share(units: list[str]) -> tuple[float, int]:
    return sum(bool(_INNER_END.search(u)) for u in units) / max(len(units), 1), max(map(len, units), default=0)


def languages(per_language: int, revision: str) -> None:
    from rag_eval.text.sentences import split_blocks, split_sentences

    before = _previous_splitter(revision)
    split_sentences("Lädt das Modell der Spracherkennung vor der Messung.")  # its one-off load is not a document's
    print(f"Units holding two or more sentences, before ({revision}) and after; longest unit in characters\n")
    print("| corpus | documents | units before | share 2+ before | longest before | units after | share 2+ after "
          "| longest after | ms/doc before | ms/doc after (CPU) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for corpus, docs in _language_documents(per_language).items():
        old: list[str] = []
        new: list[str] = []
        seconds = seconds_before = 0.0
        for text, blocks, _ in docs:
            cpu = time.process_time()
            old += [u for u, _, _ in (before.split_blocks(text, blocks) if blocks else before.split_sentences(text))]
            seconds_before += time.process_time() - cpu
            cpu = time.process_time()
            new += [u for u, _, _ in (split_blocks(text, blocks) if blocks else split_sentences(text))]
            seconds += time.process_time() - cpu
        (share_old, long_old), (share_new, long_new) = _multi_sentence_share(old), _multi_sentence_share(new)
        print(f"| {corpus} | {len(docs)} | {len(old)} | {share_old:.1%} | {long_old:,} | {len(new)} | "
              f"{share_new:.1%} | {long_new:,} | {1000 * seconds_before / max(len(docs), 1):.1f} | "
              f"{1000 * seconds / max(len(docs), 1):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-subset", type=int, default=150, help="documents per RAGBench subset")
    parser.add_argument("--languages", action="store_true", help="units of 2+ sentences per language, before/after")
    parser.add_argument("--per-language", type=int, default=100, help="passages per language (--languages)")
    parser.add_argument("--before", default="main", help="git revision of the splitter before (--languages)")
    args = parser.parse_args()
    if args.languages:
        languages(args.per_language, args.before)
        return
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
