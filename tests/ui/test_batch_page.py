"""The Batch page's run launching (AppTest): the row cache makes an identical rerun
send no request, and the Ray option the owner's configuration offers spreads the local
judge over Ray with the results of one process. Each on SQLite and PostgreSQL where it
stores runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag_eval.judges.ray import RayCluster, configured_cluster
from rag_eval.runs.store import RunStore
from tests.conftest import PROJECT_ROOT
from tests.ui.settings_steps import choose_allowed_llm

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
SAMPLE = "RAGBench labelled sample (judge the given responses)"


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _batch_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value(SAMPLE).run()
    _ok(at)
    return at


labels: list[str] = []  # the progress label of each job started


def _run(at: AppTest, rows: int) -> str:
    at.number_input(key="batch.limit").set_value(rows).run()
    at.button(key="batch.run").click().run()
    _ok(at)
    job = at.session_state["batch.job"]
    labels.append(job.label)
    job.wait(timeout=600)
    assert job.error is None, job.error
    at.run()
    _ok(at)
    return str(at.session_state["batch.run_id"])


def _judged(run_id: str) -> list[dict]:
    """What a run stored per row, latency and timings aside."""
    drop = {"latency_s", "timings", "run_id", "created_at"}
    return [{k: v for k, v in item.items() if k not in drop} for item in RunStore().items(run_id)]


def test_an_identical_rerun_from_the_page_sends_no_request(dashboard_backend, openai_server, monkeypatch):
    """The page judges through the streaming pipeline with the row cache, as `rag-eval
    judge` does: the second identical run is answered without a judge request."""
    from harness.fake_answers import answer_text

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-123")
    monkeypatch.setenv("RAG_EVAL_ALLOWED_BASE_URLS", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_ALLOWED_MODELS", "test-model")
    openai_server.set_handler(lambda body: answer_text(body))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    choose_allowed_llm(at, openai_server.base_url)
    _ok(at)
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value(SAMPLE).run()
    first = _run(at, 3)
    sent = openai_server.request_count
    assert sent >= 3
    second = _run(at, 3)
    assert second != first
    assert openai_server.request_count == sent  # every row from the row cache: zero requests
    a, b = _judged(first), _judged(second)
    assert [i["status"] for i in b] == ["ok"] * 3
    assert [i["scores"] for i in b] == [i["scores"] for i in a]
    assert [i["labels"] for i in b] == [i["labels"] for i in a]


def test_without_a_cluster_the_page_offers_no_ray_and_imports_none(tmp_path):
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({APP!r}, default_timeout=120)\n"
        "at.run()\n"
        "at.switch_page('pages/batch.py').run()\n"
        f"at.radio(key='batch.source').set_value({SAMPLE!r}).run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "assert not [c for c in at.checkbox if c.key == 'batch.ray'], 'a Ray option without a cluster'\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("RAG_EVAL_RAY")}
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_cluster_comes_from_the_owners_configuration_only(monkeypatch):
    assert configured_cluster(lambda name: None) is None
    settings = {"RAG_EVAL_RAY_ADDRESS": "ray://head.example:10001", "RAG_EVAL_RAY_MAX_WORKERS": "6"}
    cluster = configured_cluster(settings.get)
    assert cluster == RayCluster("ray://head.example:10001", 6)
    assert cluster.label(show_address=False) == "the configured Ray cluster"
    assert configured_cluster({"RAG_EVAL_RAY_ADDRESS": "local"}.get) == RayCluster(None)
    with pytest.raises(ValueError, match="RAG_EVAL_RAY_MAX_WORKERS"):
        configured_cluster({"RAG_EVAL_RAY_ADDRESS": "auto", "RAG_EVAL_RAY_MAX_WORKERS": "many"}.get)
    # on a public deployment the page names no address and has no field to type one
    monkeypatch.setenv("RAG_EVAL_DEPLOYMENT", "public")
    monkeypatch.setenv("RAG_EVAL_RAY_ADDRESS", "ray://head.example:10001")
    at = _batch_page()
    option = at.checkbox(key="batch.ray")
    assert option.label == "Spread the local judge over Ray (the configured Ray cluster)"
    shown = " ".join(str(e.value) for e in (*at.markdown, *at.caption, *at.text)) + option.label
    assert "head.example" not in shown
    assert not [t for t in at.text_input if "ray" in (t.key or "").lower()]


def test_the_ray_option_gives_the_results_of_one_process(dashboard_backend, local_judge_ready, monkeypatch):
    pytest.importorskip("ray", reason="ray is in requirements-dev.txt; install it to run the Ray tests")
    monkeypatch.setenv("RAG_EVAL_RAY_ADDRESS", "local")  # the page starts (and stops) a local Ray instance
    at = _batch_page()
    option = at.checkbox(key="batch.ray")
    assert option.label == "Spread the local judge over Ray (a local Ray instance)"
    one = _run(at, 6)
    at.checkbox(key="batch.ray").check().run()
    at.number_input(key="batch.ray_workers").set_value(2).run()
    spread = _run(at, 6)
    assert at.session_state["batch.job"] is None and "on 2 Ray workers" in labels[-1]
    import ray

    assert not ray.is_initialized()  # the run stopped the Ray instance it started
    a, b = _judged(one), _judged(spread)
    assert [i["id"] for i in b] == [i["id"] for i in a]  # same rows, same order
    assert [i["status"] for i in b] == [i["status"] for i in a] and {i["status"] for i in b} == {"ok"}
    assert json.dumps(b, sort_keys=True, default=str) == json.dumps(a, sort_keys=True, default=str)
    runs = RunStore().get_run(one), RunStore().get_run(spread)
    assert runs[1]["summary"]["trace"] == runs[0]["summary"]["trace"]
    assert runs[1]["dataset_path"] == runs[0]["dataset_path"] and runs[1]["status"] == "finished"


UPLOAD = "Upload a file (JSONL, CSV, Parquet)"


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def _usable_line(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "rows are usable" in m.value)


def test_the_row_check_is_done_once_per_dataset_and_mode(demo_home, monkeypatch):
    """Every click reruns the page; the upload is saved and read, and its rows checked,
    once. A rerun that leaves the dataset as it was (another limit, a run name, a plain
    rerun) checks nothing again and shows the same problems; another mode, or another
    file, is checked. Spies count the calls and call the real functions."""
    import streamlit as st

    from rag_eval.runs import prepare, sources
    from rag_eval.ui import uploads

    calls = {"prepare_row": 0, "parse_row": 0, "save": 0}

    def counted(name, real):
        def spy(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return spy

    monkeypatch.setattr(prepare, "prepare_row", counted("prepare_row", prepare.prepare_row))
    monkeypatch.setattr(sources, "parse_row", counted("parse_row", sources.parse_row))
    monkeypatch.setattr(uploads, "save", counted("save", uploads.save))
    st.cache_data.clear()
    good = {"question": "What is X?", "answer": "X is a cat.", "contexts": ["X is a cat. It purrs."]}
    rows = [{"id": f"r{i}", **good} for i in range(1, 7)]
    rows[4] = {"id": "r5", "answer": "No question here.", "contexts": ["Something."]}
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value(UPLOAD).run()
    calls.update(dict.fromkeys(calls, 0))  # the first view checked the demo questions
    at.file_uploader(key="batch.upload").set_value(("mine.jsonl", _jsonl(rows), "application/json")).run()
    _ok(at)
    mode = at.radio(key=f"batch.mode.{UPLOAD}")
    assert mode.value == "Judge the given responses"
    assert calls == {"prepare_row": 6, "parse_row": 0, "save": 1}
    problems = at.dataframe[0].value
    assert list(problems["row"]) == [5] and "mine.jsonl: row 5, field 'question'" in problems["problem"][0]
    assert _usable_line(at) == ("**5 of 6** rows are usable (all rows); the other row is kept and reported with "
                                "status `invalid_input`.")

    # reruns that leave the dataset as it was: nothing is saved, read or checked again
    at.run()
    at.text_input(key=next(t.key for t in at.text_input if t.key.startswith("batch.name"))).input("renamed").run()
    _ok(at)
    assert calls == {"prepare_row": 6, "parse_row": 0, "save": 1}
    assert list(at.dataframe[0].value["row"]) == [5]
    at.number_input(key="batch.limit").set_value(4).run()  # the first 4 rows: the problem row is not among them
    _ok(at)
    assert calls == {"prepare_row": 6, "parse_row": 0, "save": 1}
    assert _usable_line(at) == "**4 of 4** rows are usable (4 of the dataset's 6 chosen)."  # no "others" when none
    assert not any("row(s) with problems" in w.value for w in at.warning)
    at.number_input(key="batch.limit").set_value(6).run()
    assert list(at.dataframe[0].value["row"]) == [5] and calls["prepare_row"] == 6

    # another mode is checked (once), and its estimate reads the rows as the RAG run does
    # (once more: rag_eval.runs.estimate); back to the first mode, both are reused
    at.radio(key=f"batch.mode.{UPLOAD}").set_value("Run the RAG system on the questions").run()
    _ok(at)
    assert calls == {"prepare_row": 6, "parse_row": 12, "save": 1}
    assert "mine.jsonl: row 5, field 'question'" in at.dataframe[0].value["problem"][0]
    at.run()
    assert calls == {"prepare_row": 6, "parse_row": 12, "save": 1}
    at.radio(key=f"batch.mode.{UPLOAD}").set_value("Judge the given responses").run()
    assert calls == {"prepare_row": 6, "parse_row": 12, "save": 1}

    # another file (same name, one more row, the bad row fixed) is saved, read and checked
    rows[4] = {"id": "r5", **good}
    at.file_uploader(key="batch.upload").set_value(("mine.jsonl", _jsonl([*rows, {"id": "r7", **good}]),
                                                    "application/json")).run()
    _ok(at)
    assert calls == {"prepare_row": 13, "parse_row": 12, "save": 2}
    assert _usable_line(at) == "**7 of 7** rows are usable (all rows)."
    assert not at.dataframe or "problem" not in at.dataframe[0].value
    at.file_uploader(key="batch.upload").clear().run()  # a removed upload's rows are let go
    _ok(at)
    assert at.session_state["batch.loaded"] is None


def test_the_pages_estimate_is_the_dry_runs_over_the_usable_rows(ragbench_rows, tmp_path):
    """Batch asks the one estimator (:mod:`rag_eval.runs.estimate`) what ``rag-eval judge
    --dry-run`` asks, over the rows chosen: a read error and a row without a question are
    counted as rows, never as requests."""
    from rag_eval.io.rows import RowError
    from rag_eval.judges.factory import judge_spec
    from rag_eval.rag.config import default_config
    from rag_eval.runs.estimate import estimate_run
    from rag_eval.runs.sources import RowsSource
    from rag_eval.ui import batch_rows

    pairs: list = list(enumerate(ragbench_rows[:6], start=1))
    pairs.insert(3, (99, RowError("rows", 99, None, "not an object")))
    pairs.insert(4, (100, {"id": "no-q", "documents": ["a"], "response": "b"}))
    dataset = batch_rows.LoadedDataset("rows", pairs, batch_rows.digest(json.dumps(pairs, default=str).encode()))
    config = default_config().with_changes(**{"judge.kind": "llm", "judge.model": "gpt-4o-mini"})
    for limit in (1, 5, 8):
        shown = batch_rows.estimate(dataset, batch_rows.JUDGE, limit, config)
        usable = sum(1 for _, v in pairs[:limit] if isinstance(v, dict) and v.get("question"))
        assert (shown.rows, shown.usable, shown.requests) == (limit, usable, usable)
        direct = estimate_run(RowsSource(pairs[:limit]), judge_spec(config.judge))
        assert (direct.requests, direct.prompt_tokens, direct.completion_tokens) == (
            shown.requests, shown.prompt_tokens, shown.completion_tokens)
    assert batch_rows.estimate(dataset, batch_rows.JUDGE, 8, default_config()).lines()[-1] == \
        "requests: none; cost: none"  # the local judge


def test_a_runs_results_table_is_built_once_per_run(demo_home, monkeypatch):
    """Every click on the Batch page reruns it; a shown run's results table (its items'
    report fields, 0.18 s for 2,000 items) is built once and read from the cache after.
    The spy counts the calls and calls the real function."""
    import streamlit as st

    from harness.sample_store import fill_store
    from rag_eval.ui import frames

    store = RunStore()
    fill_store(store, 1, 20)
    run_id = store.list_runs()[0]["id"]
    store.close()
    built = []
    real = frames.items_frame
    monkeypatch.setattr(frames, "items_frame", lambda items: built.append(len(items)) or real(items))
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/batch.py")
    at.session_state["batch.run_id"] = run_id
    at.run()
    _ok(at)
    assert len(at.dataframe[-1].value) == 20
    at.slider(key="batch.range").set_value((0.5, 1.0)).run()
    at.run()
    _ok(at)
    assert built == [20]
    assert len(at.dataframe[-1].value) <= 20


def test_the_default_run_name_names_each_part_once():
    from rag_eval.ui import batch_rows

    assert batch_rows.default_run_name("demo questions", "dense-k5") == "demo-questions-dense-k5"
    assert batch_rows.default_run_name("mine.jsonl", "judge") == "mine-judge"
    # a dataset saved from such a run: its name already says how it was run
    assert batch_rows.default_run_name("demo-questions-dense-k5.jsonl", "dense-k5") == "demo-questions-dense-k5"
    assert batch_rows.default_run_name("", "judge") == "judge"
