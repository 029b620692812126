"""The local judge: loads offline, labels real RAGBench rows, keeps order and statuses."""

from __future__ import annotations

import dataclasses
import json
import threading

import numpy as np
import pytest

from rag_eval.judges.base import Judge
from rag_eval.judges.factory import build_judge
from rag_eval.judges.features import RESP_FEATURES
from rag_eval.judges.local import MODEL_DIR, SUPPORT_FEATURES, LocalJudge, LocalModel
from rag_eval.metrics.trace import score_item
from rag_eval.schema import EvalItem, JudgeStatus, Sentence
from rag_eval.text.sentences import item_from_row, item_from_texts


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.fixture(scope="module")
def items(ragbench_rows) -> list[EvalItem]:
    return [item_from_row(r) for r in ragbench_rows]


@pytest.fixture(scope="module")
def results(judge, items):
    return judge.judge(items)


def test_is_a_judge_and_names_its_version(judge):
    assert isinstance(judge, Judge)
    meta = json.loads((MODEL_DIR / "model.json").read_text())
    assert judge.name == f"local:{meta['version']}"


def test_labels_fixture_rows_with_valid_keys_only(items, results):
    assert [r.id for r in results] == [it.id for it in items]
    for item, res in zip(items, results):
        assert res.status is JudgeStatus.OK, res.error
        assert res.judge.startswith("local:")
        lab = res.labels
        doc_keys, resp_keys = set(item.document_keys), set(item.response_keys)
        assert set(lab.all_relevant_sentence_keys) <= doc_keys
        assert set(lab.all_utilized_sentence_keys) <= doc_keys
        assert set(lab.unsupported_response_sentence_keys) <= resp_keys
        assert [s.response_sentence_key for s in lab.sentence_support_information] == item.response_keys
        for s in lab.sentence_support_information:
            assert s.supporting_sentence_keys and set(s.supporting_sentence_keys) <= doc_keys
            assert s.explanation.startswith("max similarity")
        for probs in (lab.relevance_probabilities, lab.utilization_probabilities, lab.support_probabilities):
            assert probs and all(0.0 <= p <= 1.0 for p in probs.values())
        assert set(lab.relevance_probabilities) == doc_keys
        assert 0.0 <= lab.adherence_probability <= 1.0
        assert lab.overall_supported is (not lab.unsupported_response_sentence_keys)
        scores = score_item(item, lab, "clean")
        assert "dropped_keys" not in scores.diagnostics
        assert scores.adherence_score == pytest.approx(lab.adherence_probability)


def test_results_serialise_to_json(results):
    for res in results:
        d = res.to_dict()
        assert d["status"] == "ok"
        json.dumps(d)


def test_judgement_is_deterministic(judge, items, results):
    again = judge.judge(items[:3])
    assert [r.labels.to_dict() for r in again] == [r.labels.to_dict() for r in results[:3]]


def _scored(item, result) -> tuple[dict, dict]:
    """Everything a row gets (labels and scores), without the timing."""
    return result.labels.to_dict(), score_item(item, result.labels, "clean").to_dict()


def test_a_row_gets_the_same_labels_alone_or_among_other_rows(items, results):
    """No batch-mates effect: each row judged alone, by a fresh judge with an empty
    cache, equals the same row judged in one batch of all the fixture rows (several
    pipeline steps, shared texts cached), and in another order and chunking."""
    together = {it.id: _scored(it, r) for it, r in zip(items, results)}
    for item in items:
        alone = LocalJudge().judge([item])[0]
        assert _scored(item, alone) == together[item.id], item.id
    shuffled = list(reversed(items))
    other = LocalJudge(chunk_size=3).judge(shuffled)
    assert {it.id: _scored(it, r) for it, r in zip(shuffled, other)} == together


def test_a_row_gets_the_same_labels_whatever_the_cache_kept(items, results):
    """A cache far too small for the batch (texts evicted and embedded again, the
    least recently used first) gives every row exactly the labels and scores of a
    judge whose cache kept everything: a vector depends on its text alone."""
    from rag_eval.judges.encoder import JudgeEncoder

    tiny = LocalJudge(embedder=JudgeEncoder(cache_size=8), chunk_size=2)
    out = tiny.judge(items + items[:2])
    assert len(tiny.embedder.cache) <= 8
    together = [_scored(it, r) for it, r in zip(items, results)]
    assert [_scored(it, r) for it, r in zip(items + items[:2], out)] == together + together[:2]


def test_steps_overlap_embedding_and_features_and_keep_order(items, results, monkeypatch):
    """A chunk larger than one pipeline step embeds the next step while this one is
    featurised; results keep their order and equal one-step results."""
    import rag_eval.judges.local as local

    monkeypatch.setattr(local, "PIPELINE_ROWS", 2)
    out = LocalJudge().judge(items)
    assert [r.id for r in out] == [it.id for it in items]
    assert [r.labels.to_dict() for r in out] == [r.labels.to_dict() for r in results]


def test_a_failing_embedder_fails_only_its_rows(items, monkeypatch):
    class Flaky:
        calls = 0

        def encode(self, texts):
            self.calls += 1
            if self.calls == 2:
                raise RuntimeError("encoder crashed")
            from rag_eval.judges.encoder import JudgeEncoder

            return JudgeEncoder().encode(texts)

    import rag_eval.judges.local as local

    monkeypatch.setattr(local, "PIPELINE_ROWS", 4)
    judge = LocalJudge(embedder=Flaky())
    steps = [items[i:i + local.PIPELINE_ROWS] for i in range(0, len(items), local.PIPELINE_ROWS)]
    assert len(steps) >= 2
    out = judge.judge(items)
    assert [r.id for r in out] == [it.id for it in items]
    second = {it.id for it in steps[1]}
    for r in out:
        if r.id in second:
            assert r.status is JudgeStatus.PROVIDER_ERROR and "encoder crashed" in r.error
        else:
            assert r.status is JudgeStatus.OK


def test_grounded_answer_scores_above_invented_numbers(judge):
    doc = ["The bridge opened in 1932. It is 1,149 metres long and carries eight lanes."]
    good = item_from_texts("g", "When did the bridge open?", doc, "The bridge opened in 1932.")
    bad = item_from_texts("b", "When did the bridge open?", doc,
                          "The bridge opened in 1871 after Governor Smithson paid 45 million dollars.")
    g, b = judge.judge([good, bad])
    assert g.labels.adherence_probability > b.labels.adherence_probability
    assert "1871" in b.labels.sentence_support_information[0].explanation


def test_invalid_items_get_a_status_and_others_still_go_through(judge, items):
    no_docs = EvalItem(id="nodoc", question="q", documents=[], response_sentences=[Sentence("a", "Hi.")])
    no_resp = EvalItem(id="noresp", question="q", documents=[[Sentence("0a", "Text.")]], response_sentences=[])
    out = judge.judge([no_docs, items[0], no_resp])
    assert [r.id for r in out] == ["nodoc", items[0].id, "noresp"]
    assert [r.status for r in out] == [JudgeStatus.INVALID_INPUT, JudgeStatus.OK, JudgeStatus.INVALID_INPUT]
    assert "document" in out[0].error and "response" in out[2].error
    assert out[0].labels is None


def test_cancel_and_progress(items):
    judge = LocalJudge(chunk_size=2)
    cancel = threading.Event()
    seen = []

    def progress(done, total):
        seen.append((done, total))
        cancel.set()  # cancel after the first chunk

    out = judge.judge(items[:5], progress=progress, cancel=cancel)
    assert [r.id for r in out] == [it.id for it in items[:5]]
    assert [r.status for r in out[:2]] == [JudgeStatus.OK] * 2
    assert all(r.status is JudgeStatus.CANCELLED for r in out[2:])
    assert seen[0] == (2, 5)


def test_model_round_trip_and_feature_check(tmp_path):
    model = LocalModel.load()
    path = model.save(tmp_path / "m")
    assert LocalModel.load(path).to_dict() == model.to_dict()
    data = json.loads(path.read_text())
    data["heads"]["support"]["features"][0] = "something_else"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="other features"):
        LocalModel.load(path)
    with pytest.raises(FileNotFoundError):
        LocalModel.load(tmp_path / "absent.json")
    older = json.loads(path.read_text())
    del older["heads"]["row_support"]  # a local:2.2.0-format model: no row-support head
    path.write_text(json.dumps(older))
    with pytest.raises(ValueError, match="lacks head.*row_support.*retrain"):
        LocalModel.load(path)


def test_head_rejects_wrong_width():
    head = LocalModel.load().support
    with pytest.raises(ValueError, match="features"):
        head.predict(np.zeros((1, 2)))


def test_support_head_reads_evidence_and_adherence_blends_in_the_lexical_baseline():
    model = LocalModel.load()
    # the support head sees what the documents contain, not the sentence's place or length
    assert model.support.features == SUPPORT_FEATURES
    assert not {"position", "log_n_response", "log_tokens", "q_cos"} & set(model.support.features)
    # P(grounded): the row-support logit and the lexical novelty at equal standardised weight
    assert model.adherence.features == ("row_support_logit", "resp_novel_content_frac")
    coef = model.adherence.coef
    assert coef[0] > 0 and coef[1] == pytest.approx(-coef[0])
    resp = np.zeros((2, len(RESP_FEATURES)))
    p_sup = np.array([0.9, 0.8])
    novel = resp.copy()
    novel[:, RESP_FEATURES.index("resp_novel_content_frac")] = 0.6
    assert model.p_grounded(novel, p_sup) < model.p_grounded(resp, p_sup)
    assert model.p_grounded(resp, np.array([0.9, 0.2])) < model.p_grounded(resp, p_sup)


def test_the_model_says_how_far_to_trust_it():
    model = LocalModel.load()
    note = model.quality_note()
    assert note and note.startswith(f"local:{model.version}") and "AUROC" in note and "LLM judge" in note
    quality = model.metadata["held_out_quality"]
    assert set(quality["per_subset"]) == {"covidqa", "delucionqa", "emanual", "expertqa", "hagrid", "hotpotqa",
                                          "msmarco"}
    assert dataclasses.replace(model, metadata={}).quality_note() is None


def test_a_calibration_fitted_on_another_model_version_is_refused():
    """Calibrations shift the heads' intercepts, so one fitted on other heads is refused, with the way out."""
    fitted = {"relevance_rate_shift": 0.0, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
              "adherence_logit_shift": 0.0, "support_threshold": 0.5}
    with pytest.raises(ValueError, match=r"fitted on local:0\.9\.0.*rag-eval calibrate"):
        LocalJudge(calibration={"name": "old", "base_version": "0.9.0", "fitted": fitted})
    same = LocalJudge(calibration={"name": "same", "base_version": LocalModel.load().version, "fitted": fitted})
    assert same.name.endswith("+same")


def test_lexical_evidence_features_flag_what_no_document_sentence_contains():
    """Issue 29: content words, numbers, named-entity-like tokens and dates of a response
    sentence that no document sentence contains join the support head's features."""
    from harness.judge_training import row_novelty
    from rag_eval.judges import features as F

    assert F.dates("Founded in Sept. 1998, renamed in the 1990s; 3.1998 is no year") == {"1998", "1990", "sep"}
    assert F.names_and_capitals("Paris is in France. The Eiffel tower")[1] == {"paris", "france", "eiffel"}
    docs = [["The tower was built in 1889 in Paris.", "It is made of iron."]]
    resp = ["The tower was built in 1889 in Paris.", "Gustave Eiffel sold it to Rome in March 1925."]
    v = np.eye(4, dtype=np.float32)
    f = F.row_features("When was the tower built?", docs, resp, v[0], v[:2], v[2:4] * 0 + v[:2])
    col = {n: i for i, n in enumerate(F.RESP_FEATURES)}
    copied, invented = f.resp[0], f.resp[1]
    assert copied[col["best_sentence_recall"]] == 1.0 and copied[col["novel_content_frac"]] == 0.0
    assert copied[col["novel_evidence"]] == 0.0 and copied[col["dates_missing"]] == 0.0
    assert invented[col["dates_missing"]] == 2.0  # 1925 and March
    assert invented[col["capitals_missing_frac"]] == 1.0  # Gustave, Eiffel, Rome, March: none in the documents
    assert invented[col["novel_evidence"]] == 1.0 and invented[col["novel_content_frac"]] > 0.8
    # the row-level baseline: the share of the response's content words found in no document
    assert 0.4 < copied[col["resp_novel_content_frac"]] == invented[col["resp_novel_content_frac"]] < 0.8
    from rag_eval.judges.features import RowFeatures

    assert isinstance(f, RowFeatures) and row_novelty(f) == pytest.approx(copied[col["resp_novel_content_frac"]])


def _copies(items: list[EvalItem], n: int) -> list[EvalItem]:
    """``n`` copies of every row under new ids (enough rows to fill several batches)."""
    return [dataclasses.replace(it, id=f"{it.id}~{k}") for k in range(n) for it in items]


def test_worker_processes_give_every_row_the_labels_this_process_gives(items, results):
    """``workers=2``: the first full batch is judged here while a worker process starts,
    later batches are split between the two. Every row gets exactly the labels and scores
    of the one-process judge, in input order."""
    together = {it.id: _scored(it, r) for it, r in zip(items, results)}
    rows = _copies(items, 7)  # 98 rows: batches of 32, 32, 32, 2
    judge = build_judge("local", workers=2)
    judge.chunk_size = 32
    try:
        out = judge.judge(rows)
        assert judge._pool is not None  # the workers took part
    finally:
        judge.close()
    assert [r.id for r in out] == [it.id for it in rows]
    assert all(r.status is JudgeStatus.OK for r in out)
    assert [_scored(it, r) for it, r in zip(rows, out)] == [together[it.id.split("~")[0]] for it in rows]


def test_a_dead_worker_loses_no_row(items, results):
    """A worker process that dies (killed here) fails the pool: its rows, and every later
    batch, are judged in this process, with the same labels."""
    import os
    import signal

    together = {it.id: _scored(it, r) for it, r in zip(items, results)}
    rows = _copies(items, 5)
    judge = build_judge("local", workers=2)
    judge.chunk_size = 32
    try:
        judge.judge(rows[:32])  # starts the worker
        for future in [judge._pool.submit(int, 0)]:
            future.result(timeout=120)  # it is up
        for pid in list(judge._pool._processes):
            os.kill(pid, signal.SIGKILL)
        out = judge.judge(rows)
        assert judge._pool is None  # closed after the failure; the rest ran here
    finally:
        judge.close()
    assert [r.status for r in out] == [JudgeStatus.OK] * len(rows)
    assert [_scored(it, r) for it, r in zip(rows, out)] == [together[it.id.split("~")[0]] for it in rows]


def test_workers_need_the_judges_own_encoder_and_the_factory():
    from rag_eval.judges.encoder import JudgeEncoder

    assert build_judge("local", workers=3).workers == 3
    assert build_judge("local").workers == 1
    assert LocalJudge(embedder=JudgeEncoder(cache_size=8), workers=3, worker_judge=LocalJudge).workers == 1
    with pytest.raises(ValueError, match="workers"):
        LocalJudge(workers=0)
    with pytest.raises(ValueError, match="build_judge"):
        LocalJudge(workers=2)  # a worker process would not know how to build this judge
