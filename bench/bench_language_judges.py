"""Benchmark of the no-key judges in every language of ``shared/data/multilingual/``.

Per language, the AUROC of each no-key judge (``lexical``, ``local``) at telling apart

(a) the QA passage's own sentence that holds the gold answer (grounded), against
(b) that sentence with its answer swapped for another question's answer that is not in the
    passage (a one-fact hallucination), and against
(c) the answer-holding sentence of an unrelated passage of the same language,

each with the passage as the only document; the score is the judge's adherence (and, for
the local judge, the sentence's P(supported)). Plus the human-labelled Japanese (JNLI) and
Korean (KLUE) supported / not-supported pairs (premise as document, hypothesis as
response). Every figure is also shown as a ratio to English's on the same kind of data
(TyDi QA English; the shared data has no English NLI pairs, so the NLI rows have none),
and the local judge's rows/s per language beside English's.

Hold-out: rows are split by position, even rows to tune on (``--half tune``), odd rows to
report (``--half report``, the default): the choices made in the judges (which languages
use the encoder, the word vectors' buckets) were made looking at the tuning half only.

The passage's sentences for the cases are cut here at sentence-final punctuation (and, in
Thai, at spaces), so the cases do not change with the splitter; the judges get the
passage through ``item_from_texts`` like a user's row, and detect the language themselves.

    PYTHONPATH=$PWD .venv/bin/python -m bench.bench_language_judges [--half report] [--limit 250] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import regex

from rag_eval.config import shared_data_dir
from rag_eval.judges.lexical import LexicalJudge
from rag_eval.judges.local import LocalJudge
from rag_eval.schema import EvalItem, JudgeStatus
from rag_eval.text.sentences import item_from_texts

QA_FILES = ("qa_tydiqa_goldp_dev.jsonl", "qa_jsquad_valid.ja.jsonl", "qa_cmrc2018_dev.zh.jsonl",
            "qa_iapp_wikiqa_test.th.jsonl")
NLI_FILES = ("nli_jnli_valid.ja.jsonl", "nli_klue_dev.ko.jsonl")
KINDS = ("swap", "unrelated")
_CUT = regex.compile(r"(?<=[。！？!?।॥؟])\s*|(?<=[.;۔])\s+|\n+")
_THAI_CUT = regex.compile(r"\s+")
MAX_SENTENCE = 400  # characters of a case sentence, around the answer


def case_sentences(passage: str, language: str) -> list[tuple[int, int]]:
    """(start, end) of the passage's sentences for building cases (see the module docstring)."""
    cut = _THAI_CUT if language == "th" else _CUT
    spans, start = [], 0
    for m in cut.finditer(passage):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(passage):
        spans.append((start, len(passage)))
    return spans


def answer_sentence(row: dict) -> tuple[str, int] | None:
    """The sentence holding the row's answer and the answer's offset in it."""
    passage, answer = row["contexts"][0], row["answer"]
    at = int((row.get("meta") or {}).get("answer_start", passage.find(answer)))
    if at < 0 or passage[at:at + len(answer)] != answer:
        return None
    language = row["language"]
    for start, end in case_sentences(passage, language):
        if start <= at and at + len(answer) <= end:
            if language == "th":  # Thai phrases are short: the answer's phrase and its neighbours
                spans = case_sentences(passage, language)
                k = spans.index((start, end))
                start, end = spans[max(k - 1, 0)][0], spans[min(k + 1, len(spans) - 1)][1]
            if end - start > MAX_SENTENCE:  # a window around the answer
                start = max(start, at - MAX_SENTENCE // 2)
                end = min(end, start + MAX_SENTENCE)
            return passage[start:end], at - start
    return None


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def qa_cases(rows: list[dict], half: str) -> dict[str, list[tuple[EvalItem, int, str]]]:
    """Per language: (item, label 1 = grounded, kind) for the chosen half of the rows."""
    by_language: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_language[row["language"]].append(row)
    out: dict[str, list[tuple[EvalItem, int, str]]] = {}
    for language, group in by_language.items():
        found = [(row, answer_sentence(row)) for row in group]
        usable = [(row, s) for row, s in found if s is not None]
        cases = []
        for i, (row, (sentence, at)) in enumerate(usable):
            if (i % 2 == 0) != (half == "tune"):
                continue
            passage, answer = row["contexts"][0], row["answer"]
            other = next((r["answer"] for r, _ in usable[i + 1:] + usable[:i]
                          if r["answer"] not in passage and r["answer"] != answer), None)
            unrelated = next((s for r, (s, _) in usable[i + len(usable) // 2:] + usable[:i + len(usable) // 2]
                              if r["contexts"][0] != passage and s not in passage), None)
            swapped = sentence[:at] + other + sentence[at + len(answer):] if other else None
            for kind, label, response in (("grounded", 1, sentence), ("swap", 0, swapped),
                                          ("unrelated", 0, unrelated)):
                if response:
                    item = item_from_texts(f"{row['id']}:{kind}", row["question"], [passage], response,
                                           response_sentences=[response])
                    cases.append((item, label, kind))
        out[language] = cases
    return out


def nli_cases(rows: list[dict], half: str) -> list[tuple[EvalItem, int, str]]:
    cases = []
    for i, row in enumerate(rows):
        if (i % 2 == 0) != (half == "tune"):
            continue
        item = item_from_texts(row["id"], "", [row["contexts"][0]], row["answer"], response_sentences=[row["answer"]])
        cases.append((item, int(row["label"] == "supported"), "nli"))
    return cases


def auroc(positives: list[float], negatives: list[float]) -> float | None:
    """P(a positive scores above a negative), ties counted half."""
    if not positives or not negatives:
        return None
    pos, neg = np.asarray(positives)[:, None], np.asarray(negatives)[None, :]
    return float((pos > neg).mean() + 0.5 * (pos == neg).mean())


def judge_scores(judge, cases: list[tuple[EvalItem, int, str]]) -> tuple[dict, float, dict]:
    """Per kind, (grounded scores, negative scores) by score name; rows/s; statuses."""
    items = [c[0] for c in cases]
    t0 = time.perf_counter()
    results = judge.judge(items)
    rate = len(items) / max(time.perf_counter() - t0, 1e-9)
    statuses: dict[str, int] = defaultdict(int)
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (_, label, kind), result in zip(cases, results):
        statuses[str(result.status.value)] += 1
        if result.status is not JudgeStatus.OK or result.labels is None:
            continue  # never an average's 0: counted in the statuses
        labels = result.labels
        values = {"adherence": labels.adherence_probability}
        if labels.support_probabilities:
            values["sentence"] = min(labels.support_probabilities.values())
        for name, value in values.items():
            if value is not None:
                scores[name][f"{kind}:{label}"].append(float(value))
    return scores, rate, dict(statuses)


def figures(scores: dict, kinds: tuple[str, ...]) -> dict[str, float | None]:
    out = {}
    for name, by_case in scores.items():
        for kind in kinds:
            if kind == "nli":
                out[f"{name}:nli"] = auroc(by_case.get("nli:1", []), by_case.get("nli:0", []))
            else:
                out[f"{name}:{kind}"] = auroc(by_case.get("grounded:1", []), by_case.get(f"{kind}:0", []))
    return out


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _fmt(value: float | None, ratio_to: float | None = None) -> str:
    if value is None:
        return "-"
    if ratio_to:
        return f"{value:.3f} ({value / ratio_to:.2f})"
    return f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default: rag_eval.config)")
    parser.add_argument("--half", choices=("tune", "report"), default="report")
    parser.add_argument("--limit", type=int, default=None, help="at most this many rows per language and half")
    parser.add_argument("--languages", default=None, help="comma-separated languages (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    folder = (args.data or shared_data_dir()) / "multilingual"
    qa_rows = [row for name in QA_FILES for row in load(folder / name)]
    cases = qa_cases(qa_rows, args.half)
    nli = {name.split(".")[-2]: nli_cases(load(folder / name), args.half) for name in NLI_FILES}
    wanted = set(args.languages.split(",")) if args.languages else None
    local = LocalJudge()
    local.start()
    judges: dict[str, LexicalJudge | LocalJudge] = {"lexical": LexicalJudge(), "local": local}
    for judge in judges.values():  # warm-up: models, stop words and the detector loaded before any timing
        judge.judge([c[0] for group in (*cases.values(), *nli.values()) for c in group[:3]])
    table: dict[str, dict] = {}
    languages = ["en"] + sorted(lang for lang in cases if lang != "en")
    for language in languages:
        if wanted and language not in wanted and language != "en":
            continue
        qa = cases[language][: 3 * args.limit] if args.limit else cases[language]
        row: dict = {"rows": sum(label for _, label, _ in qa)}
        for name, judge in judges.items():
            scores, rate, statuses = judge_scores(judge, qa)
            row[name] = figures(scores, KINDS)
            row[f"{name}:statuses"] = statuses
            row[f"{name}:rows_per_s"] = rate
            if language in nli:
                pairs = nli[language][: 2 * args.limit] if args.limit else nli[language]
                nli_scores, _, nli_statuses = judge_scores(judge, pairs)
                row[name].update(figures(nli_scores, ("nli",)))
                row[f"{name}:nli_statuses"] = nli_statuses
        table[language] = row
        print(f"{language}: {json.dumps(row, default=str)}", file=sys.stderr, flush=True)
    english = table["en"]
    print(f"\nJudges by language, {args.half} half of shared/data/multilingual (commit {commit()}): AUROC, "
          "(ratio to English's on the same kind of data)\n")
    columns = [(name, score, kind) for name in judges for score in ("adherence", "sentence")
               for kind in (*KINDS, "nli") if not (name == "lexical" and score == "sentence")]
    header = ["language", "rows"] + [f"{j} {s} {k}" for j, s, k in columns] + ["local rows/s (ratio)", "not ok"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for language, row in table.items():
        cells = [language, str(row["rows"])]
        for name, score, kind in columns:
            value = row[name].get(f"{score}:{kind}")
            base = english[name].get(f"{score}:{kind}") if kind != "nli" and language != "en" else None
            cells.append(_fmt(value, base))
        rate = row["local:rows_per_s"]
        cells.append(f"{rate:.0f} ({rate / english['local:rows_per_s']:.2f})")
        not_ok = {f"{j}:{s}": n for j in judges for key in (f"{j}:statuses", f"{j}:nli_statuses")
                  for s, n in row.get(key, {}).items() if s != "ok"}
        cells.append(", ".join(f"{k} {n}" for k, n in not_ok.items()) or "0")
        print("| " + " | ".join(cells) + " |")
    if args.out:
        args.out.write_text(json.dumps({"commit": commit(), "half": args.half, "table": table}, indent=1) + "\n",
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
