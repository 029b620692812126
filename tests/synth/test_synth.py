"""Synthetic generation end to end: chunks ingested into an embedded Qdrant in tmp,
questions written by the local OpenAI-compatible server (real HTTP, scripted replies
chosen by question type), the project's LLM client, MiniLM for the near-duplicate filter."""

import json
import re

import pytest

from rag_eval.datasets.io import load_dataset, write_dataset
from rag_eval.datasets.schema import CANNOT_ANSWER, DatasetRow
from rag_eval.llm.config import LLMConfig
from rag_eval.synth import SynthOptions, make_answer_judge, synthesize_from_collection

DOCS = {
    "mars.md": "Mars is the fourth planet from the Sun. Its surface is red because of iron oxide. "
               "Mars has two small moons, Phobos and Deimos. A day on Mars lasts about 24.6 hours.",
    "venus.md": "Venus is the second planet from the Sun. Its thick atmosphere traps heat, so its surface "
                "is hotter than that of Mercury. Venus rotates very slowly and in the opposite direction.",
    "tv.txt": "To reset the television, hold the power button for ten seconds. The menu button opens settings. "
              "Picture mode can be set to Natural, Standard or Dynamic in the settings menu.",
}
GOLDEN_QUESTION = "How many moons does Mars have?"


@pytest.fixture
def collection(tmp_path, rag_eval_home):
    from rag_eval.rag.config import default_config
    from rag_eval.rag.ingest import ingest_paths
    from rag_eval.rag.store import open_qdrant

    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    config = default_config().with_changes(**{"chunking.size": 120, "chunking.overlap": 0})
    report = ingest_paths([folder], "planets", config, client=open_qdrant())
    assert report.chunks_added >= 6 and not report.errors
    return "planets"


def passages(request_json) -> dict[str, str]:
    user = request_json["messages"][-1]["content"]
    return dict(re.findall(r"\[(C\d)\][^\n]*\n([^\n]+)", user))


def first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".") + "."


def judge_reply(request_json) -> str:
    """The TRACe judge's answer for the answerability check: the reference answer is
    supported, except for the question about "the first passage" (a vague question
    whose answer the judge does not accept) and the tempting answer "Galileo." of the
    unanswerable question (so that question stays unanswerable)."""
    user = request_json["messages"][-1]["content"]
    doc_keys = re.findall(r"^(\d+[a-z]+): ", user, re.M)
    response_keys = re.findall(r"^([a-z]+): ", user, re.M)
    supported = "the first passage" not in user and "Galileo" not in user
    return json.dumps({
        "relevance_explanation": "", "all_relevant_sentence_keys": doc_keys[:1],
        "overall_supported_explanation": "", "overall_supported": supported,
        "sentence_support_information": [
            {"response_sentence_key": k, "explanation": "", "supporting_sentence_keys": doc_keys[:1] if supported else [],
             "fully_supported": supported} for k in response_keys],
        "all_utilized_sentence_keys": doc_keys[:1] if supported else [],
    })


def scripted(request_json):
    """Replies by question type: good JSON, prose around JSON, not JSON at all, and a
    chunk id that does not exist; judge prompts get :func:`judge_reply`."""
    if "annotator" in request_json["messages"][0]["content"]:
        return judge_reply(request_json)
    user = request_json["messages"][-1]["content"]
    given = passages(request_json)
    c1 = given["C1"]
    if "passage C1 answers with a fact" in user:  # simple: every simple task asks the same question
        return json.dumps({"question": "What is the red colour of Mars caused by?", "answer": first_sentence(c1),
                           "supporting_chunks": ["C1"], "difficulty": "easy", "negative_answer": "Copper."})
    if "needs facts from both" in user:  # multi_hop: not JSON at all
        return "Here is a great question about planets: what is far away?"
    if "compares something" in user:  # comparison: cites a chunk that was not given
        return json.dumps({"question": "Which is hotter?", "answer": "Venus.", "supporting_chunks": ["C1", "C3"],
                           "negative_answer": "Mars."})
    if "C2 is on a similar topic" in user:  # distracting: JSON wrapped in prose and a code fence
        body = json.dumps({"question": "What does the first passage say?", "answer": first_sentence(c1),
                           "supporting_chunks": ["C1"], "negative_answer": "Nothing."})
        return f"Sure, here it is:\n```json\n{body}\n```"
    if "does not answer" in user:
        return json.dumps({"question": "Who named the planet?", "answer": CANNOT_ANSWER, "supporting_chunks": [],
                           "negative_answer": "Galileo."})
    raise AssertionError(f"unexpected prompt: {user[:200]}")


def test_synth_end_to_end(collection, openai_server, tmp_path):
    openai_server.set_handler(scripted)
    llm = LLMConfig(model="test-model", base_url=openai_server.base_url, max_retries=0)
    golden = [DatasetRow(id="g1", question=GOLDEN_QUESTION, reference_answers=["Two: Phobos and Deimos."])]
    options = SynthOptions(n=6, seed=7, negatives=True, few_shot=tuple(golden))
    judge = make_answer_judge("auto", llm)
    assert judge.name.startswith("llm:")  # an LLM is configured, so the LLM judge checks answerability
    result = synthesize_from_collection(collection, options, llm, judge=judge)

    # every task is accounted for: kept or dropped with a reason
    assert len(result.rows) + len(result.dropped) == 6
    generation_requests = [r for r in openai_server.requests if "annotator" not in r["messages"][0]["content"]]
    judge_requests = [r for r in openai_server.requests if "annotator" in r["messages"][0]["content"]]
    assert len(generation_requests) == 6 and len(judge_requests) == 3  # simple, distracting, unanswerable (inverted)
    assert any("Galileo" in r["messages"][-1]["content"] for r in judge_requests)
    kept_types = sorted(r.metadata.query_type for r in result.rows)
    assert kept_types == ["simple", "unanswerable"]
    by_stage = {(d.query_type, d.stage, d.status) for d in result.dropped}
    assert by_stage == {("multi_hop", "generation", "parse_error"), ("comparison", "check", "ok"),
                        ("simple", "near_duplicate", "ok"), ("distracting", "answerability", "repaired")}
    reasons = {d.query_type: d.reason for d in result.dropped}
    assert "not a JSON object" in reasons["multi_hop"]
    assert "C3" in reasons["comparison"] and "not given" in reasons["comparison"]
    assert "near-duplicate of syn-" in reasons["simple"]
    assert "do not support the answer" in reasons["distracting"] and "llm:test-model" in reasons["distracting"]
    bad = next(d for d in result.dropped if d.query_type == "multi_hop")
    assert bad.raw.startswith("Here is a great question") and len(bad.chunk_ids) == 2

    for row in result.rows:
        assert row.provenance.value == "synthetic" and row.negative_answers
        assert row.extras["collection"] == "planets" and row.metadata.question_source == "synth:test-model"
    simple = next(r for r in result.rows if r.metadata.query_type == "simple")
    assert len(simple.gold_pointers) == 1 and simple.gold_pointers[0].chunk_id
    assert simple.reference_answers[0] in simple.gold_contexts[0]
    assert simple.gold_pointers[0].source.endswith(".md") or simple.gold_pointers[0].source.endswith(".txt")
    assert simple.metadata.answerability == "checked by llm:test-model"
    unanswerable = next(r for r in result.rows if r.metadata.query_type == "unanswerable")
    assert unanswerable.reference_answers == [CANNOT_ANSWER] and unanswerable.gold_contexts == []
    assert unanswerable.metadata.answerability == "checked by llm:test-model"

    # the prompts: JSON mode, few-shot examples from the golden set, passages labelled
    assert all(r["response_format"] == {"type": "json_object"} for r in generation_requests)
    assert all(GOLDEN_QUESTION in r["messages"][-1]["content"] for r in generation_requests)
    distractor_prompt = next(r for r in generation_requests if "C2 is on a similar topic" in r["messages"][-1]["content"])
    shown = passages(distractor_prompt)
    assert shown["C1"] != shown["C2"]
    assert result.summary()["tokens"]["total_tokens"] > 0

    # the rows validate and round-trip; a second run is served from the LLM cache
    path = write_dataset(result.rows, tmp_path / "synth.jsonl")
    assert load_dataset(path).issues == []
    sent = len(openai_server.requests)
    again = synthesize_from_collection(collection, SynthOptions(n=6, seed=7, negatives=True, few_shot=tuple(golden)), llm)
    assert again.cached == 6 and len(openai_server.requests) == sent
    assert {r.id for r in again.rows} >= {r.id for r in result.rows}  # no judge this time: the distracting row stays


def test_provider_errors_and_truncation_become_statuses(collection, openai_server):
    from harness.openai_server import Reply

    openai_server.enqueue(Reply.error(500, "server on fire"), Reply.truncated('{"question": "Wh'))
    llm = LLMConfig(model="test-model", base_url=openai_server.base_url, max_retries=0, concurrency=1, use_cache=False)
    options = SynthOptions(n=2, types=("simple",))
    result = synthesize_from_collection(collection, options, llm, dedupe=False)
    assert (options.collection, options.model) == (None, None)  # the caller's options are not changed
    assert result.rows == []
    assert sorted(d.status for d in result.dropped) == ["provider_error", "truncated"]
    assert all(d.stage == "generation" and d.reason for d in result.dropped)


def test_missing_collection_is_a_clear_error(rag_eval_home):
    from rag_eval.rag.store import CollectionNotFound

    with pytest.raises(CollectionNotFound, match="no collection named 'nope'"):
        synthesize_from_collection("nope", SynthOptions(n=1), LLMConfig(model="m", base_url="http://127.0.0.1:9/v1"))
