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


def test_unknown_metric_option_and_bad_data_fail_before_judging(rows):
    with pytest.raises(ValueError, match="unknown metric.*'no_such_metric'.*precision"):
        rag_eval.evaluate(rows, metrics=["no_such_metric"], progress=False)
    with pytest.raises(ValueError, match="judge 'local' options: temperature: .*options: model_path"):
        rag_eval.evaluate(rows, judge_options={"temperature": 0}, progress=False)
    with pytest.raises(TypeError, match="not one dict"):
        rag_eval.evaluate(rows[0], progress=False)


def test_metrics_takes_every_listed_name_and_chooses_no_columns(rows):
    """``metrics=`` takes what ``rag-eval metrics list`` shows (``precision`` too); the
    columns are every metric computed, whatever was named."""
    listed = CliRunner().invoke(cli, ["metrics", "list"]).output.split()
    assert "precision" in listed
    named = rag_eval.evaluate(rows[:2], metrics=["precision", "bleu"], progress=False).to_pandas()
    default = rag_eval.evaluate(rows[:2], progress=False).to_pandas()
    assert list(named.columns) == list(default.columns)


def test_metrics_takes_a_metric_object(rows):
    chars = rag_eval.Metric("answer_chars", "Answer length (characters)", higher_is_better=False, range=(0, None),
                            compute=lambda item: rag_eval.Explained(float(len(item.response)), "counted"))
    try:
        frame = rag_eval.evaluate(rows[:2], metrics=[chars], progress=False).to_pandas()
        assert list(frame["answer_chars"]) == [float(len(r["response"])) for r in rows[:2]]
        assert list(frame["metric_reasons"]) == [{"answer_chars": "counted"}] * 2
        assert rag_eval.METRICS.get("answer_chars").origin == "python"
    finally:
        rag_eval.METRICS.unregister("answer_chars")


RAGAS = {"user_input": "question", "retrieved_contexts": "documents", "response": "response",
         "reference": "reference_answer"}
DEEPEVAL = {"input": "question", "retrieval_context": "documents", "actual_output": "response",
            "expected_output": "reference_answer"}


@pytest.mark.parametrize("names", [RAGAS, DEEPEVAL], ids=["ragas", "deepeval"])
def test_ragas_and_deepeval_columns_give_the_same_results(names, rows):
    """A DataFrame under ragas's or deepeval's column names evaluates as under ours."""
    ours = [{"id": r["id"], "question": r["question"], "documents": r["documents"], "response": r["response"],
             "reference_answer": "Yes."} for r in rows[:3]]
    theirs = pd.DataFrame([{"id": r["id"], **{their: r[field] for their, field in names.items()}} for r in ours])
    want = [_untimed(r) for r in rag_eval.evaluate(ours, progress=False).rows]
    got = [_untimed(r) for r in rag_eval.evaluate(theirs, progress=False).rows]
    assert got == want and all(r["status"] == "ok" and r["rouge_l"] is not None for r in got)


def test_unknown_columns_fail_before_any_row_with_one_message(rows, tmp_path):
    frame = pd.DataFrame([{"prompt": r["question"], "ctx": r["documents"], "response": r["response"]} for r in rows[:2]])
    with pytest.raises(ValueError) as err:
        rag_eval.evaluate(frame, progress=False)
    message = str(err.value)
    assert message.startswith("DataFrame: missing columns 'question' (or user_input, input) and 'documents' (or ")
    assert "retrieved_contexts" in message and "retrieval_context" in message
    assert "found: prompt, ctx, response" in message and "column_map=" in message
    mapped = rag_eval.evaluate(frame, column_map={"question": "prompt", "documents": "ctx"}, progress=False)
    assert [r["status"] for r in mapped.rows] == ["ok", "ok"]
    path = tmp_path / "theirs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict(orient="records")), encoding="utf-8")
    with pytest.raises(ValueError, match="theirs.jsonl: missing columns 'question' .* and 'documents'"):
        rag_eval.evaluate(path, progress=False)
    from_file = rag_eval.evaluate(path, column_map={"question": "prompt", "documents": "ctx"}, progress=False)
    assert [_untimed(r) for r in from_file.rows] == [_untimed(r) for r in mapped.rows]
    with pytest.raises(ValueError, match="'prompt' is not a field"):
        rag_eval.evaluate(frame, column_map={"prompt": "question"}, progress=False)
    with pytest.raises(ValueError, match="has no column 'nope'"):
        rag_eval.evaluate(frame, column_map={"question": "nope"}, progress=False)


def test_rag_eval_judge_reads_ragas_columns_too(rows, tmp_path):
    """The aliases are declared once, with the row schema: a file under ragas's names is
    judged by the CLI as the API judges it."""
    path = tmp_path / "ragas.jsonl"
    path.write_text("".join(json.dumps({"id": r["id"], "user_input": r["question"], "retrieved_contexts": r["documents"],
                                        "response": r["response"]}) + "\n" for r in rows[:2]), encoding="utf-8")
    judged, result = _cli_rows(path, tmp_path)
    assert result.exit_code == 0, result.output
    assert [r["status"] for r in judged] == ["ok", "ok"]
    assert [_untimed(r) for r in judged] == [_untimed(r) for r in rag_eval.evaluate(path, progress=False).rows]


def test_results_render_as_tables_in_jupyter(rows):
    """What Jupyter shows: ``_repr_html_`` tables with coverage and 95% intervals; a
    one-line ``repr`` for the summary (not the dataclass's)."""
    first, second = rag_eval.evaluate(rows, progress=False), rag_eval.evaluate(rows[:4], progress=False)
    summary = first.summary
    assert len(repr(summary)) < 300 and repr(summary).startswith(f"<Summary: {len(rows) - 1}/{len(rows)} items usable")
    page = first._repr_html_()
    assert page.startswith("<div><p><b>Evaluation: ") and "<th>95% interval</th>" in page and "coverage" in page
    stat = summary.metrics["adherence_score"]
    assert f"<td>adherence_score</td><td>{stat.mean:.3f}</td><td>[{stat.ci_low:.3f}, {stat.ci_high:.3f}]</td>" in page
    assert summary._repr_html_() in page.replace("<b>Evaluation: ", "<b>")
    comparison = rag_eval.compare(first, second)
    table = comparison._repr_html_()
    assert "evaluation-2 − evaluation-1" in table and "(coverage)" in table and "context_relevance" in table
    assert repr(comparison).startswith("<Comparison: evaluation-1 vs evaluation-2")


#: a Jupyter kernel as tqdm.auto recognises one (``ipykernel.zmqshell`` imported), without ipywidgets: no
#: kernel can run here (ipykernel and nbclient are not installed)
KERNEL_WITHOUT_WIDGETS = ("import sys, types, warnings; warnings.simplefilter('always'); "
                          "sys.modules['ipywidgets'] = None; "
                          "sys.modules['ipykernel.zmqshell'] = types.ModuleType('ipykernel.zmqshell'); "
                          "ipython = types.ModuleType('IPython'); ipython.get_ipython = lambda: object(); "
                          "sys.modules['IPython'] = ipython; ")


@pytest.mark.parametrize(("code", "warns"), [
    ("import tqdm.auto", True),  # what the bar used before: TqdmWarning (IProgress not found)
    ("from rag_eval.api import _progress; update, close = _progress(True, 'x'); update(1, 2); close()", False),
])
def test_progress_bar_gives_no_warning_in_jupyter_without_ipywidgets(code, warns):
    done = subprocess.run([sys.executable, "-c", KERNEL_WITHOUT_WIDGETS + code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert ("TqdmWarning" in done.stderr) == warns, done.stderr


def test_aevaluate_inside_a_running_event_loop(rows):
    import asyncio

    async def notebook_cell():
        return await rag_eval.aevaluate(rows[:2], progress=False)

    result = asyncio.run(notebook_cell())
    assert [r["status"] for r in result.rows] == ["ok", "ok"]


def test_a_plugin_finds_its_types_at_the_root():
    from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels

    assert (rag_eval.EvalItem, rag_eval.JudgeResult, rag_eval.JudgeStatus, rag_eval.Labels) == (
        EvalItem, JudgeResult, JudgeStatus, Labels)
    assert rag_eval.register_rubric.__module__ == "rag_eval.judges.rubric" and rag_eval.Explained


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


def test_the_progress_bar_starts_with_its_total(rows, capsys):
    """No stray ``0row [00:00, ?row/s]`` line before the bar: it is drawn once the total is known."""
    rag_eval.evaluate(rows[:2], progress=True)
    drawn = capsys.readouterr().err.replace("\r", "\n")
    assert "?row/s]" not in drawn.replace("<?, ?row/s]", "") and "0row " not in drawn, drawn
    assert "2/2" in drawn


def test_a_printed_summary_says_why_a_metric_has_no_interval(rows):
    """One row with a reference answer: bleu has a mean and no interval, and the line says why
    (the README's example printed ``bleu: 0.4172 [n/a, n/a] (n=1)``)."""
    one = [{**rows[0], "reference_answer": rows[0]["response"]}, *rows[1:3]]
    printed = str(rag_eval.evaluate(one, progress=False).summary)
    bleu = next(line for line in printed.splitlines() if line.strip().startswith("bleu:"))
    assert bleu.endswith("(n=1: too few rows for an interval)") and "[n/a" not in printed, printed


def test_a_language_for_every_row_that_names_none(tmp_path):
    """``evaluate(..., language=)``: the rows that name no language are judged in the caller's
    (normalized: ``zh-Hans`` is ``zh``; a row of digits alone, which no detector can place,
    included), it reaches the rows, ``Summary.by_language`` and the saved configuration, and a
    row's own ``language`` wins. Real rows: the committed shared passages in Chinese and Japanese."""
    from pathlib import Path

    passages = [json.loads(line) for line in (Path(__file__).parent / "data" / "multilingual" / "passages.jsonl")
                .read_text(encoding="utf-8").splitlines()]
    zh, ja = (next(p for p in passages if p["language"] == code) for code in ("zh", "ja"))
    rows = [{"id": f"zh{i}", "question": zh["question"], "documents": [zh["text"]], "response": zh["text"][i * 40:][:40]}
            for i in range(2)]
    rows += [{"id": "digits", "question": "2009?", "documents": ["2009"], "response": "2009"},
             {"id": "ja", "question": ja["question"], "documents": [ja["text"]], "response": ja["text"][:40],
              "language": "ja"}]
    detected = rag_eval.evaluate(rows, judge="lexical", progress=False)
    assert detected.to_pandas().set_index("id")["language"]["digits"] == "und"

    result = rag_eval.evaluate(rows, judge="lexical", progress=False, language="zh-Hans", store=tmp_path / "runs.sqlite",
                               name="zh")
    by_id = result.to_pandas().set_index("id")["language"].to_dict()
    assert by_id == {"zh0": "zh", "zh1": "zh", "digits": "zh", "ja": "ja"}
    assert {k: v["n_items"] for k, v in result.summary.by_language.items()} == {"zh": 3, "ja": 1}
    assert rag_eval.load_run("zh", store=tmp_path / "runs.sqlite").summary.by_language.keys() == {"zh", "ja"}
    from rag_eval.runs.store import RunStore

    assert RunStore(tmp_path / "runs.sqlite").get_run(result.run_id)["config"]["language"] == "zh"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    from_file = rag_eval.evaluate(path, judge="lexical", progress=False, language="zh")
    assert from_file.to_pandas().set_index("id")["language"].to_dict() == by_id
    with pytest.raises(ValueError, match="language='chinese!'"):
        rag_eval.evaluate(rows, judge="lexical", progress=False, language="chinese!")
