"""Calibration of the local judge: seeded and reproducible, stored with provenance,
its figures cross-validated (each row scored by a calibration fitted without it), each metric
left at the base judge unless moving it helps, refused under 20 rows, and used by
``--judge local:NAME`` runs that record it."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.judges.calibration import load_calibration
from rag_eval.judges.local import LocalJudge, LocalModel
from rag_eval.labels.calibrate import (
    HEAD_ALPHAS,
    DecisionRule,
    TooFewRows,
    calibrate,
    calibration_report,
    cross_validate,
    labelled_rows,
)
from tests.conftest import DATA_DIR

SAMPLE = DATA_DIR / "ragbench_msmarco_24.jsonl"  # one domain, 24 rows: enough to cross-validate
SMALL = DATA_DIR / "ragbench_sample.jsonl"  # 14 rows: too few
VERSION = LocalModel.load().version  # of the committed local judge


def _calibrate(name: str, seed: int = 3) -> dict:
    result = CliRunner().invoke(cli, ["calibrate", str(SAMPLE), "--name", name, "--seed", str(seed)])
    assert result.exit_code == 0, result.output
    assert "Cross-validated over the labelled rows" in result.output
    return load_calibration(name)


def _rows() -> list:
    judge = LocalJudge()
    rows, errors = labelled_rows([json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()],
                                 judge.embedder)
    assert not errors
    return rows


def test_under_twenty_rows_the_fit_is_refused_and_nothing_is_stored(rag_eval_home):
    result = CliRunner().invoke(cli, ["calibrate", str(SMALL), "--name", "tiny"])
    assert result.exit_code != 0
    assert "calibration refused: 14 labelled row(s); at least 20" in result.output
    assert not (rag_eval_home / "calibrations" / "tiny.json").exists()
    # the former spelling, `rag-eval judge --calibrate`, still works and says what replaced it
    old = CliRunner().invoke(cli, ["judge", "--judge", "local", "--calibrate", str(SMALL), "--name", "tiny"])
    assert old.exit_code == result.exit_code and "deprecated; use `rag-eval calibrate" in old.output
    assert "calibration refused: 14 labelled row(s)" in old.output
    with pytest.raises(TooFewRows):
        cross_validate(LocalModel.load(), _rows()[:19])


def test_calibration_is_reproducible_with_provenance_and_cross_validated_figures(rag_eval_home):
    a = _calibrate("dom-a")
    b = _calibrate("dom-b")
    assert a["fitted"] == b["fitted"] and a["cross_validation"] == b["cross_validation"]
    assert a["format"] == 2 and a["source"]["sha256"] == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert a["base_version"] == VERSION and a["seed"] == 3 and len(a["ids"]) == 24
    assert (rag_eval_home / "calibrations" / "dom-a.json").exists()
    cv = a["cross_validation"]
    assert cv["rows"] == 24 and cv["folds"] == 5
    for metric in ("relevance", "utilization", "completeness", "adherence", "verdict"):
        m = cv["metrics"][metric]
        # every figure is a number with an interval around it and a decision in words
        assert m["before_interval"][0] <= m["before"] <= m["before_interval"][1]
        assert m["after_interval"][0] <= m["after"] <= m["after_interval"][1]
        assert m["decision"].startswith(("calibrated", "kept the base judge", "not moved", "moved together"))
    # A metric left at the base judge is stored with shrinkage 0, and its fitted value is the base one.
    heads = ("support_head", "utilization_head", "relevance_head", "rates_together")
    assert {w for d, w in cv["shrinkage"].items() if d not in heads} <= {0.0, 0.25, 0.5, 0.75, 1.0}
    assert {cv["shrinkage"][d] for d in heads} <= {0.0, *HEAD_ALPHAS}  # 0 = the shipped sentence head
    for d in heads:  # each decision stored with its figure and in words
        assert d not in cv["decisions"] or cv["decisions"][d]["decision"].startswith(("adapted", "kept", "moved"))
    if cv["shrinkage"]["support_head"]:
        assert len(a["fitted"]["support_coef_delta"]) == len(LocalModel.load().support.coef)
    if cv["shrinkage"]["verdict"] == 0.0:
        assert a["fitted"]["support_threshold"] == LocalModel.load().support_threshold
    assert cv["auroc"]["before"]["measured"] and cv["auroc"]["after"]["measured"]  # 8 hallucinated, 16 grounded

    # The figures are cross-validated: recomputed from the rows they match.
    again = cross_validate(LocalModel.load(), _rows(), seed=3)
    assert again["metrics"] == cv["metrics"]

    other = CliRunner().invoke(cli, ["calibrate", str(SAMPLE), "--name", "dom-a"])
    assert other.exit_code == 2 and "exists" in other.output  # an input error


def test_a_metric_that_does_not_improve_stays_at_the_base_judge():
    """The rule, on the rows: a move is kept only when it lowers the cross-validated error
    by more than its standard error, so the chosen calibration is never worse than the
    base judge on the error it was chosen by."""
    rows = _rows()
    cv = cross_validate(LocalModel.load(), rows, seed=0)
    for metric in ("relevance", "utilization", "adherence", "verdict"):
        m = cv["metrics"][metric]
        if cv["shrinkage"][metric] == 0.0:
            assert m["decision"].startswith("kept the base judge")
    # With an impossible bar nothing moves, and after == before everywhere.
    strict = cross_validate(LocalModel.load(), rows, seed=0, rule=DecisionRule(min_z=1e9))
    assert set(strict["shrinkage"].values()) == {0.0}
    for m in strict["metrics"].values():
        assert m["after"] == m["before"]


def test_auroc_with_too_few_of_a_class_is_unmeasured_not_zero():
    rows = [r for r in _rows() if r.truth["adherence"] == 1.0]  # 16 grounded rows, no hallucinated one
    rows = rows + [r for r in _rows() if r.truth["adherence"] == 0.0][:4]
    cv = cross_validate(LocalModel.load(), rows, seed=0)
    auroc = cv["auroc"]["before"]
    assert auroc["measured"] is False and "4 hallucinated" in auroc["reason"] and "value" not in auroc
    report = {r["figure"]: r for r in calibration_report({"cross_validation": cv})}
    assert report["hallucination AUROC"]["decision"].startswith("unmeasured: 4 hallucinated")


def test_a_format_1_calibration_still_loads_and_is_shown(rag_eval_home):
    """Calibrations stored before cross-validation (a 70/30 split) keep working."""
    old = {"name": "old-style", "base_version": VERSION, "seed": 0, "holdout": 0.3,
           "fit_row_ids": ["a"] * 10, "held_out_row_ids": ["b"] * 4,
           "fitted": {"relevance_rate_shift": 0.01, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
                      "adherence_logit_shift": 0.1, "support_threshold": 0.7, "weight": 0.5, "n_rows": 10.0},
           "base_values": {"support_threshold": 0.717},
           "held_out": {"rows": 4, "before": {"rmse_relevance": 0.2, "auroc": None},
                        "after": {"rmse_relevance": 0.1, "auroc": None}}}
    folder = rag_eval_home / "calibrations"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old-style.json").write_text(json.dumps(old), encoding="utf-8")
    judge = LocalJudge(calibration="old-style")
    assert judge.model.support_threshold == 0.7 and judge.name.endswith("+old-style")
    report = {r["figure"]: r for r in calibration_report(load_calibration("old-style"))}
    assert report["rmse_relevance"]["before"] == 0.2
    assert "under 20 rows" in report["rmse_relevance"]["decision"]
    assert report["auroc"]["decision"].startswith("unmeasured")


def test_judge_local_name_uses_and_records_the_calibration(rag_eval_home, tmp_path):
    cal = _calibrate("dom-c")
    out = tmp_path / "judged.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(SAMPLE), "--judge", "local:dom-c", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "calibrated with 'dom-c'" in result.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["judge"] for r in rows} == {f"local:{VERSION}+dom-c"}
    judge = LocalJudge(calibration="dom-c")
    assert judge.model.support_threshold == cal["fitted"]["support_threshold"]
    assert judge.calibration is not None and judge.calibration["sha256"] == cal["sha256"]
    missing = CliRunner().invoke(cli, ["judge", str(SAMPLE), "--judge", "local:nope", "--out", str(out)])
    assert missing.exit_code == 2 and "no calibration 'nope'" in missing.output


def test_a_pipeline_configuration_names_the_calibration(rag_eval_home, tmp_path):
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.config import RagConfig

    cal = _calibrate("dom-yaml")
    path = tmp_path / "system.yaml"
    path.write_text("name: calibrated\njudge:\n  kind: local\n  calibration: dom-yaml\n", encoding="utf-8")
    config = RagConfig.from_yaml(path)
    judge = build_judge(config.judge)
    assert isinstance(judge, LocalJudge) and judge.calibration is not None
    assert judge.calibration["sha256"] == cal["sha256"] and judge.name.endswith("+dom-yaml")
    assert config.config_hash != RagConfig(name="calibrated").config_hash  # a calibrated judge is another system


def test_an_adapted_support_head_is_applied_and_checked():
    """A calibration may carry the support head's change (coefficients and intercept in
    its standardised space), which changes P(supported) and so can change the ranking."""
    from rag_eval.judges.calibration import apply_calibration
    from rag_eval.labels.calibrate import fit_sentence_head

    model = LocalModel.load()
    rows = _rows()
    coef_delta, intercept_delta = fit_sentence_head(model, rows, "support_head", alpha=10.0)
    assert len(coef_delta) == len(model.support.coef) and any(coef_delta)
    strong, _ = fit_sentence_head(model, rows, "support_head", alpha=1e6)  # shrunk all the way to the shipped head
    assert max(abs(v) for v in strong) < 1e-3
    fitted = {"relevance_rate_shift": 0.0, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
              "adherence_logit_shift": 0.0, "support_threshold": model.support_threshold,
              "support_coef_delta": coef_delta, "support_intercept_delta": intercept_delta}
    adapted = apply_calibration(model, fitted)
    assert list(adapted.support.coef) == pytest.approx(list(model.support.coef + coef_delta))
    assert adapted.relevance is model.relevance  # only the support head changes
    with pytest.raises(ValueError, match="coefficients"):
        apply_calibration(model, {**fitted, "support_coef_delta": coef_delta[:-1]})


def test_a_support_head_move_that_ranks_rows_worse_or_cannot_be_checked_is_refused():
    from rag_eval.labels.calibrate import _ranks_worse

    truth = np.array([1] * 10 + [0] * 5, dtype=float)  # 1 = grounded
    good = np.r_[np.linspace(0.6, 0.9, 10), np.linspace(0.1, 0.4, 5)]
    worse = good.copy()
    worse[10] = 0.95  # a hallucinated row now ranks above every grounded one
    assert _ranks_worse(truth, good, worse)
    assert not _ranks_worse(truth, worse, good)
    assert not _ranks_worse(truth, good, good)
    # 3 hallucinated rows cannot measure an AUROC: the ranking cannot be shown to survive
    assert _ranks_worse(truth[:13], good[:13], good[:13])


def _relabelled_rows(field: str) -> list:
    """The sample's rows with the document-sentence labels ``field`` replaced by a rule the
    shipped heads disagree with: the half of each row's document sentences *least* similar
    to the question is called relevant (and utilized sentences stay relevant, as the labels
    require), so its TRACe truth follows the new labels."""
    from rag_eval.judges.features import DOC_FEATURES

    raw = [json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()]
    col = DOC_FEATURES.index("q_cos")
    out = []
    for row, labelled in zip(raw, _rows()):
        q = labelled.feats.doc[:, col]
        far = {k for k, v in zip(labelled.item.document_keys, q) if v < np.median(q)}
        out.append(dict(row, **{field: sorted(far | set(row.get("all_utilized_sentence_keys") or []))}))
    rows, errors = labelled_rows(out, LocalJudge().embedder)
    assert not errors
    return rows


def test_document_sentence_labels_that_disagree_with_the_shipped_heads_adapt_the_relevance_head():
    """Issue 29, item 2: the relevance sentence head is refitted on the rows' document-sentence
    labels when that lowers the cross-validated error (by either criterion), the rate
    intercept is then decided on top of it, and the decision is stored with its figure
    before / after."""
    rows = _relabelled_rows("all_relevant_sentence_keys")
    assert all(r.relevant is not None and len(r.relevant) == len(r.item.document_keys) for r in rows)
    for criterion, judged_by in (("rmse", "rmse relevance"), ("sentences", "log_loss relevance_sentences")):
        cv = cross_validate(LocalModel.load(), rows, seed=0, rule=DecisionRule(head_criterion=criterion))
        assert cv["shrinkage"]["relevance_head"] in HEAD_ALPHAS
        step = cv["decisions"]["relevance_head"]
        assert step["judged_by"] == judged_by
        assert step["after"] < step["before"] and step["after_interval"][1] < step["before_interval"][0]
        assert step["decision"].startswith("adapted to this domain's document-sentence labels (relevant or not)")
        # The row-level figures follow: the relevance rate the adapted head feeds is much closer.
        m = cv["metrics"]["relevance"]
        assert m["after"] < m["before"] - 0.1
        assert cv["metrics"]["relevance_sentences"]["after"] < cv["metrics"]["relevance_sentences"]["before"]
    # The stored calibration carries the adapted head, and a judge using it predicts with it.
    cal = calibrate(LocalModel.load(), rows, "relabelled", seed=0)
    assert len(cal["fitted"]["relevance_coef_delta"]) == len(LocalModel.load().relevance.coef)
    report = {r["figure"]: r for r in calibration_report(cal)}
    assert cal["cross_validation"]["head_criterion"] == "rmse"  # the default, measured in bench_calibration
    assert report["log_loss relevance_sentences"]["decision"] == (
        cal["cross_validation"]["decisions"]["relevance_head"]["decision"])
    assert report["log_loss relevance_sentences"]["after"] < report["log_loss relevance_sentences"]["before"]
    step_row = report["step relevance_head: rmse relevance"]  # the decision's own figure, before / after it
    assert step_row["after"] < step_row["before"] and step_row["decision"].startswith("adapted")


def test_without_document_sentence_labels_the_relevance_and_utilization_heads_are_kept_with_a_note():
    raw = [json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()]
    without = [{k: v for k, v in row.items() if k != "all_utilized_sentence_keys"} for row in raw]
    rows, errors = labelled_rows(without, LocalJudge().embedder)
    assert not errors and all(r.utilized is None and r.relevant is not None for r in rows)
    rows = [dataclasses.replace(r, relevant=None) for r in rows]
    cv = cross_validate(LocalModel.load(), rows, seed=0)
    for decision, what in (("relevance_head", "relevant"), ("utilization_head", "utilized")):
        assert cv["shrinkage"][decision] == 0.0
        assert cv["decisions"][decision]["decision"] == (
            f"kept the shipped head: some rows lack document-sentence labels ({what} or not)")
        assert f"{decision.removesuffix('_head')}_sentences" not in cv["metrics"]  # no figure, not a 0
    assert "support_sentences" in cv["metrics"]  # the response-sentence labels are still used


def test_adapted_relevance_and_utilization_heads_round_trip_through_the_stored_calibration(rag_eval_home):
    """apply_calibration adds each adapted head's change (checked against the model's
    shape); stored as JSON and loaded by ``local:NAME`` it gives the same model."""
    from rag_eval.judges.calibration import apply_calibration
    from rag_eval.labels.calibrate import fit_sentence_head, save_calibration

    model = LocalModel.load()
    rows = _rows()
    rel = fit_sentence_head(model, rows, "relevance_head", 10.0)
    util = fit_sentence_head(model, rows, "utilization_head", 10.0)
    assert len(rel[0]) == len(model.relevance.coef) and any(rel[0]) and any(util[0])
    fitted = {"relevance_rate_shift": 0.0, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
              "adherence_logit_shift": 0.0, "support_threshold": model.support_threshold,
              "relevance_coef_delta": rel[0], "relevance_intercept_delta": rel[1],
              "utilization_coef_delta": util[0], "utilization_intercept_delta": util[1]}
    adapted = apply_calibration(model, fitted)
    assert list(adapted.relevance.coef) == pytest.approx(list(model.relevance.coef + rel[0]))
    assert adapted.utilization.intercept == pytest.approx(model.utilization.intercept + util[1])
    assert adapted.support is model.support  # only the adapted heads change
    with pytest.raises(ValueError, match="utilization head change has"):
        apply_calibration(model, {**fitted, "utilization_coef_delta": util[0][:-1]})
    save_calibration({"format": 2, "name": "heads", "base_version": model.version, "fitted": fitted,
                      "cross_validation": {"rows": 24, "folds": 5, "seed": 0, "shrinkage": {}, "metrics": {}}})
    loaded = LocalJudge(calibration="heads").model
    doc = rows[0].feats.doc
    assert loaded.relevance.predict(doc) == pytest.approx(adapted.relevance.predict(doc))
    assert loaded.utilization.predict(doc) == pytest.approx(adapted.utilization.predict(doc))


def test_a_format_2_calibration_stored_before_the_document_heads_still_loads(rag_eval_home):
    """A format-2 calibration written before the relevance / utilization heads could be
    adapted (no ``decisions``, no ``*_sentences`` document figures) loads and is shown."""
    model = LocalModel.load()
    old = {"format": 2, "name": "f2-old", "base_version": VERSION, "seed": 0, "row_ids": ["a"] * 24,
           "fitted": {"relevance_rate_shift": -0.05, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
                      "adherence_logit_shift": 0.0, "support_threshold": model.support_threshold,
                      "support_coef_delta": [0.01] * len(model.support.coef), "support_intercept_delta": 0.02,
                      "n_rows": 24.0},
           "base_values": {"support_threshold": model.support_threshold},
           "cross_validation": {
               "rows": 24, "folds": 5, "seed": 0,
               "shrinkage": {"support_head": 30.0, "verdict": 0.0, "adherence": 0.0, "utilization": 0.0,
                             "relevance": 1.0},
               "metrics": {"relevance": {"figure": "rmse", "meaning": "RMSE of context relevance", "before": 0.2,
                                         "before_interval": [0.15, 0.25], "after": 0.15,
                                         "after_interval": [0.11, 0.19], "change_interval": [-0.02, -0.005],
                                         "shrinkage": 1.0,
                                         "decision": "calibrated: shrinkage 1 lowers the cross-validated error"}},
               "auroc": {"before": {"measured": True, "value": 0.7}, "after": {"measured": True, "value": 0.72}}}}
    folder = rag_eval_home / "calibrations"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "f2-old.json").write_text(json.dumps(old), encoding="utf-8")
    judge = LocalJudge(calibration="f2-old")
    assert judge.model.relevance is not None and list(judge.model.relevance.coef) == list(model.relevance.coef)
    assert judge.model.support.intercept == pytest.approx(model.support.intercept + 0.02)
    report = {r["figure"]: r for r in calibration_report(load_calibration("f2-old"))}
    assert report["rmse relevance"]["after"] == 0.15 and report["hallucination AUROC"]["after"] == 0.72


def test_a_reviewed_run_gives_rows_with_document_sentence_labels(labelled_run):
    """The Judges page's path (calibrate_run -> export_rows -> labelled_rows) carries the
    reviewers' relevant and utilized sentences, aligned with each item's document keys."""
    from rag_eval.labels.exchange import export_rows

    store, run_id = labelled_run
    rows, errors = labelled_rows(export_rows(store, run_id, "gt"), LocalJudge().embedder)
    assert rows and not errors
    for r in rows:
        assert r.relevant is not None and r.utilized is not None
        assert len(r.relevant) == len(r.utilized) == len(r.item.document_keys)
    assert any(r.relevant.any() for r in rows)


def test_the_joint_decision_moves_what_no_single_decision_could_and_is_recorded():
    """Utilization alone lowers completeness and relevance alone raises it: the decision
    ``rates_together`` tries the document heads and rate intercepts still at the base judge
    together, under the same rule (gain beyond one standard error, no rate metric worse)."""
    from rag_eval.labels.calibrate import JOINT, JOINT_DECISIONS

    rows = _rows()
    cv = cross_validate(LocalModel.load(), rows, seed=0)
    free = [d for d in JOINT_DECISIONS if cv["decisions"][d]["weight"] == 0.0]
    if len(free) > 1:
        step = cv["decisions"][JOINT]
        assert step["judged_by"] == "rmse rates" and set(step["guards"]) == {"relevance", "utilization", "completeness"}
        assert "moves" not in step and "errors" not in step  # only figures are stored
        if step["weight"]:
            assert all(cv["shrinkage"][d] > 0 for d in free)
            assert all(after <= before for before, after in step["guards"].values())
        else:
            assert step["decision"].startswith("kept the base judge")
    without = cross_validate(LocalModel.load(), rows, seed=0, rule=DecisionRule(joint=False))
    assert JOINT not in without["decisions"] and without["shrinkage"][JOINT] == 0.0
    assert "rates" not in cv["metrics"]  # the joint figure is a criterion, not a reported metric
