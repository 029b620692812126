"""``rag_eval.testing.assert_trace``: the pytest helper, with the real local judge and
with an LLM judge against the local OpenAI-compatible server."""

from __future__ import annotations

import pytest

from harness.fake_answers import answer_text
from rag_eval.llm.config import LLMConfig
from rag_eval.testing import assert_trace, check_trace

QUESTION = "How long do refunds take?"
DOCS = ["Refunds are issued within 14 days of the return arriving. Shipping is free over 50 euros.",
        "Our stores open at 9 am."]
ANSWER = "Refunds are issued within 14 days of the return arriving."


def test_local_judge_by_default_passes_and_returns_the_check():
    pytest.importorskip("rag_eval.judges.local")
    check = assert_trace(QUESTION, DOCS, ANSWER, context_relevance=0.0, average=0.0)
    assert check.passed and check.result.judge.startswith("local:")
    assert check.values["fully_supported_sentences"] + check.values["partially_supported_sentences"] \
        + check.values["unsupported_sentences"] == 1


def test_failure_message_shows_values_and_the_support_map():
    pytest.importorskip("rag_eval.judges.local")
    with pytest.raises(AssertionError) as info:
        assert_trace(QUESTION, DOCS, ANSWER, {"context_relevance": 1.01}, nonsense=0.5)
    text = str(info.value)
    assert "context_relevance = " in text and "< 1.01" in text and "unknown metric 'nonsense'" in text
    assert "Response sentences:" in text and "[a]" in text and "Document sentences" in text and "[0a]" in text


def test_a_given_llm_judge(openai_server):
    from rag_eval.judges.llm import LLMJudge

    judge = LLMJudge(LLMConfig(model="test-model", base_url=openai_server.base_url, max_retries=1, timeout_s=5.0,
                                 use_cache=False))
    openai_server.set_handler(lambda body: answer_text(body))
    check = assert_trace(QUESTION, DOCS, ANSWER, judge=judge, adherence=1.0)
    assert check.result.judge.startswith("llm:") and check.values["overall_supported"] is True
    openai_server.set_handler(lambda body: answer_text(body, unsupported=("a",)))
    failed = check_trace(QUESTION, DOCS, ANSWER, judge=judge, adherence=1.0, mode="clean")
    assert not failed.passed and "adherence = 0.000 < 1" in failed.message()
    assert "✗ unsupported" in failed.message()


def test_bad_arguments():
    with pytest.raises(TypeError):
        check_trace(QUESTION, "one string", ANSWER)
