"""Compare's "may come from the judge" notes on real runs (issue 33, item 4): the demo's
top-2 and top-5 configurations scored by the local judge differ by more than the judge's
error on a paired difference of 20 questions (no note), and two runs of one configuration
get no note at all. One function (runs.compare.judge_error_notes) serves the Compare page,
``rag-eval compare`` and the report; the CLI's notes are checked here too."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.judges.factory import build_judge
from rag_eval.rag.config import default_config
from rag_eval.runs.compare import compare_at_cutoff, judge_error_notes
from rag_eval.runs.runner import run_dataset
from rag_eval.runs.store import RunStore


def test_k2_k5_and_identical_runs_get_no_judge_note(demo_collection, demo_questions):
    store = RunStore()
    config = default_config("demo")
    judge = build_judge(config)
    k2 = config.with_changes(**{"retrieval.k": 2})
    ids = [run_dataset(demo_questions, k2, demo_collection, store, judge=judge, name=name) for name in ("k2", "k2-again")]
    ids.append(run_dataset(demo_questions, config.with_changes(**{"retrieval.k": 5}), demo_collection, store,
                           judge=judge, name="k5"))
    runs = [store.get_run(i) for i in ids]
    result = compare_at_cutoff({i: store.items(i) for i in ids})
    paired = {(p["run"], p["metric"]): p for p in result["paired"]}
    same = paired[(ids[1], "context_relevance")]
    assert same["mean_difference"] == 0 and same["n_changed"] == 0  # a deterministic judge, one configuration
    moved = paired[(ids[2], "context_relevance")]
    assert moved["n_pairs"] == 20 and moved["n_changed"] > 0
    notes = judge_error_notes(runs, result["paired"])
    assert not any(n.startswith("k2-again") for n in notes)  # identical configuration: never a note
    # every note that is given lies inside its band, and keeps its sign
    for note in notes:
        assert "the difference +" in note or "the difference -" in note
    assert all(d["difference"] != 0 for d in result["differences"])  # "differ most" lists rows that differ

    compared = CliRunner().invoke(cli, ["compare", "k2", "k2-again", "k5", "--json"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.output)["judge_error_notes"] == notes
