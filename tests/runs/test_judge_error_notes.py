"""What Compare says about the judge beside a paired difference (issue 41, items 2 and 3),
one rule (``runs.compare.judge_error_notes``) for the Compare page, ``rag-eval compare``
and the report.

- The demo's top-2 and top-5 configurations scored by the local judge: the judge's random
  error is inside each paired interval already, so no difference "may come from the
  judge"; with no reviewed rows, one sentence says the configuration-dependent bias is not
  measured and how to measure it; reviewed rows of both runs measure it.
- Two runs of one configuration: no note and no message that contradicts the numbers.
- Reviewed rows whose residuals (judge - reviewer) differ between the runs by as much as the
  runs do: the difference may come from the judge."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.runs import run_dataset
from rag_eval.cli import cli
from rag_eval.judges.factory import build_judge
from rag_eval.labels.store import item_from_record, reviewed_scores, save_review
from rag_eval.rag.config import default_config
from rag_eval.report.html import write_report
from rag_eval.runs.compare import (
    compare_at_cutoff,
    compare_runs,
    differences_message,
    judge_error_notes,
    run_diff,
)
from rag_eval.runs.store import RunStore
from rag_eval.schema import Labels

JUDGE_NOTE = "may come from the judge"
NOT_MEASURED = "A judge bias that differs between configurations is not measured"


def test_k2_k5_get_no_judge_note_and_identical_runs_no_note_at_all(demo_collection, demo_questions, tmp_path):
    store = RunStore()
    config = default_config("demo")
    judge = build_judge(config)
    k2 = config.with_changes(**{"retrieval.k": 2})
    ids = [run_dataset(demo_questions, k2, demo_collection, store, judge=judge, name=name) for name in ("k2", "k2-again")]
    ids.append(run_dataset(demo_questions, config.with_changes(**{"retrieval.k": 5}), demo_collection, store,
                           judge=judge, name="k5"))
    runs = [store.get_run(i) for i in ids]
    items = {i: store.items(i) for i in ids}
    result = compare_at_cutoff(items)
    paired = {(p["run"], p["metric"]): p for p in result["paired"]}
    completeness = paired[(ids[2], "completeness")]
    assert completeness["n_pairs"] == 20 and completeness["ci_high"] < 0  # the paired interval excludes 0

    notes = judge_error_notes(runs, result["paired"], items, reviewed_scores(store, ids))
    assert not any(JUDGE_NOTE in n for n in notes)  # random judge error is inside the paired interval
    assert [n for n in notes if n.startswith(NOT_MEASURED)] == notes and len(notes) == 1  # said once
    assert "k5 vs k2 (baseline): 0 and 0 reviewed rows" in notes[0] and "k2-again" not in notes[0]
    assert "rag-eval labels import" in notes[0] and "Review queue" in notes[0]  # how to measure it
    compared = CliRunner().invoke(cli, ["compare", "k2", "k2-again", "k5", "--json"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.output)["judge_error_notes"] == notes
    report = write_report(store, ["k2", "k2-again", "k5"], tmp_path / "report.html").read_text(encoding="utf-8")
    assert report.count(NOT_MEASURED) == 1 and JUDGE_NOTE not in report  # the report says the same, once

    # Two runs of one configuration: nothing to say about the judge, and every message agrees
    # with the 20 pairs of the paired table.
    same = {i: items[i] for i in ids[:2]}
    result = compare_at_cutoff(same)
    assert run_diff(runs[0], runs[1]) == []
    assert {p["n_pairs"] for p in result["paired"] if p["metric"] == "completeness"} == {20}
    assert judge_error_notes(runs[:2], result["paired"], same, reviewed_scores(store, ids[:2])) == []
    assert result["differences"] == [] and differences_message(result).startswith("No question differs: each of the 20")
    assert "mrr@2" in {p["metric"] for p in result["paired"]} and result["left_out"] == []  # MRR is compared
    printed = CliRunner().invoke(cli, ["compare", "k2", "k2-again"])
    assert printed.exit_code == 0, printed.output
    assert "No question differs" in printed.output and "note:" not in printed.output
    assert "Not compared" not in printed.output and "No question was scored by both" not in printed.output

    # Reviewed rows of both runs measure the bias: here the reviewer kept the judge's own labels
    # on four rows of each run, so the bias difference is about 0 and explains nothing.
    for run_id in (ids[0], ids[2]):
        for record in items[run_id][:4]:
            save_review(store, run_id, item_from_record(record), Labels.from_dict(record["labels"]), "ann")
    notes = judge_error_notes(runs, compare_at_cutoff(items)["paired"], items, reviewed_scores(store, ids))
    assert not any(JUDGE_NOTE in n or n.startswith(NOT_MEASURED) for n in notes)
    measured = next(n for n in notes if n.startswith("k5 vs k2 (baseline), completeness:"))
    assert "measured on reviewed rows" in measured and "4 and 4 reviewed rows" in measured
    assert measured.endswith("does not explain the difference -0.168")


def _items(judge: list[float]) -> list[dict]:
    return [{"id": f"q{i}", "status": "ok", "scores": {"completeness": v}} for i, v in enumerate(judge)]


def _run(run_id: str, k: int, kind: str | None = None) -> dict:
    return {"id": run_id, "name": f"k{k}", "config": {"retrieval": {"mode": "dense", "k": k}, "judge": {"kind": "local"}},
            **({"meta": {"kind": kind}} if kind else {})}


def test_a_bias_measured_on_reviewed_rows_that_covers_the_difference_earns_the_note():
    # The judge scores completeness 0.2 lower at top-5 (k5: 0.6 against 0.8) on every question,
    # but the reviewer scores both runs' rows alike: the judge's residual is 0.2 lower at top-5,
    # which is the whole difference.
    base_judge = [0.8, 0.9, 0.7, 0.8, 0.85, 0.75, 0.8, 0.9]
    items = {"a": _items(base_judge), "b": _items([v - 0.2 for v in base_judge])}
    human = {f"q{i}": {"completeness": v + (0.05 if i % 2 else -0.05)} for i, v in enumerate(base_judge)}
    reviewed = {"a": {i: human[i] for i in ("q0", "q1", "q2", "q3", "q4")},
                "b": {i: human[i] for i in ("q2", "q3", "q4", "q5", "q6")}}
    paired = compare_runs(items, ["completeness"])["paired"]
    assert paired[0]["ci_high"] < 0  # the paired interval excludes 0: random error cannot explain it
    runs = [_run("a", 2), _run("b", 5)]
    notes = judge_error_notes(runs, paired, items, reviewed)
    assert len(notes) == 1 and notes[0].startswith("k5 vs k2 (baseline), completeness: the difference -0.200 lies "
                                                   "within the judge's bias difference measured on reviewed rows")
    assert notes[0].endswith(JUDGE_NOTE + " rather than the systems") and "5 and 5 reviewed rows" in notes[0]
    # One reviewed row in a run measures nothing: the bias is then said to be unmeasured, once.
    notes = judge_error_notes(runs, paired, items, {"a": reviewed["a"], "b": {"q2": human["q2"]}})
    assert len(notes) == 1 and notes[0].startswith(NOT_MEASURED) and "1 and 5 reviewed rows" in notes[0]
    # Retrieval and answer-correctness differences come from no judge: nothing is said of them.
    hits = {r: [{**i, "retrieval": {"hit_rate@2": float(n % 2)}} for n, i in enumerate(v)] for r, v in items.items()}
    assert judge_error_notes(runs, compare_runs(hits, ["hit_rate@2"])["paired"], hits, reviewed) == []


def test_a_judge_only_run_is_never_the_same_configuration_as_a_rag_run():
    rag, given = _run("a", 5), _run("b", 5, kind="judge-given-responses")
    diff = run_diff(rag, given)
    assert diff[0] == {"path": "responses", "before": "retrieved and generated (dense top-5)",
                       "after": "given by the dataset"}
    assert run_diff(given, {**given, "config": {**given["config"], "retrieval": {"k": 9}}}) == []  # never acted
    assert run_diff(rag, rag) == []


def test_the_differences_message_agrees_with_the_paired_table():
    unpaired = compare_runs({"a": _items([0.5]), "b": [{"id": "other", "status": "ok",
                                                        "scores": {"completeness": 0.5}}]}, ["completeness"])
    assert differences_message(unpaired) == "No question was scored by both the baseline and another run."
    moved = compare_runs({"a": _items([0.5]), "b": _items([0.7])}, ["completeness"])
    assert differences_message(moved) is None
