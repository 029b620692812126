"""The Python API at the package root (``rag_eval.evaluate`` and friends, docs/python-api.md)
gives what ``rag-eval judge`` gives on the same rows, field for field, from a DataFrame, a
list of dicts and a file; ``.gate()`` decides as ``--fail-under`` does; a saved evaluation
is a stored run that ``load_run`` and ``compare`` read back. Real rows (the committed
RAGBench sample), the real local judge; nothing mocked.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

import rag_eval
from rag_eval.cli import cli
from tests.runs.test_paths_agree import matrix_rows

#: fields that are measured, not computed (the time an item took)
TIMED = ("latency_s",)


def _untimed(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in TIMED}


@pytest.fixture
def rows(ragbench_rows) -> list[dict]:
    """The differential matrix's rows: RAGBench rows, a repeated id, one row without a response."""
    return matrix_rows(ragbench_rows)


@pytest.fixture
def rows_file(tmp_path, rows):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli_rows(path, tmp_path, *extra: str) -> tuple[list[dict], CliRunner, object]:
    out = tmp_path / "judged.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(path), "--judge", "local", "--out", str(out), *extra])
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], result


def test_import_is_cheap_and_lists_the_api():
    """``import rag_eval`` loads no submodule (the CLI's start-up does not pay for the API)."""
    code = ("import sys, rag_eval; loaded = sorted(m for m in sys.modules if m.startswith('rag_eval.')); "
            "print(loaded); assert loaded == [], loaded; assert 'evaluate' in dir(rag_eval)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert {"evaluate", "Evaluation", "load_run", "compare", "ask"} <= set(rag_eval.__all__)
    with pytest.raises(AttributeError):
        rag_eval.no_such_name  # noqa: B018


def test_dataframe_list_and_file_equal_rag_eval_judge(rows, rows_file, tmp_path):
    expected, cli_result = _cli_rows(rows_file, tmp_path, "--min-coverage", "0.5")
    assert cli_result.exit_code == 0, cli_result.output
    assert expected[-1]["status"] == "invalid_input"
    inputs = {"file": (rows_file, str(rows_file)), "list": (rows, "rows"), "DataFrame": (pd.DataFrame(rows), "DataFrame")}
    for kind, (data, label) in inputs.items():
        result = rag_eval.evaluate(data, judge="local", progress=False)
        got = [_untimed(r) for r in result.rows]
        want = [_untimed(r) for r in expected]
        # the only difference: where a bad row came from (the CLI names the file)
        want[-1]["error"] = want[-1]["error"].replace(str(rows_file), label)
        assert got == want, kind
        frame = result.to_pandas()
        assert list(frame["id"]) == [r["id"] for r in expected], kind
        assert list(frame["status"]) == [r["status"] for r in expected], kind
        for column in ("context_relevance", "context_utilization", "completeness", "adherence", "adherence_score",
                       "relevance_explanation", "overall_supported_explanation"):
            assert [None if pd.isna(v) else v for v in frame[column]] == [r[column] for r in expected], (kind, column)
        assert "field 'response'" in frame["error"].iloc[-1]


def test_summary_has_intervals_coverage_statuses_and_the_judge_error(rows):
    result = rag_eval.evaluate(rows, progress=False)
    summary = result.summary
    assert summary.n_items == len(rows) and summary.n_usable == len(rows) - 1
    assert summary.counts == {"ok": len(rows) - 1, "invalid_input": 1}
    assert summary.coverage == pytest.approx((len(rows) - 1) / len(rows))
    stat = summary.metrics["context_relevance"]
    assert stat.ci_low <= stat.mean <= stat.ci_high and stat.n == len(rows) - 1
    assert summary.expected_judge_error["judge"].startswith("local:")
    assert summary.expected_judge_error["source"] != "unknown"  # the shipped model's held-out figures
    assert set(summary.to_pandas()["metric"]) >= {"context_relevance", "adherence", "average"}
    assert "coverage" in str(summary)


@pytest.mark.parametrize(("options", "api"), [
    (["--fail-under", "context_relevance=0.01", "--min-coverage", "0.5"],
     {"fail_under": "context_relevance=0.01", "min_coverage": 0.5}),
    (["--fail-under", "adherence=0.99,completeness=0.2", "--fail-under-ci", "lower", "--min-coverage", "0.5"],
     {"fail_under": {"adherence": 0.99, "completeness": 0.2}, "basis": "lower", "min_coverage": 0.5}),
    (["--fail-under", "context_relevance=0.01"], {"fail_under": ["context_relevance=0.01"]}),  # a failed row fails it
])
def test_gate_equals_fail_under(options, api, rows, rows_file, tmp_path):
    _, cli_result = _cli_rows(rows_file, tmp_path, *options)
    gate = rag_eval.evaluate(rows, progress=False).gate(**api)
    assert cli_result.exit_code == (0 if gate.passed else 1), cli_result.output
    assert "\n".join(gate.table()) in cli_result.output


def test_unknown_metric_and_bad_data_fail_before_judging(rows):
    with pytest.raises(ValueError, match="unknown metric"):
        rag_eval.evaluate(rows, metrics=["no_such_metric"], progress=False)
    with pytest.raises(TypeError, match="not one dict"):
        rag_eval.evaluate(rows[0], progress=False)
    frame = rag_eval.evaluate(rows[:2], metrics=["average", "unsupported_sentences"], progress=False).to_pandas()
    assert {"average", "unsupported_sentences"} <= set(frame.columns)


def test_progress_reaches_the_end(rows):
    seen: list[tuple[int, int]] = []
    rag_eval.evaluate(rows, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(rows), len(rows))


def test_saved_evaluation_loads_and_compares(rows):
    first = rag_eval.evaluate(rows, name="api-first", progress=False)
    assert first.run_id is not None
    second = rag_eval.evaluate(rows[:4], progress=False)
    second_id = second.save("api-second")
    loaded = rag_eval.load_run("api-first")
    assert loaded.run_id == first.run_id and len(loaded) == len(rows)
    assert list(loaded.to_pandas()["status"]) == list(first.to_pandas()["status"])
    pd.testing.assert_frame_equal(loaded.to_pandas()[["id", "context_relevance", "adherence_score"]],
                                  first.to_pandas()[["id", "context_relevance", "adherence_score"]])
    assert loaded.summary.means == pytest.approx(first.summary.means)
    assert loaded.gate("context_relevance=0.01", min_coverage=0.5).passed
    stored = rag_eval.load_run(first.run_id).summary.expected_judge_error
    assert stored["judge"] == first.summary.expected_judge_error["judge"]
    comparison = rag_eval.compare("api-first", second_id)
    assert comparison.runs == [first.run_id, second_id]
    paired = comparison.to_pandas()
    assert set(paired["metric"]) >= {"context_relevance"}
    assert (paired["n_pairs"] > 0).all()
    unsaved = rag_eval.compare(first, rag_eval.evaluate(rows[:4], progress=False))
    assert unsaved.runs == [first.run_id, "evaluation-2"]
