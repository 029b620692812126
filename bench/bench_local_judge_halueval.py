"""The local judge on data it was not trained on: HaluEval's knowledge-grounded QA.

Each HaluEval QA line (RUCAIBox/HaluEval, MIT; Wikipedia knowledge from HotpotQA)
holds a knowledge passage, a question, the gold answer and an answer ChatGPT was asked
to hallucinate. Both answers are judged against the passage; the hallucination AUROC
(label = the hallucinated answer, score = 1 - P(grounded)) says how well the judge
separates them. The local judge was trained on RAGBench only (whose hotpotqa subset
shares HaluEval's Wikipedia source, but not these rows or answers).

Gold answers are short ("Delhi") and hallucinated ones are often longer sentences,
so the table also prints what answer length alone would score; a judge worth using
must beat it.

Usage::

    .venv/bin/python bench/bench_local_judge_halueval.py                # both QA files, 2,000 responses
    .venv/bin/python bench/bench_local_judge_halueval.py --limit 100    # first 100 lines of each file
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: harness/ beside rag_eval/

from harness.judge_training import calibration_error
from rag_eval.config import shared_data_dir
from rag_eval.judges.features import lexical_novelty
from rag_eval.judges.local import LocalJudge
from rag_eval.metrics.agreement import hallucination_auroc
from rag_eval.text.sentences import item_from_texts

FILES = ("qa_one-turn_data.jsonl", "qa_multi-turn_data.jsonl")


def load_pairs(folder: Path, name: str, limit: int | None) -> list[tuple[object, bool]]:
    """(EvalItem, is_hallucinated) for both answers of each line."""
    out = []
    with open(folder / name, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if limit is not None and number > limit:
                break
            row = json.loads(line)
            for kind, hallucinated in (("right_answer", False), ("hallucinated_answer", True)):
                item = item_from_texts(f"{name}:{number}:{kind}", row["question"], [row["knowledge"]], row[kind])
                out.append((item, hallucinated))
    return out


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default: rag_eval.config)")
    parser.add_argument("--limit", type=int, default=None, help="first N lines of each file")
    args = parser.parse_args(argv)

    folder = (args.data or shared_data_dir()) / "halueval"
    judge = LocalJudge()
    print(f"## {judge.name} on HaluEval QA (not seen in training)\n")
    print("| file | responses | ok | hallucination AUROC | lexical-novelty baseline AUROC | AUROC of answer length "
          "alone | ECE P(grounded) | flagged: hallucinated / right | pairs where the hallucinated answer is not longer | "
          "judge ranks the right answer higher in those | rows/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in FILES:
        pairs = load_pairs(folder, name, args.limit)
        t0 = time.perf_counter()
        results = judge.judge([item for item, _ in pairs])
        elapsed = time.perf_counter() - t0
        truth, predicted, lengths, novelty = [], [], [], []
        flagged: dict[bool, list[bool]] = {True: [], False: []}
        not_longer, right_wins = 0, 0  # pairs where length cannot give the answer away
        for k in range(0, len(pairs) - 1, 2):
            (right_item, _), (bad_item, _) = pairs[k], pairs[k + 1]
            right_res, bad_res = results[k], results[k + 1]
            if right_res.status.value == bad_res.status.value == "ok" and \
                    len(bad_item.response) <= len(right_item.response):
                not_longer += 1
                right_wins += right_res.labels.adherence_probability > bad_res.labels.adherence_probability
        for (item, hallucinated), result in zip(pairs, results):
            if result.status.value != "ok":
                continue  # counted in the "ok" column, never scored as 0
            truth.append(0.0 if hallucinated else 1.0)
            predicted.append(result.labels.adherence_probability)
            lengths.append(1.0 / (1.0 + len(item.response)))  # longer answer -> lower "adherence"
            novelty.append(1.0 - lexical_novelty([s.text for s in item.response_sentences],
                                                 [s.text for doc in item.documents for s in doc]))
            flagged[hallucinated].append(not result.labels.overall_supported)
        auroc, _ = hallucination_auroc(truth, predicted)
        length_auroc, _ = hallucination_auroc(truth, lengths)
        lexical_auroc, _ = hallucination_auroc(truth, novelty)
        ece = calibration_error(predicted, truth)
        rate = {k: sum(v) / max(len(v), 1) for k, v in flagged.items()}
        print(f"| {name} | {len(pairs)} | {len(truth)} | {_fmt(auroc)} | {_fmt(lexical_auroc)} | {_fmt(length_auroc)} | "
              f"{_fmt(ece)} | "
              f"{rate[True]:.2f} / {rate[False]:.2f} | {not_longer} | "
              f"{(right_wins / not_longer if not_longer else float('nan')):.2f} | {len(pairs) / elapsed:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
