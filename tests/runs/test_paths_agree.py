"""The differential matrix: the same real rows through every entry point × every judge ×
Ray on and off give the same ids, order, statuses, labels and scores.

Rows: the committed RAGBench rows (CC-BY-4.0, tests/data/ATTRIBUTION.md) as plain
question / documents / response rows, one of them repeated under the same id (stored as
``id#2`` everywhere) and one invalid row (no response). Every cell is compared with the
engine itself (:func:`rag_eval.runs.engine.evaluate` into memory) on the same judge.

A new entry point joins the matrix with one line in ``GIVEN`` (rows that carry a
response) or ``RAG`` (questions through the RAG system): a function that runs it and
returns one :func:`_row` per item. Ray cells are few (Ray local mode is slow on 2 cores).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.runs.store import RunStore
from tests.conftest import DATA_DIR

SAMPLE = DATA_DIR / "ragbench_sample.jsonl"
# a calibration needs at least 20 labelled rows (labels.calibrate.MIN_ROWS): fitted on 24 msmarco rows
CALIBRATION_ROWS = DATA_DIR / "ragbench_msmarco_24.jsonl"
KEY_FIELDS = ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "unsupported_response_sentence_keys",
              "overall_supported")
SCORES = ("context_relevance", "context_utilization", "completeness", "adherence", "adherence_score")
APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
_CALIBRATION: dict[str, str] = {}  # the fitted calibration's JSON, fitted once per session


# ---------------------------------------------------------------- rows and judges
def matrix_rows(ragbench_rows: list[dict]) -> list[dict]:
    rows = [{"id": r["id"], "question": r["question"], "documents": list(r["documents"]), "response": r["response"],
             **{k: r[k] for k in ("relevance_score", "utilization_score", "completeness_score") if k in r}}
            for r in ragbench_rows]
    repeated = dict(rows[0], response=rows[1]["response"])  # the same id again, another response
    invalid = {"id": "no-response", "question": "What happens without a response?", "documents": ["A passage."]}
    return [*rows[:3], repeated, *rows[3:], invalid]


def _round(value: Any) -> Any:
    return round(float(value), 9) if isinstance(value, float) else value


def _row(item_id: str, status: str, labels: dict | None, scores: dict | None, judge: str | None = None) -> dict:
    usable = status in ("ok", "repaired")
    return {"id": item_id, "status": status, "judge": judge if usable else None,
            "labels": {k: labels.get(k) for k in KEY_FIELDS} if usable and labels else None,
            "scores": {k: _round(scores.get(k)) for k in SCORES} if usable and scores else None}


def _from_file_row(r: dict) -> dict:
    return _row(r["id"], r["status"], r, r, r.get("judge"))


def _from_stored(i: dict) -> dict:
    return _row(i["id"], i["status"], i.get("labels"), i.get("scores"), i.get("judge"))


def fit_calibration(name: str = "matrix") -> str:
    """``local:NAME``: a calibration fitted here on the labelled RAGBench rows (once per session)."""
    from rag_eval.judges.calibration import calibration_path

    path = calibration_path(name)
    if name not in _CALIBRATION:
        result = CliRunner().invoke(cli, ["calibrate", str(CALIBRATION_ROWS), "--name", name])
        assert result.exit_code == 0, result.output
        _CALIBRATION[name] = path.read_text(encoding="utf-8")
    elif not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_CALIBRATION[name], encoding="utf-8")
    return f"local:{name}"


class Ctx:
    """One cell's inputs: the rows file, the judge, the LLM server, a scratch folder."""

    def __init__(self, tmp: Path, rows: list[dict], judge: str, ray: bool, server: Any) -> None:
        self.tmp, self.rows, self.judge, self.ray, self.server = tmp, rows, judge, ray, server
        self.path = tmp / "rows.jsonl"
        self.path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        self.judge_name = fit_calibration() if judge == "calibrated" else judge

    def judge_args(self) -> list[str]:
        if self.judge == "llm":
            return ["--judge", "llm", "--model", "test-model", "--base-url", self.server.base_url]
        return ["--judge", self.judge_name]

    def config_yaml(self) -> Path:
        """A pipeline configuration naming this cell's judge."""
        from rag_eval.rag.config import default_config

        changes: dict[str, Any] = {}
        if self.judge == "llm":
            changes = {"judge.kind": "llm", "judge.model": "test-model", "judge.base_url": self.server.base_url}
        elif self.judge == "calibrated":
            changes = {"judge.calibration": self.judge_name.split(":", 1)[1]}
        path = self.tmp / "config.yaml"
        default_config("matrix").with_changes(**changes).to_yaml(path) if changes else default_config("matrix").to_yaml(path)
        return path

    def ray_args(self) -> list[str]:
        return ["--ray", "--ray-workers", "2"] if self.ray else []


def reference(ctx: Ctx) -> list[dict]:
    """The engine itself: the rows into memory, the judge from the one factory."""
    from rag_eval.judges.factory import build_judge
    from rag_eval.llm.config import LLMConfig
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.runs.sources import RowsSource

    llm = LLMConfig.from_settings(model="test-model", base_url=ctx.server.base_url) if ctx.judge == "llm" else None
    judge = build_judge(ctx.judge_name, llm=llm)
    sink = MemorySink()
    evaluate(RowsSource(path=ctx.path), judge, sink, config="clean")
    return [_row(r.id, r.status, r.labels, r.scores, r.judge) for r in sink.records]


# ---------------------------------------------------------------- entry points: rows with responses
def via_judge_command(ctx: Ctx) -> list[dict]:
    out = ctx.tmp / "judged.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(ctx.path), *ctx.judge_args(), "--out", str(out), *ctx.ray_args(),
                                      "--min-coverage", "0.5"])
    assert result.exit_code == 0, result.output
    return [_from_file_row(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()]


def via_run_judge_only(ctx: Ctx) -> list[dict]:
    result = CliRunner().invoke(cli, ["run", str(ctx.path), "--judge-only", "--config", str(ctx.config_yaml()),
                                      "--name", "matrix", *ctx.ray_args(), "--min-coverage", "0.5"])
    assert result.exit_code == 0, result.output
    store = RunStore()
    return [_from_stored(i) for i in store.items(store.get_run("matrix")["id"])]


def via_assert_trace(ctx: Ctx) -> list[dict]:
    """``rag_eval.testing.check_trace`` row by row (its item id is its own; the position says which row)."""
    from rag_eval.judges.factory import build_judge
    from rag_eval.llm.config import LLMConfig
    from rag_eval.runs.join import occurrence_keys
    from rag_eval.testing import check_trace

    llm = LLMConfig.from_settings(model="test-model", base_url=ctx.server.base_url) if ctx.judge == "llm" else None
    judge = build_judge(ctx.judge_name, llm=llm)
    ids = occurrence_keys([r["id"] for r in ctx.rows])
    out = []
    for item_id, r in zip(ids, ctx.rows):
        check = check_trace(r["question"], r["documents"], r.get("response", ""), judge=judge, mode="clean")
        labels = check.result.labels.to_dict() if check.result.labels else None
        out.append(_row(item_id, check.result.status.value, labels, check.values, check.result.judge))
    return out


def via_evaluate(ctx: Ctx) -> list[dict]:
    """``rag_eval.evaluate`` (the package root's Python API) on the rows as a DataFrame."""
    import pandas as pd

    import rag_eval

    options = {"model": "test-model", "base_url": ctx.server.base_url} if ctx.judge == "llm" else {}
    result = rag_eval.evaluate(pd.DataFrame(ctx.rows), judge=ctx.judge_name, judge_options=options, progress=False)
    return [_from_file_row(r) for r in result.rows]


def via_batch_page(ctx: Ctx) -> list[dict]:
    from streamlit.testing.v1 import AppTest

    from rag_eval.config import data_dir

    folder = data_dir() / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ctx.path, folder / "matrix.jsonl")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    if ctx.judge == "llm":
        from tests.ui.settings_steps import choose_allowed_llm

        choose_allowed_llm(at, ctx.server.base_url)
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("A saved dataset (Datasets page)").run()
    at.selectbox(key="batch.saved").select("matrix").run()
    at.number_input(key="batch.limit").set_value(len(ctx.rows)).run()
    if ctx.ray:
        at.checkbox(key="batch.ray").check().run()
        at.number_input(key="batch.ray_workers").set_value(2).run()
    at.button(key="batch.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    job = at.session_state["batch.job"]
    job.wait(timeout=900)
    assert job.error is None, job.error
    at.run()
    return [_from_stored(i) for i in RunStore().items(str(at.session_state["batch.run_id"]))]


#: entry point name -> (function, judges it takes, whether it has a Ray cell)
GIVEN: dict[str, tuple[Callable[[Ctx], list[dict]], tuple[str, ...], bool]] = {
    "judge": (via_judge_command, ("local", "calibrated", "llm"), True),
    "run --judge-only": (via_run_judge_only, ("local", "calibrated", "llm"), True),
    "rag_eval.evaluate": (via_evaluate, ("local", "calibrated", "llm"), False),
    "rag_eval.testing": (via_assert_trace, ("local", "calibrated", "llm"), False),
    "batch page": (via_batch_page, ("local", "llm"), False),
}
RAY_CELLS = {("judge", "calibrated"), ("run --judge-only", "calibrated")}  # the paths that dropped the calibration

CELLS = [pytest.param(entry, judge, False, id=f"{entry}-{judge}")
         for entry, (_, judges, _) in GIVEN.items() for judge in judges]
CELLS += [pytest.param(entry, judge, True, id=f"{entry}-{judge}-ray", marks=pytest.mark.slow)
          for entry, judge in sorted(RAY_CELLS)]


@pytest.fixture
def llm_env(openai_server, monkeypatch):
    from harness.fake_answers import answer_text

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-123")
    monkeypatch.setenv("RAG_EVAL_ALLOWED_BASE_URLS", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_ALLOWED_MODELS", "test-model")
    openai_server.set_handler(lambda body: answer_text(body))
    return openai_server


@pytest.mark.parametrize(("entry", "judge", "ray"), CELLS)
def test_every_entry_point_gives_the_engines_rows(entry, judge, ray, tmp_path, ragbench_rows, llm_env, monkeypatch):
    if ray:
        pytest.importorskip("ray", reason="ray is in requirements-dev.txt; install it to run the Ray tests")
        monkeypatch.setenv("RAG_EVAL_RAY_ADDRESS", "local")
    ctx = Ctx(tmp_path, matrix_rows(ragbench_rows), judge, ray, llm_env)
    expected = reference(ctx)
    assert [r["id"] for r in expected][3] == f"{ctx.rows[0]['id']}#2" and expected[-1]["status"] == "invalid_input"
    assert {r["status"] for r in expected[:-1]} == {"ok"}
    if judge == "calibrated":
        assert {r["judge"] for r in expected[:-1]} == {f"local:{_local_version()}+matrix"}
    got = GIVEN[entry][0](ctx)
    assert [r["id"] for r in got] == [r["id"] for r in expected]  # ids and order
    assert [r["status"] for r in got] == [r["status"] for r in expected]
    assert [r["labels"] for r in got] == [r["labels"] for r in expected]
    assert [r["scores"] for r in got] == [r["scores"] for r in expected]
    assert [r["judge"] for r in got] == [r["judge"] for r in expected]


def _local_version() -> str:
    from rag_eval.judges.local import LocalModel

    return LocalModel.load().version


# ---------------------------------------------------------------- entry points: the RAG system
RAG_QUESTIONS = 4


def _rag_rows(demo_questions: list[dict]) -> list[dict]:
    return [*demo_questions[:RAG_QUESTIONS], {"id": "blank", "question": "  "}]


def rag_via_run(tmp: Path, rows: list[dict], config: Path) -> list[dict]:
    path = tmp / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(path), "--config", str(config), "--name", "rag-matrix",
                                      "--min-coverage", "0.5"])
    assert result.exit_code == 0, result.output
    store = RunStore()
    return [_from_stored(i) for i in store.items(store.get_run("rag-matrix")["id"])]


def rag_via_ask(tmp: Path, rows: list[dict], config: Path) -> list[dict]:
    """``rag-eval ask --json`` question by question (the invalid row is what ask refuses)."""
    out = []
    for r in rows:
        if not r["question"].strip():
            out.append(_row(r["id"], "invalid_input", None, None))
            continue
        result = CliRunner().invoke(cli, ["ask", r["question"], "--config", str(config), "--json"])
        assert result.exit_code == 0, result.output
        shown = json.loads(result.output)
        judged = shown["judge_result"]
        scores = shown["scores"]
        values = None if scores is None else {**{k: scores[k] for k in SCORES if k != "adherence"},
                                              "adherence": None if scores["adherence"] is None
                                              else float(scores["adherence"])}
        out.append(_row(r["id"], judged["status"], judged["labels"], values, judged["judge"]))
    return out


RAG: dict[str, Callable[[Path, list[dict], Path], list[dict]]] = {
    "run": rag_via_run,
    "ask": rag_via_ask,
}


@pytest.mark.parametrize("judge", ["local", "calibrated"])
def test_the_rag_entry_points_agree(judge, tmp_path, demo_collection, demo_questions):
    from rag_eval.rag.config import default_config

    config = tmp_path / "rag.yaml"
    changes = {"retrieval.k": 3}
    if judge == "calibrated":
        changes["judge.calibration"] = fit_calibration().split(":", 1)[1]
    default_config("rag-matrix").with_changes(**changes).to_yaml(config)
    rows = _rag_rows(demo_questions)
    results = {name: run(tmp_path, rows, config) for name, run in RAG.items()}
    first = results["run"]
    assert [r["id"] for r in first] == [r["id"] for r in rows] and first[-1]["status"] == "invalid_input"
    assert {r["status"] for r in first[:-1]} == {"ok"}
    for name, got in results.items():
        assert got == first, name
