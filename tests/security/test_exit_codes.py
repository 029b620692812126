"""Failures fail: every command exits non-zero when rows failed (1), on input errors (2),
when a service is unavailable (3); ``ask`` exits 1 on a refused judgement."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.openai_server import Reply
from rag_eval.cli import cli
from rag_eval.rag.config import default_config
from tests.cli.test_judge_cli import GOOD, write_jsonl


@pytest.fixture
def runner():
    return CliRunner()


def _llm_config(tmp_path, base_url, generator=True, judge=True):
    changes = {}
    if generator:
        changes.update({"generator.kind": "openai", "generator.model": "test-model", "generator.base_url": base_url})
    if judge:
        changes.update({"judge.kind": "llm", "judge.model": "test-model", "judge.base_url": base_url})
    path = tmp_path / "llm.yaml"
    default_config("llm").with_changes(**changes).to_yaml(path)
    return path


def test_run_where_every_generation_fails_exits_1(runner, tmp_path, openai_server, fast_backoff, demo_home):
    openai_server.set_handler(lambda body: Reply.error(400, "model not found"))
    dataset = write_jsonl(tmp_path / "qs.jsonl", [{"id": "a", "question": "How do I reset the TV?"},
                                                  {"id": "b", "question": "What is the warranty?"}])
    config = _llm_config(tmp_path, openai_server.base_url, judge=False)
    result = runner.invoke(cli, ["run", str(dataset), "--config", str(config), "--collection", "demo"])
    assert result.exit_code == 1, result.output
    assert "2 of 2 items failed (coverage 0%, required 100%): generation_error=2" in result.stderr


def test_ask_exits_1_when_the_judge_refuses(runner, tmp_path, openai_server, demo_home):
    openai_server.set_handler(lambda body: Reply.refused("I can't judge this."))
    config = _llm_config(tmp_path, openai_server.base_url, generator=False)
    result = runner.invoke(cli, ["ask", "How do I reset the TV?", "--config", str(config), "--json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["judge_result"]["status"] == "refused"
    assert "ask failed: judge refused" in result.stderr


def test_ask_exits_1_when_generation_fails(runner, tmp_path, openai_server, fast_backoff, demo_home):
    openai_server.set_handler(lambda body: Reply.error(400, "bad model"))
    config = _llm_config(tmp_path, openai_server.base_url, judge=False)
    result = runner.invoke(cli, ["ask", "How do I reset the TV?", "--config", str(config), "--no-judge"])
    assert result.exit_code == 1 and "ask failed: generation" in result.stderr


def test_judge_min_coverage_is_the_gate(runner, tmp_path, openai_server, fast_backoff):
    openai_server.set_handler(lambda body: Reply.error(400, "nope"))
    rows = write_jsonl(tmp_path / "in.jsonl", GOOD)
    args = ["judge", str(rows), "--model", "m", "--base-url", openai_server.base_url, "--out", str(tmp_path / "o.jsonl")]
    failed = runner.invoke(cli, args)
    assert failed.exit_code == 1 and f"{len(GOOD)} of {len(GOOD)} rows failed" in failed.stderr
    assert runner.invoke(cli, [*args, "--min-coverage", "0"]).exit_code == 0


def test_import_with_a_bad_row_writes_the_good_ones_and_exits_1(runner, tmp_path):
    src = tmp_path / "x.csv"
    src.write_text("id,question\n1,What is X?\n2,\n3,What is Y?\n", encoding="utf-8")
    out = tmp_path / "o.jsonl"
    result = runner.invoke(cli, ["dataset", "import", "csv", str(src), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2 and "row(s) rejected" in result.stderr


@pytest.mark.parametrize("args, code", [
    (["score", "missing.jsonl"], 2),  # unreadable input
    (["run", "demo", "--min-coverage", "2"], 2),  # bad option
    (["runs", "show", "nope"], 2),  # unknown run
])
def test_input_and_usage_errors_exit_2(runner, args, code):
    assert runner.invoke(cli, args).exit_code == code


def test_unreachable_qdrant_exits_3(runner, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")
    result = runner.invoke(cli, ["ask", "q", "--collection", "x"])
    assert result.exit_code == 3 and "cannot reach Qdrant" in result.output


def test_agreement_min_coverage_of_the_truth(runner, tmp_path):
    from tests.conftest import DATA_DIR

    truth = DATA_DIR / "ragbench_sample.jsonl"
    first = json.loads(truth.read_text(encoding="utf-8").splitlines()[0])
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"id": first["id"], "context_relevance": 0.5}])
    args = ["agreement", str(pred), str(truth), "--n-boot", "0"]
    assert runner.invoke(cli, args).exit_code == 0  # not asked: reported, not gated
    gated = runner.invoke(cli, [*args, "--min-coverage", "0.5"])
    assert gated.exit_code == 1 and "truth ids have no prediction" in gated.stderr
