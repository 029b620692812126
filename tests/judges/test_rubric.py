"""Rubric metrics (G-Eval) against the real local OpenAI-compatible server: the
probability-weighted score where the endpoint gives log-probabilities, the parsed one where
it refuses them, every item a value or a reason under fault injection, samples averaged with
their spread, and the key in no result."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.openai_server import Reply
from rag_eval.judges.rubric import (
    RubricError,
    RubricScorer,
    load_rubric,
    parse_score,
    rubric_messages,
    weighted_score,
)
from rag_eval.llm.config import LLMConfig

RUBRIC = Path(__file__).resolve().parents[1] / "data" / "rubrics" / "politeness.yaml"
ITEM = {"id": "r1", "question": "How do I reset the TV?", "response": "Hold the power button for five seconds.",
        "documents": ["Reset: hold power 5 s."], "reference": None}
KEY = "test-key-not-real-rubric-9d9d"


def _scorer(server, samples: int = 1, **kw) -> RubricScorer:
    kw.setdefault("max_retries", 1)
    kw.setdefault("timeout_s", 5.0)
    config = LLMConfig(model="test-model", base_url=server.base_url, use_cache=False, **kw)
    return RubricScorer(load_rubric(RUBRIC), config, samples=samples)


def test_a_rubric_file_is_checked_field_by_field(tmp_path):
    rubric = load_rubric(RUBRIC)
    assert rubric.name == "politeness" and rubric.score_range == (1, 5) and len(rubric.steps) == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Bad Name\ncriteria: ''\nscore_range: [5, 1]\n", encoding="utf-8")
    with pytest.raises(RubricError) as err:
        load_rubric(bad)
    assert str(err.value).startswith("bad.yaml: ") and "field 'name'" in str(err.value)
    assert "field 'criteria'" in str(err.value)


def test_the_prompt_holds_the_criteria_steps_and_only_the_inputs_asked_for():
    system, user = rubric_messages(load_rubric(RUBRIC), ITEM)
    assert "courteous" in system["content"] and "1. Read the question" in system["content"]
    assert "Hold the power button" in user["content"] and "Reset: hold power" not in user["content"]
    assert "from 1 to 5" in user["content"]


def test_geval_weighs_the_score_tokens():
    probs = {"4": math.log(0.6), "5": math.log(0.3), "Four": math.log(0.1)}
    assert weighted_score(probs, (1, 5)) == pytest.approx((4 * 0.6 + 5 * 0.3) / 0.9)
    assert weighted_score({"The": 0.0}, (1, 5)) is None  # no score token: not trusted
    assert parse_score("Score: 4\nPolite and clear.", (1, 5)) == (4, "Polite and clear.")
    assert parse_score("9\nway off", (1, 5))[0] is None


def test_logprobs_give_the_weighted_score_and_a_reason(openai_server):
    openai_server.set_handler(lambda body: Reply(content="4\nCourteous and direct.",
                                                 first_token_logprobs={"4": math.log(0.7), "3": math.log(0.3)}))
    [score] = _scorer(openai_server).score_many([ITEM])
    assert score.value == pytest.approx(3.7) and score.method == "logprobs" and score.reason == "Courteous and direct."
    assert openai_server.requests[0]["logprobs"] is True and openai_server.requests[0]["top_logprobs"] == 10


def test_an_endpoint_without_logprobs_gives_the_parsed_score(openai_server):
    openai_server.set_handler(lambda body: Reply(content="5\nVery polite.", reject_logprobs=True))
    [score] = _scorer(openai_server).score_many([ITEM])
    assert score.value == 5 and score.method == "parsed" and score.error is None
    assert "logprobs" in openai_server.requests[0] and "logprobs" not in openai_server.requests[-1]


def test_every_item_ends_with_a_value_or_a_reason_under_faults(openai_server, fast_backoff):
    openai_server.enqueue("3\nFine.", "no idea", Reply.error(500), Reply.error(500), Reply.refused())
    scores = _scorer(openai_server, concurrency=1).score_many([{**ITEM, "id": str(i)} for i in range(4)])
    assert [s.value for s in scores] == [3, None, None, None]
    assert "no score from 1 to 5" in scores[1].error
    assert scores[2].error and scores[3].error and "refused" in scores[3].error


def test_samples_are_averaged_with_their_spread(openai_server):
    answers = iter(["2\na", "4\nb", "3\nc"])
    openai_server.set_handler(lambda body: next(answers))
    [score] = _scorer(openai_server, samples=3, concurrency=1).score_many([ITEM])
    assert score.value == pytest.approx(3.0) and sorted(score.samples) == [2, 3, 4]
    assert score.spread == pytest.approx((2 / 3) ** 0.5)
    assert openai_server.request_count == 3 and all(r["temperature"] >= 0.7 for r in openai_server.requests)


def test_the_key_is_in_no_result(openai_server, monkeypatch):
    monkeypatch.setenv("RUBRIC_TEST_KEY", KEY)
    openai_server.set_handler(lambda body: f"4\nThe header was Bearer {KEY}.")
    [score] = _scorer(openai_server, api_key_env="RUBRIC_TEST_KEY").score_many([ITEM])
    assert score.value == 4 and KEY not in repr(score)
