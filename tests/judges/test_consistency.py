"""Consistent labels from both judges (supporting keys utilized, utilized keys relevant,
no relevance 0 beside a supported response), on RAGBench rows and real documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.fake_answers import prompt_keys
from rag_eval.judges.consistency import make_consistent
from rag_eval.judges.llm import LLMJudge
from rag_eval.judges.local import LocalJudge
from rag_eval.llm.config import LLMConfig
from rag_eval.metrics.trace import score_item
from rag_eval.rag.ingest import document_units
from rag_eval.rag.loaders import load_file
from rag_eval.schema import EvalItem, JudgeStatus, Labels, SentenceSupport
from rag_eval.text.sentences import item_from_row, item_from_texts


def inconsistencies(item: EvalItem, labels: Labels) -> list[str]:
    """What breaks make_consistent's rules, or relevance 0 beside a supported response, in
    words (empty when the labels are consistent): the tests' check of both judges' labels."""
    _, repairs = make_consistent(item, labels)
    problems = []
    if repairs.get("utilized_added"):
        problems.append(f"supporting keys not utilized: {', '.join(repairs['utilized_added'])}")
    if repairs.get("relevant_added"):
        problems.append(f"utilized keys not relevant: {', '.join(repairs['relevant_added'])}")
    supported = any(
        s.fully_supported is True for s in labels.sentence_support_information)
    if supported and not labels.all_relevant_sentence_keys and item.document_keys:
        problems.append("relevance 0 with a supported response")
    return problems


DOCS = Path(__file__).parent.parent / "data" / "docs"


def _item():
    return item_from_texts("q", "What is X?", ["X is a cat. It purrs.", "Dogs bark."], "X is a cat. It purrs.")


def test_supporting_keys_become_utilized_and_utilized_relevant():
    labels = Labels(
        all_relevant_sentence_keys=[], all_utilized_sentence_keys=["1a"],
        sentence_support_information=[
            SentenceSupport("a", ["0a"], True), SentenceSupport("b", ["0b", "9z"], True),
        ],
        unsupported_response_sentence_keys=[], overall_supported=True,
    )
    fixed, repairs = make_consistent(_item(), labels)
    assert fixed.all_utilized_sentence_keys == ["0a", "0b", "1a"]  # the unknown key 9z is not added
    assert fixed.all_relevant_sentence_keys == ["0a", "0b", "1a"]
    assert repairs == {"utilized_added": ["0a", "0b"], "relevant_added": ["1a", "0a", "0b"]}
    assert inconsistencies(_item(), labels) and not inconsistencies(_item(), fixed)
    assert make_consistent(_item(), fixed) == (fixed, {})


def test_unsupported_sentences_add_nothing():
    labels = Labels(sentence_support_information=[SentenceSupport("a", ["0a"], False)],
                    unsupported_response_sentence_keys=["a"], overall_supported=False)
    fixed, repairs = make_consistent(_item(), labels)
    assert fixed.all_utilized_sentence_keys == [] and repairs == {}


def test_vacuous_completeness_is_flagged_in_every_mode():
    labels = Labels(overall_supported=True)
    for mode in ("ragbench", "clean"):
        scores = score_item(_item(), labels, mode)
        assert scores.completeness == 1.0 and scores.diagnostics["completeness_vacuous"] is True


@pytest.fixture(scope="module")
def local_judge() -> LocalJudge:
    return LocalJudge()


def _assert_consistent(item, result):
    assert result.status.usable, result.error
    assert inconsistencies(item, result.labels) == []
    supported = any(s.fully_supported for s in result.labels.sentence_support_information)
    if supported and item.document_keys:
        assert score_item(item, result.labels, "clean").context_relevance > 0


def test_local_judge_labels_are_consistent_on_ragbench_rows(local_judge, ragbench_rows):
    items = [item_from_row(r) for r in ragbench_rows]
    for item, result in zip(items, local_judge.judge(items)):
        _assert_consistent(item, result)


def test_local_judge_labels_are_consistent_on_real_documents(local_judge):
    items = []
    for name, question in [("venv.html", "How do I create a virtual environment?"),
                           ("controlflow.html", "What does the else clause of a loop do?"),
                           ("shared-mime-info-spec.pdf", "Where is the MIME database stored?")]:
        doc = next(load_file(DOCS / name))
        units = document_units(doc)[:40]
        end = units[-1][1]
        answer = " ".join(doc.text[a:b] for a, b in units[5:7])
        items.append(item_from_texts(name, question, [doc.text[:end]], answer, units=[units]))
    for item, result in zip(items, local_judge.judge(items)):
        _assert_consistent(item, result)


def test_llm_judge_repairs_inconsistent_labels_and_records_it(openai_server, ragbench_rows):
    def reply(body):  # supported sentences cite keys that are neither utilized nor relevant
        doc_keys, resp_keys = prompt_keys(body)
        return json.dumps({
            "relevance_explanation": "", "all_relevant_sentence_keys": [], "all_utilized_sentence_keys": [],
            "overall_supported_explanation": "", "overall_supported": True,
            "sentence_support_information": [
                {"response_sentence_key": k, "explanation": "", "supporting_sentence_keys": doc_keys[:2],
                 "fully_supported": True} for k in resp_keys],
        })

    openai_server.set_handler(reply)
    judge = LLMJudge(LLMConfig(model="test-model", base_url=openai_server.base_url, max_retries=1, timeout_s=5.0))
    items = [item_from_row(r) for r in ragbench_rows[:5]]
    for item, result in zip(items, judge.judge(items)):
        assert result.status in (JudgeStatus.OK, JudgeStatus.REPAIRED)
        _assert_consistent(item, result)
        assert result.extra["label_repairs"]["utilized_added"] == item.document_keys[:2]


def test_local_judge_labels_are_consistent_by_construction(ragbench_rows, monkeypatch):
    """The local judge builds consistent labels itself: with the final guard switched
    off, make_consistent has nothing to add to any fixture row."""
    import rag_eval.judges.local as local

    monkeypatch.setattr(local, "make_consistent", lambda item, labels: (labels, {}))
    items = [item_from_row(r) for r in ragbench_rows]
    for item, result in zip(items, LocalJudge().judge(items)):
        assert result.status.usable, result.error
        assert make_consistent(item, result.labels)[1] == {}, item.id
