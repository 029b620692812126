"""LLM-as-judge answer matching over the local server."""

from __future__ import annotations

import json

import pytest

from harness.openai_server import Reply
from rag_eval.judges.answer_match import AnswerMatchJudge, MatchItem, parse_match
from rag_eval.llm.config import LLMConfig
from rag_eval.schema import JudgeStatus

ITEM = MatchItem("m1", "Capital of France?", "Paris", "It is Paris.")


def matcher(server, **kw) -> AnswerMatchJudge:
    kw.setdefault("max_retries", 1)
    return AnswerMatchJudge(LLMConfig(model="test-model", base_url=server.base_url, **kw))


def test_match_ok(openai_server):
    openai_server.set_handler(lambda body: json.dumps({"reasoning": "same city", "is_matching": True}))
    [result] = matcher(openai_server).match([ITEM])
    assert result.status is JudgeStatus.OK and result.is_matching is True and result.reasoning == "same city"
    assert result.extra["reasks"] == 0
    user = openai_server.requests[0]["messages"][1]["content"]
    assert '"Paris"' in user and '"It is Paris."' in user
    assert result.tokens["total"] > 0 and result.to_dict()["status"] == "ok"


def test_fenced_and_repaired(openai_server):
    openai_server.enqueue("Matching: yes", "```json\n{\"is_matching\": false, \"reasoning\": \"differs\"}\n```")
    [result] = matcher(openai_server).match([ITEM])
    assert result.status is JudgeStatus.REPAIRED and result.is_matching is False
    assert openai_server.request_count == 2
    assert result.extra["calls"] == 2 and result.extra["reasks"] == 1  # the re-ask is counted, not only spent


def test_parse_error_refusal_truncation_and_provider_error(openai_server, fast_backoff):
    replies = {
        "a": "no idea",
        "b": Reply.refused("no"),
        "c": Reply.truncated('{"reasoning": "long'),
        "d": Reply.error(500),
    }
    openai_server.set_handler(lambda body: replies[json.loads(body["messages"][1]["content"].split("\n")[2])])
    items = [MatchItem(k, k, "ref", "pred") for k in replies]
    results = matcher(openai_server).match(items)
    assert [r.id for r in results] == list(replies)
    assert [r.status for r in results] == [
        JudgeStatus.PARSE_ERROR, JudgeStatus.REFUSED, JudgeStatus.TRUNCATED, JudgeStatus.PROVIDER_ERROR
    ]
    assert all(r.error and r.is_matching is None for r in results)


@pytest.mark.parametrize(
    ("text", "ok"),
    [('{"is_matching": true}', True), ('{"is_matching": "maybe"}', False), ("yes", False)],
)
def test_parse_match(text, ok):
    assert (not isinstance(parse_match(text), str)) is ok
