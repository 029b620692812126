"""Text is text on every page: real runs, items, questions, tags, notes, a reviewer, a saved
dataset and a calibration carry hostile names (Markdown image and link, HTML ``<img>``,
``:red[…]``, ``$…$``, a 500-character word), and AppTest walks every page, each view of Runs,
Batch's results and progress text, the support map (one row and two side by side), the
review queue and a calibration message. No element renders an image, a link or an HTML
element from them (``hostile_pages.rendered_problems``).

A deployed dashboard (a key in the environment and ``SPACE_ID``) shows no server path on any
page or in any message, the calibration message included."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag_eval.ui.constants import ALL_PAGES, STATE_COMPARE_PAIR, STATE_FOCUS, STATE_REVIEW_QUEUE, STATE_SUPPORT_SOURCE
from tests.security.hostile_pages import hostile_names, page_strings, rendered_problems

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
PIXEL = "http://127.0.0.1:9/pixel.png"  # AppTest has no browser: nothing fetches it here (see the browser test)
NAMES = hostile_names(PIXEL)


def _store_hostile_runs() -> dict[str, str]:
    """Two RAG runs (top-2, top-5) of demo questions with hostile ids and questions, and a
    judge run of RAGBench rows with hostile ids, questions and responses: all by the real
    local judge. Tags, notes, a review and a saved dataset with hostile names too."""
    from harness.runs import judge_dataset, run_dataset
    from rag_eval.config import data_dir
    from rag_eval.demo import DEMO_COLLECTION, load_demo, load_labelled_sample
    from rag_eval.judges.factory import build_judge
    from rag_eval.labels.store import item_from_record, save_review
    from rag_eval.rag.config import default_config
    from rag_eval.runs.store import RunStore

    judge = build_judge("local")
    store = RunStore()
    demo = load_demo()[1][:2]
    rows = [{**demo[0], "id": NAMES["item"], "question": NAMES["question"] + " " + demo[0]["question"]}, demo[1]]
    runs = {}
    for k, name in ((2, NAMES["run"]), (5, NAMES["run2"])):
        config = default_config(f"top-{k}").with_changes(**{"retrieval.k": k})
        runs[f"k{k}"] = run_dataset(rows, config, DEMO_COLLECTION, store, name=name, judge=judge,
                                    dataset_path=NAMES["dataset"])
        store.annotate_run(runs[f"k{k}"], tags=[NAMES["tag"], "plain"], note=NAMES["note"])
    sample = sorted(load_labelled_sample()[:6], key=lambda r: -len(r["response_sentences"]))[:2]  # several sentences
    hostile = [{**sample[0], "id": NAMES["item"], "question": NAMES["question"]}, sample[1]]
    runs["judge"] = judge_dataset(list(enumerate(hostile, start=1)), default_config("judge-only"), store, judge,
                                  name=NAMES["run"] + " judge", dataset_path=NAMES["dataset"])
    record = store.item(runs["judge"], NAMES["item"])
    item = item_from_record(record)
    from rag_eval.schema import Labels

    save_review(store, runs["judge"], item, Labels.from_dict(record["labels"]), NAMES["reviewer"],
                note=NAMES["note"], judge=str(record.get("judge") or ""))
    store.close()
    folder = data_dir() / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    row = {"id": NAMES["item"], "question": NAMES["question"]}
    (folder / f"{NAMES['dataset']}.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    return runs


@pytest.fixture
def hostile_home(demo_home):
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.store import close_clients

    try:
        build_judge("local")
    except (ValueError, OSError, ImportError) as err:
        pytest.skip(f"local judge unavailable: {err}")

    runs = _store_hostile_runs()
    close_clients()
    return demo_home, runs


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    return at


def _check(at: AppTest, where: str, seen: list[str]) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    problems = rendered_problems(at)
    assert problems == [], (where, problems)
    seen.append(where)


def test_every_page_renders_hostile_names_as_text(hostile_home):
    from rag_eval.display.views import view_from_record
    from rag_eval.runs.store import RunStore
    from rag_eval.ui import jobs

    _, runs = hostile_home
    seen: list[str] = []
    at = _app()
    for page in ALL_PAGES:
        at.switch_page(page).run()
        _check(at, page, seen)

    at.query_params["dataset"] = "all"
    at.switch_page("pages/runs.py").run()
    for view in ("Metrics over runs", "Agreement with ground truth", "One run"):
        at.session_state["runs.view"] = view
        at.session_state["runs.run"] = runs["k2"]
        at.run()
        _check(at, f"runs: {view}", seen)
    assert any(NAMES["note"] in s for s in page_strings(at))  # the note is on the page, as text

    at.switch_page("pages/compare.py").run()
    at.session_state["compare.runs"] = [runs["k2"], runs["k5"]]
    at.run()
    _check(at, "compare", seen)
    at.button(key="compare.open_pair").click().run()  # both support maps side by side
    _check(at, "support map: side by side", seen)

    at.switch_page("pages/batch.py").run()
    at.session_state["batch.run_id"] = runs["judge"]
    release = threading.Event()
    at.session_state["batch.job"] = jobs.start_job(NAMES["run"], lambda progress, cancel: release.wait(60), total=2)
    at.run()
    _check(at, "batch: progress and results", seen)
    assert any("pixel.png" in s for s in page_strings(at))  # the progress text holds the name, as text
    release.set()
    at.session_state["batch.job"].wait(timeout=60)

    store = RunStore()
    record = store.item(runs["judge"], NAMES["item"])
    store.close()
    view = view_from_record(record, NAMES["run"])
    view.extra["run_id"] = runs["judge"]
    at.session_state[STATE_SUPPORT_SOURCE] = view
    at.session_state[STATE_FOCUS] = "single"
    at.session_state[STATE_COMPARE_PAIR] = (view, view_from_record(record, NAMES["run2"]))
    at.session_state["review.reviewer"] = NAMES["reviewer"]
    at.session_state[STATE_REVIEW_QUEUE] = {"run_id": runs["judge"], "run_name": NAMES["run"],
                                            "ids": [NAMES["item"], "2"], "strategy": "random"}
    at.switch_page("pages/support_map.py").run()
    _check(at, "support map: one row with its review", seen)

    at.switch_page("pages/judges.py").run()
    at.selectbox(key="judges.run").set_value(runs["judge"]).run()
    at.session_state["judges.cal_result"] = {
        "cal": {"name": NAMES["calibration"], "fit_row_ids": [NAMES["item"]],
                "held_out": {"rows": 1, "before": {"auroc": None}, "after": {"auroc": 0.5}}},
        "where": NAMES["calibration"], "errors": [f"{NAMES['item']}: no labels"], "run_id": runs["judge"]}
    at.run()
    _check(at, "judges: queue, agreement and calibration", seen)
    assert len(seen) == len(ALL_PAGES) + 8


def test_a_deployed_dashboard_shows_no_server_path(rag_eval_home, monkeypatch):
    """Locked mode (a key and SPACE_ID): no page, message or table holds the data folder."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-paths-2")
    monkeypatch.setenv("SPACE_ID", "someone/rag-eval")
    from rag_eval.runs.store import RunStore

    store = RunStore()
    run_id = store.create_run({"name": "x"}, name="a run", n_items=1)
    store.add_items(run_id, [{"id": "r1", "status": "invalid_input", "error": f"no file {rag_eval_home}/x.csv",
                            "question": "q", "position": 0}])
    store.finish_run(run_id)
    store.close()
    at = _app()
    for page in ALL_PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        leaked = [s for s in page_strings(at) if str(rag_eval_home) in s]
        assert leaked == [], (page, leaked[:3])
    # the calibration message, from the real button: with no reviewed row the library refuses,
    # and the message that says so names no server path either
    at.switch_page("pages/judges.py").run()
    at.text_input(key="judges.cal_name").set_value("mine").run()
    at.button(key="judges.calibrate").click().run()
    leaked = [s for s in page_strings(at) if str(rag_eval_home) in s]
    assert leaked == [], leaked[:3]
