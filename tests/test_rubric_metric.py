"""A rubric metric end to end (issue 34, item 4): installed or named by file, scored through
the LLM client against the real local OpenAI-compatible server with its fault injection, on
``rag-eval judge`` and the Python API: every item a score or a failure with its reason, the
G-Eval weighted score where log-probabilities come back, samples with their spread, and the
key in no artefact."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.openai_server import Reply
from rag_eval.cli import cli
from tests.conftest import DATA_DIR as DATA
from tests.conftest import RUBRIC
from tests.conftest import RUBRIC_KEY as KEY


@pytest.fixture
def rows(tmp_path) -> Path:
    lines = (DATA / "ragbench_sample.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _answers(body: dict) -> Reply:
    question = body["messages"][1]["content"]
    if "siRNA" in question:  # one item the judge cannot score
        return Reply(content="I would rather not say.")
    return Reply(content=f"4\nPolite. (header {KEY})", first_token_logprobs={"4": math.log(0.5), "5": math.log(0.5)})


def test_judge_scores_a_rubric_file_and_stores_reasons_for_failures(rubric_endpoint, rows, tmp_path):
    rubric_endpoint.set_handler(_answers)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(rows), "--judge", "local", "--metrics", str(RUBRIC),
                                      "--out", str(out), "--min-coverage", "0"])
    assert result.exit_code == 0, result.output
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(written) == 4
    failed = [r for r in written if r.get("politeness") is None]
    scored = [r for r in written if r.get("politeness") is not None]
    assert len(failed) == 1 and "no score from 1 to 5" in failed[0]["metric_errors"]["politeness"]
    assert all(r["politeness"] == pytest.approx(4.5) for r in scored)  # G-Eval: 0.5 * 4 + 0.5 * 5
    assert all(r["metric_reasons"]["politeness"].startswith("Polite.") for r in scored)  # the judge's reason
    assert "politeness" in result.output  # the summary's means
    assert KEY not in out.read_text(encoding="utf-8") and KEY not in result.output
    assert all(h.get("authorization") == f"Bearer {KEY}" for h in rubric_endpoint.headers)  # the owner's endpoint only
    gate = CliRunner().invoke(cli, ["judge", str(rows), "--judge", "local", "--metrics", str(RUBRIC),
                                    "--out", str(out), "--min-coverage", "0", "--fail-under", "politeness=4.6"])
    assert gate.exit_code == 1 and "politeness" in gate.output


def test_installed_rubric_with_samples_through_the_python_api(rubric_endpoint, rows):
    import rag_eval
    from rag_eval.judges.rubric import installed_rubrics, register_rubric

    scores = iter([3, 5] * 10)
    rubric_endpoint.set_handler(lambda body: f"{next(scores)}\nok")
    added = CliRunner().invoke(cli, ["metrics", "add", str(RUBRIC), "--samples", "2"])
    assert added.exit_code == 0 and "installed rubric 'politeness'" in added.output
    [declared] = installed_rubrics()  # what the package's entry point hands the registry
    assert declared.name == "politeness" and declared.origin == "rubric politeness.yaml"
    register_rubric(RUBRIC, samples=2)
    result = rag_eval.evaluate(str(rows), judge="local", metrics=["politeness"], progress=False)
    frame = result.to_pandas()
    assert list(frame["politeness.mean"]) == [4.0] * 4 and list(frame["politeness.spread"]) == [1.0] * 4
    assert rubric_endpoint.request_count == 8


def test_a_broken_rubric_is_named_and_refused(tmp_path, rows):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncriteria: x\nscore_range: [3, 1]\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["judge", str(rows), "--judge", "local", "--metrics", str(bad),
                                      "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "bad.yaml" in result.output and "score_range" in result.output
