"""Fidelity of the LLM judge's parsing path on real judge output.

RAGBench's labels are themselves GPT-4 judge output, with all the quirks of real
answers (null verdicts, malformed or hallucinated keys, special tokens). Here the
local OpenAI-compatible server answers each row's prompt with that row's own labels
(as JSON), and we check that the judge path (HTTP -> parsing -> key validation ->
output row) gives the same TRACe scores as scoring the labels directly in ``clean``
mode. It measures the parser, not a model.

    .venv/bin/python -m bench.bench_judge_replay [--subsets covidqa hotpotqa ...] [--limit N]

Needs the shared data (RAG_EVAL_SHARED_DATA). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script too: the local test server lives in tests/
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from harness.openai_server import start_server
from rag_eval.config import shared_data_dir
from rag_eval.io.rows import RowError, iter_rows
from rag_eval.judges.llm import LLMJudge
from rag_eval.judges.prompts import trace_messages
from rag_eval.llm.config import LLMConfig
from rag_eval.metrics.trace import score_ragbench_row
from rag_eval.runs.records import build_record, to_file_row
from rag_eval.runs.sources import SourceItem
from rag_eval.text.sentences import item_from_row

METRICS = ("context_relevance", "context_utilization", "completeness", "adherence")


def label_answer(row: dict) -> str:
    return json.dumps({
        "relevance_explanation": row.get("relevance_explanation"),
        "all_relevant_sentence_keys": row.get("all_relevant_sentence_keys"),
        "overall_supported_explanation": row.get("overall_supported_explanation"),
        "overall_supported": row.get("adherence_score"),
        "sentence_support_information": row.get("sentence_support_information"),
        "all_utilized_sentence_keys": row.get("all_utilized_sentence_keys"),
    })


def same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), abs_tol=1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subsets", nargs="+", default=None)
    parser.add_argument("--limit", type=int, default=None, help="rows per subset")
    args = parser.parse_args()
    base = shared_data_dir() / "ragbench" / "parquet"
    subsets = args.subsets or sorted(p.name for p in base.iterdir() if (p / "validation.parquet").is_file())

    server = start_server()
    answers: dict[str, str] = {}
    server.set_handler(lambda body: answers[body["messages"][1]["content"]])
    print("Judge-path fidelity on RAGBench's GPT-4 labels (validation split, scores in clean mode)\n")
    print("| subset | rows | ok | repaired | failed | rows with dropped keys | rows with inferred fields "
          "| all 4 scores identical | labels contradict themselves | other differences |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    totals: Counter = Counter()
    try:
        for subset in subsets:
            rows = [r for _, r in iter_rows(base / subset / "validation.parquet") if not isinstance(r, RowError)]
            rows = rows[: args.limit] if args.limit else rows
            items = [item_from_row(r, default_id=str(i)) for i, r in enumerate(rows)]
            for row, item in zip(rows, items):
                answers[trace_messages(item)[1]["content"]] = label_answer(row)
            with tempfile.TemporaryDirectory() as cache:
                judge = LLMJudge(LLMConfig(model="replay", base_url=server.base_url, cache_dir=cache, max_retries=0),
                                 consistent_labels=False)  # replay the labels exactly as RAGBench has them
                results = judge.judge(items)
            c: Counter = Counter()
            for row, item, result in zip(rows, items, results):
                c["rows"] += 1
                c[result.status.value] += 1
                c["dropped"] += bool(result.extra.get("dropped_keys"))
                c["derived"] += bool(result.extra.get("derived_fields") or result.extra.get("missing_response_keys"))
                if result.status.usable:
                    got = to_file_row(build_record(SourceItem(0, item.id, item=item), result, "clean"))
                    want = score_ragbench_row(row, "clean")
                    identical = all(same(got[m], getattr(want, m)) for m in METRICS)
                    labels = result.labels
                    contradiction = bool(labels.overall_supported) != (not labels.unsupported_response_sentence_keys)
                    c["identical"] += identical
                    c["contradictory"] += contradiction
                    c["unexplained"] += (not identical) and not contradiction
            failed = c["rows"] - c["ok"] - c["repaired"]
            print(f"| {subset} | {c['rows']} | {c['ok']} | {c['repaired']} | {failed} | {c['dropped']} | "
                  f"{c['derived']} | {c['identical']} ({100 * c['identical'] / max(c['rows'], 1):.1f}%) | "
                  f"{c['contradictory']} | {c['unexplained']} |")
            totals.update(c)
    finally:
        server.stop()
    failed = totals["rows"] - totals["ok"] - totals["repaired"]
    print(f"| **all** | {totals['rows']} | {totals['ok']} | {totals['repaired']} | {failed} | {totals['dropped']} | "
          f"{totals['derived']} | {totals['identical']} ({100 * totals['identical'] / max(totals['rows'], 1):.1f}%) | "
          f"{totals['contradictory']} | {totals['unexplained']} |")
    print("\n'labels contradict themselves': overall_supported disagrees with the per-sentence verdicts "
          "(the judge keeps the sentence verdicts; --consistency-check would re-ask). 'other differences': "
          "score differences on rows without such a contradiction.")


if __name__ == "__main__":
    main()
