"""Widgets keyed to what they describe (AppTest): a new answer on Ask resets the sentence
picker; Datasets' uploader is empty after an import and says which files it holds (they
would otherwise silently join the next import); the review queue drops
reviewed rows and *Start reviewing* opens the next one; Batch shows no results of a previous
run under a newly chosen dataset."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from rag_eval.ui.constants import STATE_REVIEW_QUEUE, STATE_SUPPORT_SOURCE
from tests.ui.page_steps import no_failure as _ok
from tests.ui.test_pages import _app


def _picker(at: AppTest, page: str = "ask"):
    """The sentence picker of the page's map (its key names the answer it describes)."""
    return next(s for s in at.selectbox if s.key and s.key.startswith(f"{page}.selected."))


def _uploader(at: AppTest):
    return next(u for u in at.get("file_uploader") if u.key.startswith("datasets.files"))


def test_ask_resets_the_sentence_picker_for_a_new_answer(demo_home, local_judge_ready):
    at = _app()
    at.switch_page("pages/ask.py").run()
    at.selectbox(key="ask.example").select_index(1).run()
    at.button(key="ask.ask").click().run()
    _ok(at)
    first = at.session_state["ask.result"]
    keys = first.item.response_keys
    assert len(keys) >= 2, keys
    _picker(at).select(keys[-1]).run()  # the last sentence of the first answer, picked
    assert _picker(at).value == keys[-1] == at.session_state["ask.selected"]
    first_picker = _picker(at).key
    at.selectbox(key="ask.example").select_index(2).run()
    at.button(key="ask.ask").click().run()
    _ok(at)
    second = at.session_state["ask.result"]
    assert second.question != first.question
    # the new answer's first sentence, not the old answer's last
    assert _picker(at).key != first_picker  # a new answer is a new widget (a browser keeps a kept widget's value)
    assert _picker(at).value == second.item.response_keys[0] == at.session_state["ask.selected"]


def test_datasets_uploader_is_empty_after_an_import_and_after_leaving(rag_eval_home):
    rows = b'{"id": "a", "question": "What is A?"}\n'
    at = _app()
    at.switch_page("pages/datasets.py").run()
    _uploader(at).set_value([("one.jsonl", rows, "application/json")]).run()
    assert any("The import reads 1 file(s): one.jsonl" in c.value for c in at.caption)  # said before it runs
    at.button(key="datasets.import").click().run()
    _ok(at)
    assert any("Saved 1 row as 'my-dataset'" in s.value for s in at.success)
    at.run()
    assert not _uploader(at).value  # imported: the uploader starts empty
    _uploader(at).set_value([("two.jsonl", rows, "application/json")]).run()
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/datasets.py").run()
    _ok(at)
    held = [f.name for f in _uploader(at).value or []]
    if held:  # back from another page: whatever the uploader still holds is said before an import reads it
        assert any(f"The import reads {len(held)} file(s): two.jsonl" in c.value for c in at.caption)


def _judged_run(rows: int = 3) -> str:
    from harness.runs import judge_dataset
    from rag_eval.demo import load_labelled_sample
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.config import default_config
    from rag_eval.runs.store import RunStore

    store = RunStore()
    sample = list(enumerate(load_labelled_sample()[:rows], start=1))
    run_id = judge_dataset(sample, default_config("judge-only"), store, build_judge("local"), name="queue-run")
    store.close()
    return run_id


def test_review_queue_drops_reviewed_rows_and_start_moves_on(rag_eval_home, local_judge_ready):
    from rag_eval.labels.store import item_from_record, save_review
    from rag_eval.runs.store import RunStore
    from rag_eval.schema import Labels

    run_id = _judged_run()
    store = RunStore()
    ids = [str(i["id"]) for i in store.items(run_id)]
    at = _app()
    at.switch_page("pages/judges.py").run()
    at.session_state[STATE_REVIEW_QUEUE] = {"run_id": run_id, "run_name": "queue-run", "ids": ids,
                                            "strategy": "random"}
    at.run()
    _ok(at)
    assert any("3 of 3 queued row(s) left to review" in c.value for c in at.caption)
    record = store.item(run_id, ids[0])
    save_review(store, run_id, item_from_record(record), Labels.from_dict(record["labels"]), "ann")
    store.close()
    at.run()
    _ok(at)
    caption = next(c.value for c in at.caption if "queued row(s)" in c.value)
    assert "2 of 3 queued row(s) left to review" in caption and ids[0] not in caption.split(":", 1)[1]
    at.button(key="judges.start").click().run()
    _ok(at)
    assert at.title[0].value == "Sentence support map"
    assert at.session_state[STATE_SUPPORT_SOURCE].item.id == ids[1]  # the first row not reviewed yet


def test_batch_drops_the_previous_results_for_a_new_dataset(rag_eval_home, local_judge_ready):
    run_id = _judged_run(rows=2)
    at = _app()
    at.switch_page("pages/batch.py").run()
    at.session_state["batch.run_id"] = run_id
    at.run()
    _ok(at)
    assert any("Results" in s.value for s in at.subheader)
    at.radio(key="batch.source").set_value("RAGBench labelled sample (judge the given responses)").run()
    _ok(at)
    assert not any("Results" in s.value for s in at.subheader)
    assert at.session_state["batch.run_id"] is None


def test_judges_page_shows_the_word_overlap_reference_beside_the_judge(rag_eval_home, local_judge_ready):
    """Reviewed rows: every agreement table lists the run's judge and the lexical reference
    (word overlap on the same rows), with the caption saying what the reference is."""
    from rag_eval.demo import load_labelled_sample
    from rag_eval.labels.agreement import REFERENCE, REFERENCE_NOTE
    from rag_eval.labels.store import item_from_record, save_review
    from rag_eval.runs.store import RunStore
    from rag_eval.schema import Labels

    run_id = _judged_run()
    store = RunStore()
    truth = {str(r["id"]): r for r in load_labelled_sample()}
    for record in store.items(run_id):
        save_review(store, run_id, item_from_record(record), Labels.from_dict(truth[str(record["id"])]), "ann")
    judge = store.items(run_id)[0]["judge"]
    store.close()
    at = _app()
    at.switch_page("pages/judges.py").run()
    _ok(at)
    assert any(REFERENCE_NOTE in c.value for c in at.caption)
    tables = [d.value for d in at.dataframe if "judge" in d.value.columns]
    assert len(tables) == 3 and all({judge, REFERENCE} <= set(t["judge"]) for t in tables), tables
