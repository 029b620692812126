"""The gate on every command that accepts it (applied once, to the engine's summary), and
usage errors before any work: exit 2 and one line, no row processed, no run created."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.runs.store import RunStore
from tests.conftest import PROJECT_ROOT


@pytest.fixture
def rows_file(tmp_path, ragbench_rows):
    path = tmp_path / "rows.jsonl"
    rows = [*ragbench_rows[:4], {"id": "no-response", "question": "What now?", "documents": ["A passage."]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _judge(rows_file, tmp_path):
    return ["judge", str(rows_file), "--judge", "local", "--out", str(tmp_path / "out.jsonl")]


def _judge_only(rows_file, tmp_path):
    return ["run", str(rows_file), "--judge-only"]


COMMANDS = {"judge": _judge, "run --judge-only": _judge_only}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_failing_threshold_exits_1_and_writes_the_junit_file(command, rows_file, tmp_path):
    junit = tmp_path / "gate.xml"
    args = COMMANDS[command](rows_file, tmp_path)
    failed = CliRunner().invoke(cli, [*args, "--fail-under", "context_relevance=0.99", "--min-coverage", "0.5",
                                      "--junit", str(junit)])
    assert failed.exit_code == 1, failed.output
    assert "gate FAILED" in failed.output and junit.is_file()
    cases = [c.get("name") for c in ET.parse(junit).getroot().find("testsuite").findall("testcase")]
    assert cases == ["context_relevance >= 0.99", "coverage >= 0.5"]
    junit.unlink()
    passed = CliRunner().invoke(cli, [*args, "--fail-under", "context_relevance=0.01", "--min-coverage", "0.5",
                                      "--junit", str(junit)])
    assert passed.exit_code == 0, passed.output
    assert "gate PASSED" in passed.output and junit.is_file()
    low = CliRunner().invoke(cli, [*args, "--min-coverage", "0.9"])
    assert low.exit_code == 1 and "4/5 rows usable" in low.output
    plain = CliRunner().invoke(cli, args)  # no gate options: any failed row fails
    assert plain.exit_code == 1


def test_the_gate_on_a_rag_run_and_answer_correctness(tmp_path, demo_collection, demo_questions):
    """``run`` on the demo questions (they carry reference answers): BLEU and ROUGE-L land in
    the records and the gate takes them."""
    path = tmp_path / "qs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in demo_questions[:3]), encoding="utf-8")
    junit = tmp_path / "gate.xml"
    failed = CliRunner().invoke(cli, ["run", str(path), "--name", "gated", "--fail-under", "rouge_l=0.999",
                                      "--junit", str(junit)])
    assert failed.exit_code == 1, failed.output
    assert "| rouge_l >= 0.999 |" in failed.output and junit.is_file()
    items = RunStore().items(RunStore().get_run("gated")["id"])
    assert [set(i["correctness"] or ()) for i in items] == [
        {"bleu", "rouge_l"} if q.get("reference_answer") else set() for q in demo_questions[:3]]  # never a zero
    assert items[0]["metadata"] == demo_questions[0]["metadata"]  # the row's metadata, verbatim
    passed = CliRunner().invoke(cli, ["run", str(path), "--fail-under", "rouge_l=0.0,bleu=0.0"])
    assert passed.exit_code == 0, passed.output


def test_a_judge_only_run_resumes(rows_file, tmp_path):
    first = CliRunner().invoke(cli, ["run", str(rows_file), "--judge-only", "--name", "given", "--min-coverage", "0.5"])
    assert first.exit_code == 0, first.output
    assert "judge given:" in first.output and "judge default:" not in first.output  # the progress bar names the run
    run_id = RunStore().get_run("given")["id"]
    again = CliRunner().invoke(cli, ["run", str(rows_file), "--judge-only", "--resume", run_id, "--min-coverage", "0.5"])
    assert again.exit_code == 0, again.output
    assert len(RunStore().items(run_id)) == 5 and len(RunStore().list_runs()) == 1


# ---------------------------------------------------------------- usage errors before work
NO_RAY = """
import importlib.abc, sys
class _NoRay(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray' (blocked by the test)")
        return None
sys.meta_path.insert(0, _NoRay())
"""


def _cli(args: list[str], tmp_path: Path, block_ray: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if block_ray:
        shim = tmp_path / "shim"
        shim.mkdir(exist_ok=True)
        (shim / "sitecustomize.py").write_text(NO_RAY, encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join([str(shim), str(PROJECT_ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "rag_eval.cli", *args], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _calibrated_config(tmp_path: Path) -> Path:
    path = tmp_path / "cal.yaml"
    path.write_text("name: cal\njudge:\n  kind: local\n  calibration: nope\n", encoding="utf-8")
    return path


USAGE_ERRORS = {
    "judge --ray without Ray": (lambda f, t: ["judge", str(f), "--judge", "local", "--ray", "--out", str(t / "o.jsonl")],
                                True, "needs Ray"),
    "run --judge-only --ray without Ray": (lambda f, t: ["run", str(f), "--judge-only", "--ray"], True, "needs Ray"),
    "run --ray without Ray": (lambda f, t: ["run", "demo", "--ray"], True, "needs Ray"),
    "judge, unknown calibration": (lambda f, t: ["judge", str(f), "--judge", "local:nope", "--out", str(t / "o.jsonl")],
                                   False, "no calibration 'nope'"),
    "run --judge-only, unknown calibration": (lambda f, t: ["run", str(f), "--judge-only", "--config",
                                                            str(_calibrated_config(t))], False, "no calibration 'nope'"),
    "judge, missing judge model": (lambda f, t: ["judge", str(f), "--judge", "local", "--model-path",
                                                 str(t / "missing.json"), "--out", str(t / "o.jsonl")],
                                   False, "cannot load the local judge"),
}


@pytest.mark.parametrize("case", USAGE_ERRORS)
def test_usage_errors_exit_2_in_one_line_before_any_work(case, rows_file, tmp_path):
    make_args, block_ray, message = USAGE_ERRORS[case]
    done = _cli(make_args(rows_file, tmp_path), tmp_path, block_ray)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not done.stdout.strip()  # no row processed, no summary
    assert not (tmp_path / "o.jsonl").exists()
    assert RunStore().list_runs() == []  # no run created


def test_with_an_llm_the_answer_match_lands_in_the_rows_and_the_gate(tmp_path, openai_server):
    """Rows with a reference answer judged by the LLM judge: BLEU, ROUGE-L and the LLM
    answer match (asked of the same endpoint) in every row, and the gate takes them."""
    from harness.fake_answers import answer_text
    from rag_eval.judges.prompts import ANSWER_MATCH_SYSTEM_PROMPT

    def reply(body):
        if body["messages"][0]["content"] == ANSWER_MATCH_SYSTEM_PROMPT:
            user = body["messages"][-1]["content"]
            return json.dumps({"is_matching": "purrs" not in user, "reasoning": "compared"})
        return answer_text(body)

    openai_server.set_handler(reply)
    path = tmp_path / "rows.jsonl"
    rows = [{"id": "cat", "question": "What is X?", "documents": ["X is a cat. It purrs."], "response": "X is a cat.",
             "reference_answer": "X is a cat."},
            {"id": "purr", "question": "What does X do?", "documents": ["X is a cat. It purrs."],
             "response": "It purrs.", "reference_answer": "X sleeps."},
            {"id": "plain", "question": "What is Y?", "documents": ["Y is a dog."], "response": "Y is a dog."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["judge", str(path), "--model", "test-model", "--base-url", openai_server.base_url, "--out", str(out)]
    passed = CliRunner().invoke(cli, [*args, "--fail-under", "rouge_l=0.1,answer_match=0.5"])
    assert passed.exit_code == 0, passed.output
    got = {r["id"]: r for r in (json.loads(line) for line in out.read_text().splitlines())}
    assert got["cat"]["answer_match"] == 1.0 and got["purr"]["answer_match"] == 0.0
    assert got["cat"]["rouge_l"] == 1.0 and 0 <= got["purr"]["bleu"] < 1
    assert "answer_match" not in got["plain"] and "rouge_l" not in got["plain"]  # no reference: absent, never 0
    failed = CliRunner().invoke(cli, [*args, "--fail-under", "answer_match=0.9"])
    assert failed.exit_code == 1 and "| answer_match >= 0.9 |" in failed.output


def test_an_answer_match_the_llm_cannot_give_is_a_visible_failure(tmp_path, openai_server):
    """Issue 46 item 8: the endpoint answers every answer-match request (and its re-ask) with
    text that does not parse. The match is a failure in the row (``answer_match`` None, the
    reason in ``metric_errors``), in the metric's coverage and in the summary: never a
    missing column."""
    from harness.fake_answers import answer_text
    from rag_eval.judges.prompts import ANSWER_MATCH_SYSTEM_PROMPT

    openai_server.set_handler(lambda body: "I think they match, more or less."
                              if body["messages"][0]["content"] == ANSWER_MATCH_SYSTEM_PROMPT else answer_text(body))
    path = tmp_path / "rows.jsonl"
    rows = [{"id": "cat", "question": "What is X?", "documents": ["X is a cat. It purrs."], "response": "X is a cat.",
             "reference_answer": "X is a cat."},
            {"id": "plain", "question": "What is Y?", "documents": ["Y is a dog."], "response": "Y is a dog."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    ran = CliRunner().invoke(cli, ["judge", str(path), "--model", "test-model", "--base-url", openai_server.base_url,
                                   "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    got = {r["id"]: r for r in (json.loads(line) for line in out.read_text().splitlines())}
    assert "answer_match" in got["cat"] and got["cat"]["answer_match"] is None
    assert "no JSON object" in got["cat"]["metric_errors"]["answer_match"]
    assert got["cat"]["rouge_l"] == 1.0 and "answer_match" not in (got["plain"].get("metric_errors") or {})
    assert "| answer_match | Answer match (LLM) | n/a | [n/a, n/a] | 0 | 0.000 |" in ran.output, ran.output
    assert "answer_match failed on 1 row(s): ValueError: the LLM gave no verdict (parse_error" in ran.output
    # what the answer match sent is counted, its re-ask included: 1 question and 1 re-ask (never "reasks 0")
    assert got["cat"]["judge_extra"]["answer_match"]["calls"] == 2
    assert got["cat"]["judge_extra"]["answer_match"]["reasks"] == 1
    assert "answer match 2 (1 re-ask(s))" in ran.output, ran.output
