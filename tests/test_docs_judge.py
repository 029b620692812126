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

def _judge_module() -> str:
    """The endpoint judge kind of docs/plugins.md, as written there."""
    section = PLUGINS_DOC.read_text(encoding="utf-8").split("### A judge on an OpenAI-compatible endpoint", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, re.S)[0]


def _entry_points() -> str:
    (block,) = re.findall(r"```toml\n(.*?)```", PLUGINS_DOC.read_text(encoding="utf-8").split("## Plugins", 1)[1], re.S)
    return textwrap.dedent(block)


def write_doc_plugin(folder: Path) -> list[str]:
    """my_package written from the doc and installed as pip would (a dist-info folder) under
    ``folder``; the paths to put on ``sys.path`` / ``PYTHONPATH``."""
    project = folder / "my_package_src"
    (project / "my_package").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "my-package"\nversion = "0.1.0"\n\n' + _entry_points(), encoding="utf-8")
    (project / "my_package" / "__init__.py").write_text("", encoding="utf-8")
    (project / "my_package" / "metrics.py").write_text(METRICS_MODULE, encoding="utf-8")
    (project / "my_package" / "judge.py").write_text(_judge_module(), encoding="utf-8")
    site = folder / "site"
    write_dist_info(project, site)
    return [str(site), str(project)]


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """my_package of the doc, installed for this test (and its subprocesses)."""
    from rag_eval.judges.kinds import JUDGE_KINDS
    from rag_eval.metrics.registry import METRICS

    paths = write_doc_plugin(tmp_path)
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


PRICES = {"test-model": {"input": 1.0, "output": 2.0}}  # USD per million tokens


def _cost(rows: list[dict]) -> float:
    """What ``rows`` (written by ``rag-eval judge``) cost at :data:`PRICES`."""
    price = PRICES["test-model"]
    return sum(r["tokens"]["prompt"] * price["input"] + r["tokens"]["completion"] * price["output"] for r in rows) / 1e6


def test_a_plugin_llm_judge_and_metric_reach_every_output(installed, tmp_path, ragbench_rows, openai_server,
                                                          monkeypatch):
    import rag_eval

    openai_server.set_handler(lambda body: "supported")
    monkeypatch.setenv("RAG_EVAL_LLM_PRICES", json.dumps(PRICES))
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")
    rows = [{k: r[k] for k in ("id", "question", "documents", "response")} for r in ragbench_rows[:3]]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    listed = subprocess.run([sys.executable, "-m", "rag_eval.cli", "judges", "list"], capture_output=True,
                            text=True, check=True, env=os.environ.copy())
    line = next(x for x in listed.stdout.splitlines() if x.startswith("overlap"))
    assert "calls a network" in line and "my-package 0.1.0" in line and "verdict" in line, listed.stdout

    # the endpoint settings reach the plugin as they reach the llm kind: --base-url alone is enough
    dry = _invoke("judge", str(path), "--judge", "overlap", "--base-url", openai_server.base_url, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "the overlap judge calls a network" in dry.output and "no cost" not in dry.output
    assert "requests: 3 (3 judge) to test-model" in dry.output and "estimated cost: $" in dry.output
    assert openai_server.request_count == 0

    out = tmp_path / "judged.jsonl"
    judged = _invoke("judge", str(path), "--judge", "overlap", "--base-url", openai_server.base_url, "--out", str(out))
    assert judged.exit_code == 0, judged.output
    assert openai_server.request_count == 3 and "Field required" not in judged.output
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert {r["judge"] for r in written} == {"overlap:test-model"} and all(r["tokens"]["total"] > 0 for r in written)
    tokens = sum(r["tokens"]["total"] for r in written)
    assert f"= {tokens}" in judged.output and f"cost: ${_cost(written):.4f}" in judged.output, judged.output

    # the key variable goes through the key policy to the plugin's requests, as to the llm kind's
    monkeypatch.setenv("PLUGIN_KEY", "sk-plugin-" + "k" * 24)
    keyed = _invoke("judge", str(path), "--judge", "overlap", "--base-url", openai_server.base_url,
                    "--api-key-env", "PLUGIN_KEY", "--no-cache", "--out", str(out))
    assert keyed.exit_code == 0, keyed.output
    assert openai_server.headers[-1].get("authorization", openai_server.headers[-1].get("Authorization")) == \
        "Bearer sk-plugin-" + "k" * 24
    sent = openai_server.request_count

    config = tmp_path / "overlap.yaml"
    default_config("overlap").with_changes(**{"judge.kind": "overlap", "judge.base_url": openai_server.base_url,
                                              "judge.options": {"verdict": "supported"}}).to_yaml(config)
    db = str(tmp_path / "runs.sqlite")
    ran = _invoke("run", str(path), "--judge-only", "--config", str(config), "--db", db, "--name", "plugged",
                  "--trust-config-endpoints")
    assert ran.exit_code == 0, ran.output
    # the plugin judge's labels give the TRACe table; it declares no expected error: "unknown"
    assert "| adherence | Adherence | 1.000 |" in ran.output and "expected judge error unknown" in ran.output
    assert "| answer_words | Answer length (words) |" in ran.output.split("Other metrics", 1)[1], ran.output
    assert f"tokens {tokens}; cost {_cost(written):.4f} USD" in ran.output, ran.output  # the cache's original cost
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
    assert openai_server.request_count == sent  # the same questions to the same endpoint: the LLM cache answers
    assert list(frame["id"]) == [r["id"] for r in rows] and set(frame["judge"]) == {"overlap:test-model"}
    assert list(frame["answer_words"]) == [len(r["response"].split()) for r in rows]
    assert frame["adherence"].notna().all()


def test_run_chooses_a_plugin_judge_with_its_endpoint_options(installed, tmp_path, ragbench_rows, openai_server,
                                                              monkeypatch):
    """``rag-eval run --judge KIND --judge-option ...``: the plugin endpoint kind over the
    configuration's judge, its endpoint given as an option, stored in the run's configuration."""
    from rag_eval.runs.store import RunStore

    openai_server.set_handler(lambda body: "supported")
    monkeypatch.setenv("RAG_EVAL_LLM_PRICES", json.dumps(PRICES))
    rows = [{k: r[k] for k in ("id", "question", "documents", "response")} for r in ragbench_rows[:2]]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = str(tmp_path / "runs.sqlite")
    ran = _invoke("run", str(path), "--judge-only", "--judge", "overlap", "--judge-option",
                  f"base_url={openai_server.base_url}", "--judge-option", "model=test-model", "--db", db,
                  "--name", "chosen")
    assert ran.exit_code == 0, ran.output
    assert openai_server.request_count == 2 and "| adherence | Adherence | 1.000 |" in ran.output
    assert re.search(r"tokens [1-9]\d*; cost 0\.\d{4} USD", ran.output), ran.output
    judge = RunStore(db).get_run("chosen")["config"]["judge"]
    assert (judge["kind"], judge["model"], judge["base_url"]) == ("overlap", "test-model", openai_server.base_url)
    assert judge["options"] is None  # the endpoint settings are the configuration's own fields

    unknown = CliRunner().invoke(cli, ["run", str(path), "--judge-only", "--judge", "nope", "--db", db])
    assert unknown.exit_code == 2 and "overlap" in unknown.output  # the registry's kinds, the plugin's included
    bad = CliRunner().invoke(cli, ["run", str(path), "--judge-only", "--judge", "overlap", "--judge-option",
                                   "colour=red", "--db", db])
    assert bad.exit_code == 2 and "colour" in bad.output and "verdict" in bad.output, bad.output


def test_an_endpoint_kind_takes_its_endpoint_from_the_endpoint_settings_only():
    """``model``/``base_url``/``api_key_env`` are the endpoint's (the llm kind's flags and
    settings), never a plugin's own options; the registry names the default kinds."""
    from pydantic import BaseModel

    import rag_eval
    from rag_eval.judges.factory import judge_changes

    class WithEndpoint(BaseModel):
        base_url: str

    with pytest.raises(ValueError, match="base_url from the endpoint settings"):
        rag_eval.JudgeKind(name="x", factory=lambda options, llm: None, options=WithEndpoint, endpoint=True)
    kind = rag_eval.JudgeKind(name="x", factory=lambda options, llm: None, endpoint=True)
    assert kind.calls_network and kind.ray == "driver" and "OpenAI-compatible endpoint" in kind.needs()
    assert kind.endpoint_settings({"base_url": "u", "model": "m"}) == ({"base_url": "u", "model": "m"}, None)
    assert judge_changes("llm", {"model": "m", "samples": 2}) == {
        "judge.kind": "llm", "judge.calibration": None, "judge.options": {"samples": 2}, "judge.model": "m"}
    assert judge_changes("local:cal")["judge.calibration"] == "cal"
    assert (rag_eval.JUDGE_KINDS.default(endpoint=True), rag_eval.JUDGE_KINDS.default(endpoint=False)) == ("llm", "local")
