"""Calibration of the local judge: seeded and reproducible, stored with provenance,
its figures cross-validated (each row scored by a calibration fitted without it), each metric
left at the base judge unless moving it helps, refused under 20 rows, and used by
``--judge local:NAME`` runs that record it."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.judges.calibration import load_calibration
from rag_eval.judges.local import LocalJudge, LocalModel
from rag_eval.labels.calibrate import HEAD_ALPHAS, TooFewRows, calibration_report, cross_validate, labelled_rows
from tests.conftest import DATA_DIR

SAMPLE = DATA_DIR / "ragbench_msmarco_24.jsonl"  # one domain, 24 rows: enough to cross-validate
SMALL = DATA_DIR / "ragbench_sample.jsonl"  # 14 rows: too few
VERSION = LocalModel.load().version  # of the committed local judge


def _calibrate(name: str, seed: int = 3) -> dict:
    result = CliRunner().invoke(cli, ["judge", "--judge", "local", "--calibrate", str(SAMPLE), "--name", name,
                                      "--cal-seed", str(seed)])
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
    result = CliRunner().invoke(cli, ["judge", "--judge", "local", "--calibrate", str(SMALL), "--name", "tiny"])
    assert result.exit_code != 0
    assert "calibration refused: 14 labelled row(s); at least 20" in result.output
    assert not (rag_eval_home / "calibrations" / "tiny.json").exists()
    with pytest.raises(TooFewRows):
        cross_validate(LocalModel.load(), _rows()[:19])


def test_calibration_is_reproducible_with_provenance_and_cross_validated_figures(rag_eval_home):
    a = _calibrate("dom-a")
    b = _calibrate("dom-b")
    assert a["fitted"] == b["fitted"] and a["cross_validation"] == b["cross_validation"]
    assert a["format"] == 2 and a["source"]["sha256"] == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert a["base_version"] == VERSION and a["seed"] == 3 and len(a["row_ids"]) == 24
    assert (rag_eval_home / "calibrations" / "dom-a.json").exists()
    cv = a["cross_validation"]
    assert cv["rows"] == 24 and cv["folds"] == 5
    for metric in ("relevance", "utilization", "completeness", "adherence", "verdict"):
        m = cv["metrics"][metric]
        # every figure is a number with an interval around it and a decision in words
        assert m["before_interval"][0] <= m["before"] <= m["before_interval"][1]
        assert m["after_interval"][0] <= m["after"] <= m["after_interval"][1]
        assert m["decision"].startswith(("calibrated", "kept the base judge", "not moved"))
    # A metric left at the base judge is stored with shrinkage 0, and its fitted value is the base one.
    assert {w for d, w in cv["shrinkage"].items() if d != "support_head"} <= {0.0, 0.25, 0.5, 0.75, 1.0}
    assert cv["shrinkage"]["support_head"] in (0.0, *HEAD_ALPHAS)  # 0 = the shipped support head
    if cv["shrinkage"]["support_head"]:
        assert len(a["fitted"]["support_coef_delta"]) == len(LocalModel.load().support.coef)
    if cv["shrinkage"]["verdict"] == 0.0:
        assert a["fitted"]["support_threshold"] == LocalModel.load().support_threshold
    assert cv["auroc"]["before"]["measured"] and cv["auroc"]["after"]["measured"]  # 8 hallucinated, 16 grounded

    # The figures are cross-validated: recomputed from the rows they match.
    again = cross_validate(LocalModel.load(), _rows(), seed=3)
    assert again["metrics"] == cv["metrics"]

    other = CliRunner().invoke(cli, ["judge", "--judge", "local", "--calibrate", str(SAMPLE), "--name", "dom-a"])
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
    strict = cross_validate(LocalModel.load(), rows, seed=0, min_z=1e9)
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
    from rag_eval.labels.calibrate import fit_support_delta

    model = LocalModel.load()
    rows = _rows()
    coef_delta, intercept_delta = fit_support_delta(model, rows, alpha=10.0)
    assert len(coef_delta) == len(model.support.coef) and any(coef_delta)
    strong, _ = fit_support_delta(model, rows, alpha=1e6)  # shrunk all the way to the shipped head
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
