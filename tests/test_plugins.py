"""A real plugin package (tests/data/plugins/rag_eval_words: one metric, one judge kind,
declared through entry points) reaches every output: the registries' listings, a
``judge`` and a ``run`` output, the stored summary, the gate, the CSV/Parquet exports and
the HTML report. A plugin that raises on import is named, not fatal."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from harness.plugins import install
from rag_eval.cli import cli
from rag_eval.rag.config import default_config


@pytest.fixture
def plugins(tmp_path):
    with install(tmp_path / "site", "rag_eval_words", "rag_eval_broken") as projects:
        yield projects


@pytest.fixture
def rows_file(tmp_path, ragbench_rows):
    rows = [{k: r[k] for k in ("id", "question", "documents", "response")} for r in ragbench_rows[:4]]
    rows[2] = {**rows[2], "response": rows[2]["response"] + " FAIL_ME"}  # the metric raises on this row
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, rows


def _invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_listings_name_the_plugin_and_its_origin_and_the_broken_one(plugins):
    listed = _invoke("metrics", "list")
    assert listed.exit_code == 0
    line = next(x for x in listed.output.splitlines() if x.startswith("answer_words"))
    assert "rag-eval-words 0.1.0" in line and "lower" in line and "Answer length (words)" in line
    assert "context_relevance" in listed.output  # the built-ins still there
    broken = [x for x in listed.output.splitlines() if "rag-eval-broken" in x]
    assert len(broken) == 1 and "failed to load" in broken[0] and "ImportError" in broken[0]
    judges = _invoke("judges", "list")
    assert judges.exit_code == 0
    assert any(x.startswith("overlap") and "threshold" in x and "rag-eval-words" in x for x in judges.output.splitlines())


def test_judge_output_summary_and_gate_carry_the_plugin_metric(plugins, rows_file, tmp_path):
    path, rows = rows_file
    out = tmp_path / "out.jsonl"
    result = _invoke("judge", str(path), "--judge", "overlap", "--judge-option", "threshold=0.4",
                     "--metrics", "answer_words", "--out", str(out))
    assert result.exit_code == 0, result.output
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in written] == [r["id"] for r in rows]
    assert {r["judge"] for r in written} == {"overlap:0.4"} and {r["status"] for r in written} == {"ok"}
    for row, given in zip(written, rows):
        if "FAIL_ME" in given["response"]:  # failed with its reason, never 0 or NaN
            assert row["answer_words"] is None and "asked to fail" in row["metric_errors"]["answer_words"]
        else:
            assert row["answer_words"] == len(given["response"].split())
    assert "answer_words" in result.output  # the summary's means
    mean = sum(len(r["response"].split()) for r in rows if "FAIL_ME" not in r["response"]) / 3
    # the plugin declares answer_words lower-is-better: the gate takes an upper limit for it
    passed = _invoke("judge", str(path), "--judge", "overlap", "--out", str(out), "--fail-over",
                     f"answer_words={mean + 1:.3f}")
    assert passed.exit_code == 0, passed.output
    failed = _invoke("judge", str(path), "--judge", "overlap", "--out", str(out), "--fail-over",
                     f"answer_words={mean - 1:.3f}")
    assert failed.exit_code == 1 and "answer_words <=" in failed.output, failed.output
    wrong_side = CliRunner().invoke(cli, ["judge", str(path), "--judge", "overlap", "--out", str(out),
                                          "--fail-under", "answer_words=10"])
    assert wrong_side.exit_code == 2 and "lower is better" in wrong_side.output and "--fail-over" in wrong_side.output


def test_unknown_metric_or_bad_judge_option_fails_before_any_row(plugins, rows_file, tmp_path):
    path, _ = rows_file
    unknown = CliRunner().invoke(cli, ["judge", str(path), "--judge", "overlap", "--metrics", "nope",
                                       "--out", str(tmp_path / "o.jsonl")])
    assert unknown.exit_code == 2 and "nope" in unknown.output
    bad = CliRunner().invoke(cli, ["judge", str(path), "--judge", "overlap", "--judge-option", "threshold=3",
                                   "--out", str(tmp_path / "o.jsonl")])
    assert bad.exit_code == 2 and "threshold" in bad.output
    assert not (tmp_path / "o.jsonl").exists()


def test_run_store_summary_gate_exports_and_report(plugins, rows_file, tmp_path):
    path, rows = rows_file
    config = tmp_path / "overlap.yaml"
    default_config("overlap").with_changes(**{"judge.kind": "overlap", "judge.options": {"threshold": 0.4}}).to_yaml(config)
    db = tmp_path / "runs.sqlite"
    result = _invoke("run", str(path), "--judge-only", "--config", str(config), "--db", str(db), "--name", "plugged",
                     "--fail-over", "answer_words=100000")
    assert result.exit_code == 0, result.output
    from rag_eval.runs.store import RunStore

    store = RunStore(db)
    run = store.get_run("plugged")
    summary = run["summary"]
    assert summary["custom"]["answer_words"]["n"] == 3 and summary["custom"]["answer_words"]["coverage"] == 0.75
    assert summary["metric_failures"] == {"answer_words": 1}
    gated = CliRunner().invoke(cli, ["run", str(path), "--judge-only", "--config", str(config), "--db", str(db),
                                     "--fail-over", "answer_words=1"])
    assert gated.exit_code == 1 and "answer_words" in gated.output
    for fmt in ("csv", "parquet"):
        target = tmp_path / f"export.{fmt}"
        exported = _invoke("runs", "export", run["id"], "--format", fmt, "-o", str(target), "--db", str(db))
        assert exported.exit_code == 0, exported.output
        frame = pd.read_csv(target) if fmt == "csv" else pd.read_parquet(target)
        assert "answer_words" in frame.columns
        assert frame["answer_words"].notna().sum() == 3
    report = tmp_path / "report.html"
    made = _invoke("report", run["id"], "--out", str(report), "--db", str(db))
    assert made.exit_code == 0, made.output
    html = report.read_text(encoding="utf-8")
    assert "<h3>Other metrics</h3>" in html and "Answer length (words)" in html  # under its family, labelled


def test_python_api_with_the_plugin_judge_saves_its_kind_and_options(plugins, rows_file, tmp_path):
    import rag_eval

    path, rows = rows_file
    result = rag_eval.evaluate(str(path), judge="overlap", judge_options={"threshold": 0.4},
                               metrics=["answer_words"], progress=False)
    frame = result.to_pandas()
    assert list(frame["id"]) == [r["id"] for r in rows] and set(frame["judge"]) == {"overlap:0.4"}
    run_id = result.save("plugged-api", store=tmp_path / "runs.sqlite")
    loaded = rag_eval.load_run(run_id, store=tmp_path / "runs.sqlite")
    from rag_eval.runs.store import RunStore

    judge = RunStore(tmp_path / "runs.sqlite").get_run(run_id)["config"]["judge"]
    assert judge["kind"] == "overlap" and judge["options"] == {"threshold": 0.4}  # not "local"
    stored = loaded.to_pandas()  # a loaded run's rows carry the plugin metric and why it failed
    assert list(stored["answer_words"].isna()) == ["FAIL_ME" in r["response"] for r in rows]
    assert "asked to fail" in stored["metric_errors"].dropna().iloc[0]["answer_words"]
