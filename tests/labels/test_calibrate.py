"""Calibration of the local judge: seeded and reproducible, stored with provenance,
its reported figures measured only on rows it was not fitted on, and used by
``--judge local:NAME`` runs that record it."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.judges.calibration import apply_calibration, load_calibration
from rag_eval.judges.local import LocalJudge, LocalModel
from rag_eval.labels.calibrate import evaluate_rows, labelled_rows, split_rows
from tests.conftest import DATA_DIR

SAMPLE = DATA_DIR / "ragbench_sample.jsonl"
VERSION = LocalModel.load().version  # of the committed local judge


def _calibrate(name: str, seed: int = 3) -> dict:
    result = CliRunner().invoke(cli, ["judge", "--judge", "local", "--calibrate", str(SAMPLE), "--name", name,
                                      "--cal-seed", str(seed)])
    assert result.exit_code == 0, result.output
    assert "held-out row(s) not used for fitting" in result.output
    return load_calibration(name)


def test_split_is_seeded_disjoint_and_complete():
    fit, held = split_rows(14, seed=5, holdout=0.3)
    assert (fit, held) == split_rows(14, seed=5, holdout=0.3)
    assert not set(fit) & set(held) and sorted(fit + held) == list(range(14)) and len(held) == 4


def test_calibration_is_reproducible_with_provenance_and_held_out_figures(rag_eval_home):
    a = _calibrate("dom-a")
    b = _calibrate("dom-b")
    assert a["fitted"] == b["fitted"] and a["fit_row_ids"] == b["fit_row_ids"]
    assert a["source"]["sha256"] == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert a["base_version"] == LocalModel.load().version and a["seed"] == 3
    assert not set(a["fit_row_ids"]) & set(a["held_out_row_ids"])
    assert len(a["fit_row_ids"]) + len(a["held_out_row_ids"]) == 14
    assert (rag_eval_home / "calibrations" / "dom-a.json").exists()

    # The reported figures are those of the held-out rows only.
    judge = LocalJudge()
    rows, _ = labelled_rows([json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()], judge.embedder)
    held = [r for r in rows if r.item.id in set(a["held_out_row_ids"])]
    assert evaluate_rows(apply_calibration(judge.model, a["fitted"]), held) == a["held_out"]["after"]
    assert evaluate_rows(judge.model, held) == a["held_out"]["before"]
    assert a["held_out"]["rows"] == len(held)

    other = CliRunner().invoke(cli, ["judge", "--judge", "local", "--calibrate", str(SAMPLE), "--name", "dom-a"])
    assert other.exit_code == 2 and "exists" in other.output  # an input error


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
