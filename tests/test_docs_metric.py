"""CONTRIBUTING's "How to add a metric", followed literally (issue 42): its code block runs as
written, and the metric it declares reaches every output with no other edit: the printed
summary of ``rag-eval run demo --metrics question_echo``, ``rag-eval runs show``, the HTML
report (under its family's heading, labelled, with its reasons) and the Python API's columns."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.metrics.registry import METRICS

CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"


def _section_code(title: str) -> str:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return textwrap.dedent(block)


@pytest.fixture
def declared():
    namespace: dict = {}
    exec(compile(_section_code("How to add a metric"), str(CONTRIBUTING), "exec"), namespace)  # noqa: S102 - the doc's own code
    yield METRICS.get("question_echo")
    METRICS.unregister("question_echo")


def test_the_documented_metric_reaches_every_output(declared, tmp_path):
    import rag_eval

    db = str(tmp_path / "runs.sqlite")
    ran = CliRunner().invoke(cli, ["run", "demo", "--metrics", "question_echo", "--db", db, "--name", "echo"],
                             catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    printed = ran.output.split("Other metrics", 1)  # the run's printed summary, under the family's heading
    assert len(printed) == 2 and "| question_echo | Question words in the answer |" in printed[1]
    shown = CliRunner().invoke(cli, ["runs", "show", "echo", "--db", db])
    assert "Other metrics" in shown.output and "| question_echo | Question words in the answer |" in shown.output

    report = tmp_path / "report.html"
    made = CliRunner().invoke(cli, ["report", "echo", "--out", str(report), "--db", db])
    assert made.exit_code == 0, made.output
    html = report.read_text(encoding="utf-8")
    other = html.split("<h3>Other metrics</h3>", 1)[1].split("<h3>", 1)[0]
    assert "Question words in the answer" in other and "answer words are in the question" in other  # labelled, reasons

    frame = rag_eval.load_run("echo", store=db).to_pandas()
    assert {"question_echo", "metric_reasons"} <= set(frame.columns)
    assert frame["question_echo"].notna().all()
