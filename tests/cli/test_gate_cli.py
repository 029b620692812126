"""The CI gate from the command line: thresholds on means or interval lower bounds,
failures and coverage, JUnit output; ``rag-eval score`` and ``rag-eval judge --judge local``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.io.rows import write_rows


def _score(args):
    return CliRunner().invoke(cli, ["score", *args], catch_exceptions=False)


@pytest.fixture
def rows_file(tmp_path, ragbench_rows):
    return write_rows(ragbench_rows, tmp_path / "rows.jsonl")


def test_mean_passes_lower_bound_fails(tmp_path, rows_file):
    out = tmp_path / "scored.jsonl"
    ok = _score([str(rows_file), "--out", str(out), "--fail-under", "context_relevance=0.2"])
    assert ok.exit_code == 0, ok.output
    assert "| context_relevance >= 0.2 |" in ok.output and "gate PASSED" in ok.output
    strict = _score([str(rows_file), "--out", str(out), "--fail-under", "context_relevance=0.2",
                     "--fail-under-ci", "lower"])
    assert strict.exit_code == 1
    assert "thresholds on the 95% CI lower bound" in strict.output and "FAIL: " in strict.output


def test_seed_fields_and_diagnosis_in_score_output(tmp_path, rows_file):
    out = tmp_path / "scored.jsonl"
    result = _score([str(rows_file), "--out", str(out)])
    assert result.exit_code == 0 and "Diagnosis (14/14 scored rows" in result.output
    assert "consistency score" in result.output and "(excellent)" in result.output  # ragbench mode: RMSE 0
    first = json.loads(out.read_text().splitlines()[0])
    for name in ("average", "rmse_aggregation", "overall_supported", "fully_supported_sentences",
                 "partially_supported_sentences", "unsupported_sentences"):
        assert name in first


def test_failures_fail_unless_coverage_suffices_and_junit(tmp_path, ragbench_rows):
    bad = {"id": "broken", "question": "q"}  # lacks every sentence field
    path = write_rows([*ragbench_rows, bad], tmp_path / "rows.jsonl")
    out, junit = tmp_path / "scored.jsonl", tmp_path / "gate.xml"
    strict = _score([str(path), "--out", str(out), "--fail-under", "completeness=0.1"])
    assert strict.exit_code == 1 and "FAIL: 1 of 15 row(s) failed" in strict.output
    tolerant = _score([str(path), "--out", str(out), "--fail-under", "completeness=0.1", "--min-coverage", "0.9",
                       "--junit", str(junit), "--junit-rows"])
    assert tolerant.exit_code == 0, tolerant.output
    suites = ET.parse(junit).getroot().findall("testsuite")
    gate_cases = [c.get("name") for c in suites[0].findall("testcase")]
    assert gate_cases == ["completeness >= 0.1", "coverage >= 0.9"]
    rows = {c.get("name"): c.find("failure") for c in suites[1].findall("testcase")}
    assert len(rows) == 15 and "status invalid_input" in rows["broken"].get("message")
    too_few = _score([str(path), "--out", str(out), "--min-coverage", "0.99"])
    assert too_few.exit_code == 1 and "14/15 rows usable" in too_few.output


def test_unknown_metric_fails_the_gate_and_bad_syntax_is_a_usage_error(tmp_path, rows_file):
    out = tmp_path / "scored.jsonl"
    typo = _score([str(rows_file), "--out", str(out), "--fail-under", "relevance=0.2"])
    assert typo.exit_code == 1 and "no metric 'relevance'" in typo.output
    syntax = CliRunner().invoke(cli, ["score", str(rows_file), "--fail-under", "relevance"])
    assert syntax.exit_code == 2 and "METRIC=VALUE" in syntax.output


def test_local_judge_gate(tmp_path, ragbench_rows):
    pytest.importorskip("rag_eval.judges.local")
    path = write_rows([*ragbench_rows[:3], {"id": "nothing", "question": "q?"}], tmp_path / "rows.jsonl")
    out, junit = tmp_path / "judged.jsonl", tmp_path / "judge.xml"
    args = ["judge", str(path), "--judge", "local", "--out", str(out), "--fail-under", "average=0.1,adherence_score=0.01"]
    failed = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert failed.exit_code == 1 and "FAIL: 1 of 4 row(s) failed" in failed.output
    passed = CliRunner().invoke(cli, [*args, "--min-coverage", "0.75", "--junit", str(junit)], catch_exceptions=False)
    assert passed.exit_code == 0, passed.output
    assert "| average >= 0.1 |" in passed.output and "Diagnosis (3/4 scored rows" in passed.output
    assert len(ET.parse(junit).getroot().findall("testsuite/testcase")) == 3
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["average"] is not None and rows[3]["average"] is None and rows[3]["status"] == "invalid_input"
