"""CONTRIBUTING's "How to add a judge" and docs/plugins.md's judge-kind and Plugins sections,
followed literally (issue 42, "Done when"): a throwaway package declares, through the entry
points written in docs/plugins.md, a metric with a reason and a judge kind that calls a
network (``calls_network=True``, an options model and an ``estimate``), backed by the real
local OpenAI-compatible server. With no edit to the project, both reach ``rag-eval judges
list`` (in a fresh process, from the entry point), the dry run (an honest cost line, never
"no cost"), ``rag-eval run --judge-only``'s output, ``runs show``, the HTML report (labelled,
with reasons) and the Python API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.plugins import write_dist_info
from rag_eval.cli import cli
from rag_eval.rag.config import default_config

PLUGINS_DOC = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"

# my_package, as docs/plugins.md's entry points name it: a module whose @metric functions
# register, and a module whose ``overlap`` is a JudgeKind.
METRICS_MODULE = '''
import rag_eval


@rag_eval.metric(name="answer_words", label="Answer length (words)", higher_is_better=False,
                 help="Words in the response.")
def answer_words(item: rag_eval.MetricItem) -> rag_eval.Explained:
    words = len(item.response.split())
    return rag_eval.Explained(float(words), f"the answer has {words} words")
'''

JUDGE_MODULE = '''
import json
import urllib.request

from pydantic import BaseModel

import rag_eval
from rag_eval.llm.pricing import dry_run_estimate
from rag_eval.schema import SentenceSupport


class Options(BaseModel):
    base_url: str
    model: str = "test-model"


class OverlapJudge:
    """Asks the endpoint, per item, whether the response is supported (a ``Judge``)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.name = "overlap:1"

    def judge(self, items, progress=None, cancel=None):
        out = []
        for item in items:
            body = {"model": self.options.model, "messages": [{"role": "user", "content": item.question}]}
            request = urllib.request.Request(self.options.base_url + "/chat/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as reply:
                verdict = json.load(reply)["choices"][0]["message"]["content"].strip()
            first = [sentence.key for doc in item.documents for sentence in doc][:1]
            supported = verdict == "supported"
            support = [SentenceSupport(s.key, first if supported else [], supported) for s in item.response_sentences]
            labels = rag_eval.Labels(all_relevant_sentence_keys=first, all_utilized_sentence_keys=first,
                                     sentence_support_information=support, overall_supported=supported,
                                     unsupported_response_sentence_keys=[] if supported else
                                     [s.key for s in item.response_sentences])
            out.append(rag_eval.JudgeResult(item.id, rag_eval.JudgeStatus.OK, labels=labels, judge=self.name))
        return out


def estimate(rows, spec):
    chats = [[{"role": "user", "content": row.item.question}] for row in rows]
    return [dry_run_estimate(chats, "gpt-4o-mini", 5, purpose="judge")]


overlap = rag_eval.JudgeKind(name="overlap", factory=OverlapJudge, options=Options, calls_network=True,
                             estimate=estimate, help="asks an OpenAI-compatible endpoint")
'''


def _entry_points() -> str:
    (block,) = re.findall(r"```toml\n(.*?)```", PLUGINS_DOC.read_text(encoding="utf-8").split("## Plugins", 1)[1], re.S)
    return textwrap.dedent(block)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """my_package written from the doc and installed as pip would (a dist-info folder)."""
    from rag_eval.judges.kinds import JUDGE_KINDS
    from rag_eval.metrics.registry import METRICS

    project = tmp_path / "my_package_src"
    (project / "my_package").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "my-package"\nversion = "0.1.0"\n\n' + _entry_points(), encoding="utf-8")
    (project / "my_package" / "__init__.py").write_text("", encoding="utf-8")
    (project / "my_package" / "metrics.py").write_text(METRICS_MODULE, encoding="utf-8")
    (project / "my_package" / "judge.py").write_text(JUDGE_MODULE, encoding="utf-8")
    site = tmp_path / "site"
    write_dist_info(project, site)
    paths = [str(site), str(project)]
    for path in reversed(paths):
        monkeypatch.syspath_prepend(path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([*paths, *filter(None, [os.environ.get("PYTHONPATH")])]))
    METRICS.reload_plugins()
    JUDGE_KINDS.reload_plugins()
    try:
        yield
    finally:
        METRICS.unregister("answer_words")
        JUDGE_KINDS.unregister("overlap")
        for module in [m for m in sys.modules if m.split(".")[0] == "my_package"]:
            del sys.modules[module]


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_plugin_llm_judge_and_metric_reach_every_output(installed, tmp_path, ragbench_rows, openai_server):
    import rag_eval

    openai_server.set_handler(lambda body: "supported")
    rows = [{k: r[k] for k in ("id", "question", "documents", "response")} for r in ragbench_rows[:3]]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    option = f"base_url={openai_server.base_url}"

    listed = subprocess.run([sys.executable, "-m", "rag_eval.cli", "judges", "list"], capture_output=True,
                            text=True, check=True, env=os.environ.copy())
    line = next(x for x in listed.stdout.splitlines() if x.startswith("overlap"))
    assert "calls a network" in line and "my-package 0.1.0" in line and "base_url" in line, listed.stdout

    dry = _invoke("judge", str(path), "--judge", "overlap", "--judge-option", option, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "the overlap judge calls a network" in dry.output and "no cost" not in dry.output
    assert "requests: 3 (3 judge) to gpt-4o-mini" in dry.output and "estimated cost: $" in dry.output
    assert openai_server.request_count == 0

    config = tmp_path / "overlap.yaml"
    default_config("overlap").with_changes(**{"judge.kind": "overlap",
                                              "judge.options": {"base_url": openai_server.base_url}}).to_yaml(config)
    db = str(tmp_path / "runs.sqlite")
    ran = _invoke("run", str(path), "--judge-only", "--config", str(config), "--db", db, "--name", "plugged")
    assert ran.exit_code == 0, ran.output
    assert openai_server.request_count == 3
    # the plugin judge's labels give the TRACe table; it declares no expected error: "unknown"
    assert "| adherence | Adherence | 1.000 |" in ran.output and "expected judge error unknown" in ran.output
    assert "| answer_words | Answer length (words) |" in ran.output.split("Other metrics", 1)[1], ran.output
    shown = _invoke("runs", "show", "plugged", "--db", db)
    assert "| adherence | Adherence | 1.000 |" in shown.output, shown.output
    assert "| answer_words | Answer length (words) |" in shown.output.split("Other metrics", 1)[1], shown.output

    report = tmp_path / "report.html"
    made = _invoke("report", "plugged", "--out", str(report), "--db", db)
    assert made.exit_code == 0, made.output
    html = report.read_text(encoding="utf-8")
    other = html.split("<h3>Other metrics</h3>", 1)[1].split("<h3>", 1)[0]
    assert "Answer length (words)" in other and "the answer has" in other  # labelled, with its reasons
    assert "<h3>Other metrics</h3>" in html.split("Adherence", 1)[1]  # the plugin judge's TRACe table first

    import pandas as pd

    frame = rag_eval.evaluate(pd.DataFrame(rows), judge="overlap", judge_options={"base_url": openai_server.base_url},
                              metrics=["answer_words"], progress=False).to_pandas()
    assert openai_server.request_count == 6
    assert list(frame["id"]) == [r["id"] for r in rows] and set(frame["judge"]) == {"overlap:1"}
    assert list(frame["answer_words"]) == [len(r["response"].split()) for r in rows]
    assert frame["adherence"].notna().all()
