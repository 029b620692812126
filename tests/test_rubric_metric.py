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


def test_python_api_takes_a_rubric_file_as_metrics_does(rubric_endpoint, rows):
    import rag_eval

    rubric_endpoint.set_handler(_answers)
    frame = rag_eval.evaluate(str(rows), metrics=[RUBRIC], progress=False).to_pandas()
    assert frame["politeness"].notna().sum() == 3 and "politeness" in frame["metric_errors"].dropna().iloc[0]
    with pytest.raises(ValueError, match="no_such.yaml"):
        rag_eval.evaluate(str(rows), metrics=["no_such.yaml"], progress=False)


def test_a_broken_rubric_is_named_and_refused(tmp_path, rows):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncriteria: x\nscore_range: [3, 1]\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["judge", str(rows), "--judge", "local", "--metrics", str(bad),
                                      "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "bad.yaml" in result.output and "score_range" in result.output


def _requirements_only_path(tmp_path: Path) -> str:
    """What a Space's ``pip install -r requirements.txt`` leaves importable: every installed
    distribution but this package (no ``rag_eval`` dist-info, hence no entry points of
    ours), with the source tree on the path, as the Space runs it. The package is linked
    into a folder of its own: the checkout's root may hold the ``rag_eval.egg-info`` an
    editable install leaves, which a Space's clone does not have."""
    import os
    import site

    source = tmp_path / "source"
    source.mkdir()
    (source / "rag_eval").symlink_to(Path(__file__).resolve().parents[1] / "rag_eval", target_is_directory=True)
    packages = tmp_path / "site-packages"
    packages.mkdir()
    here = next(Path(p) for p in site.getsitepackages() if Path(p, "numpy").exists())
    for entry in here.iterdir():
        if not entry.name.lower().startswith(("rag_eval", "__editable__", "rag-eval")):
            (packages / entry.name).symlink_to(entry)
    return os.pathsep.join([str(source), str(packages)])


def test_an_installed_rubric_registers_on_a_requirements_only_install(rubric_endpoint, rows, tmp_path):
    """Issue 42 item 6: ``rag-eval metrics add`` works where the package itself is not
    installed (the registry loads the installed rubrics by name, not through our metadata).
    The process runs without ``site`` (``-S``), so only the requirements-only path counts."""
    import os
    import subprocess
    import sys

    rubric_endpoint.set_handler(_answers)
    env = {**os.environ, "PYTHONPATH": _requirements_only_path(tmp_path)}

    def rag_eval(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-S", "-m", "rag_eval.cli", *args], env=env, capture_output=True,
                              text=True, timeout=600, cwd=tmp_path)  # not the checkout: its egg-info

    probe = subprocess.run([sys.executable, "-S", "-c", (
        "import importlib.metadata as md, rag_eval; print(rag_eval.__file__); "
        "print(len(md.entry_points(group='rag_eval.metrics'))); "
        "print(any(d.metadata['Name'] == 'rag-eval' for d in md.distributions()))")],
        env=env, capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert probe[1:] == ["0", "False"] and probe[0].startswith(str(tmp_path / "source"))
    added = rag_eval("metrics", "add", str(RUBRIC))
    assert added.returncode == 0 and "installed rubric 'politeness'" in added.stdout, added.stderr
    listed = rag_eval("metrics", "list")
    assert "politeness" in listed.stdout and "rubric politeness.yaml" in listed.stdout, listed.stderr
    out = tmp_path / "out.jsonl"
    judged = rag_eval("judge", str(rows), "--judge", "local", "--out", str(out), "--min-coverage", "0")
    assert judged.returncode == 0, judged.stderr
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r.get("politeness") is not None for r in written].count(True) == 3  # one item the judge cannot score
    assert "politeness" in judged.stdout  # the summary's means


def test_the_documented_rubric_reaches_run_output_runs_show_and_the_report(rubric_endpoint, rows, tmp_path):
    """docs/rubrics.md followed literally: its YAML block, as written, is the ``--metrics``
    file of ``rag-eval run --judge-only``; the rubric is printed under its family's heading,
    shown by ``runs show`` and in the report, labelled, with the judge's reasons."""
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "rubrics.md").read_text(encoding="utf-8")
    rubric = tmp_path / "politeness.yaml"
    rubric.write_text(re.findall(r"```yaml\n(.*?)```", doc, re.S)[0], encoding="utf-8")
    rubric_endpoint.set_handler(_answers)
    db = str(tmp_path / "runs.sqlite")
    ran = CliRunner().invoke(cli, ["run", str(rows), "--judge-only", "--metrics", str(rubric), "--db", db,
                                   "--name", "polite", "--min-coverage", "0"], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    shown = CliRunner().invoke(cli, ["runs", "show", "polite", "--db", db])
    for output in (ran.output, shown.output):  # the unscorable item counts against coverage, never as 0
        assert "| politeness | Politeness | 4.500 | [4.500, 4.500] | 3 | 0.750 |" in output.split("Other metrics")[1]
    report = tmp_path / "report.html"
    made = CliRunner().invoke(cli, ["report", "polite", "--out", str(report), "--db", db])
    assert made.exit_code == 0, made.output
    html = report.read_text(encoding="utf-8")
    other = html.split("<h3>Other metrics</h3>", 1)[1].split("<h3>", 1)[0]
    assert "Politeness" in other and "Polite." in other  # labelled, with the judge's reason
    assert KEY not in html and KEY not in ran.output and KEY not in shown.output
