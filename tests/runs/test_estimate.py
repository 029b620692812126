"""One estimator (rag_eval.runs.estimate) for ``rag-eval judge --dry-run``, Batch and the API,
checked against what the real local OpenAI-compatible server then receives; judge kinds
declare their cost, options and network use, so a plugin's kind needs no project edit."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from harness.fake_answers import answer, prompt_keys
from harness.openai_server import _tokens
from rag_eval.cli import cli
from rag_eval.judges.prompts import ANSWER_MATCH_SYSTEM_PROMPT

RUBRIC = "tests/data/rubrics/politeness.yaml"
# Replies of a model's usual size: one or two sentences wherever the answer explains itself.
EXPLANATION = ("The first document sentence states the same setting and the same steps, so this response "
               "sentence is fully supported by it.")
REASON = "The response is courteous throughout, answers the question directly and never blames the user for it."


def _reply(body: dict) -> str:
    system = body["messages"][0]["content"]
    if system == ANSWER_MATCH_SYSTEM_PROMPT:
        return json.dumps({"is_matching": True, "reasoning": REASON + " " + REASON})
    if system.startswith("You are a careful evaluator"):
        return f"4\n{REASON}"
    labels = answer(body)
    doc_keys, _ = prompt_keys(body)
    labels.update(relevance_explanation=EXPLANATION + " " + EXPLANATION, overall_supported_explanation=EXPLANATION,
                  all_relevant_sentence_keys=doc_keys[:3], all_utilized_sentence_keys=doc_keys[:2])
    for entry in labels["sentence_support_information"]:
        entry["explanation"] = EXPLANATION
    return json.dumps(labels)


@pytest.fixture
def rows_file(tmp_path, ragbench_rows):
    rows = [{k: r[k] for k in ("id", "question", "documents", "response")} for r in ragbench_rows[:3]]
    rows[0]["reference_answer"] = rows[1]["reference_answer"] = "A reference answer to compare the response with."
    rows.insert(2, {"id": "no-question", "documents": ["a"], "response": "b"})  # reported, never sent
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _numbers(output: str) -> dict[str, int]:
    requests = re.search(r"requests: (\d+) \(([^)]*)\)", output)
    tokens = re.search(r"prompt tokens: ~([\d,]+); completion tokens: ~([\d,]+)", output)
    assert requests and tokens, output
    parts = {purpose: int(n) for n, purpose in re.findall(r"(\d+) ([a-z ]+?)(?:,|$)", requests.group(2))}
    return {"requests": int(requests.group(1)), "prompt": int(tokens.group(1).replace(",", "")),
            "completion": int(tokens.group(2).replace(",", "")), **parts}


def test_the_dry_run_counts_what_the_server_then_receives(rows_file, tmp_path, openai_server, monkeypatch):
    """3 usable rows of 4, samples 2, 2 references, one rubric: the estimate says 6 judge
    calls, 2 answer matches and 3 rubric scores, and the server receives exactly those;
    its tokens (counted as the server counts usage, 4 characters a token) within 10%."""
    from rag_eval.metrics.registry import METRICS

    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)  # the rubric's endpoint
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")
    completions: list[int] = []

    def reply(body):
        text = _reply(body)
        completions.append(_tokens(text))
        return text

    openai_server.set_handler(reply)
    common = [str(rows_file), "--judge", "llm", "--samples", "2", "--metrics", RUBRIC]
    try:
        dry = CliRunner().invoke(cli, ["judge", *common, "--dry-run"], catch_exceptions=False)
        assert dry.exit_code == 0, dry.output
        assert openai_server.request_count == 0
        assert "3 of 4 row(s) usable" in dry.output and "calls a network" in dry.output
        estimate = _numbers(dry.output)
        assert (estimate["judge"], estimate["answer match"], estimate["politeness"]) == (6, 2, 3)

        ran = CliRunner().invoke(cli, ["judge", *common, "--out", str(tmp_path / "out.jsonl")], catch_exceptions=False)
        assert ran.exit_code == 1, ran.output  # the row without a question fails the run; it was never sent
    finally:
        METRICS.unregister("politeness")
    sent = openai_server.requests
    assert len(sent) == estimate["requests"] == 11
    prompt = sum(_tokens("".join(m.get("content") or "" for m in body["messages"])) for body in sent)
    assert estimate["prompt"] == pytest.approx(prompt, rel=0.10)
    assert estimate["completion"] == pytest.approx(sum(completions), rel=0.10)


def test_with_every_answer_re_asked_the_server_receives_the_estimates_most(rows_file, tmp_path, openai_server,
                                                                          monkeypatch):
    """Issue 46, item 8: an endpoint whose first answers do not parse. The judge and the
    answer match each ask again once (the rubric never re-asks: its failure is the metric's),
    and the estimate's "up to" figure is what the server then receives: 6 + 6 judge, 2 + 2
    answer match, 3 rubric = 19, where a run whose answers all parse sends its 11."""
    from rag_eval.metrics.registry import METRICS

    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")

    def reply(body):
        first = len(body["messages"]) <= 2 and not body["messages"][0]["content"].startswith("You are a careful evaluator")
        return "Let me think about this one first." if first else _reply(body)  # no JSON: re-asked

    openai_server.set_handler(reply)
    common = [str(rows_file), "--judge", "llm", "--samples", "2", "--metrics", RUBRIC]
    try:
        dry = CliRunner().invoke(cli, ["judge", *common, "--dry-run"], catch_exceptions=False)
        assert dry.exit_code == 0, dry.output
        assert "requests: 11 (6 judge, 2 answer match, 3 politeness) to test-model; up to 19 if every answer " \
               "needs its re-ask (6 judge, 2 answer match)" in dry.output
        ran = CliRunner().invoke(cli, ["judge", *common, "--out", str(tmp_path / "out.jsonl")], catch_exceptions=False)
        assert ran.exit_code == 1, ran.output
    finally:
        METRICS.unregister("politeness")
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in rows] == ["repaired", "repaired", "invalid_input", "repaired"]
    assert openai_server.request_count == 19


def test_the_page_the_api_and_the_command_line_share_the_estimate(rows_file):
    """Batch (``batch_rows.estimate``) and ``rag_eval.estimate`` give the command line's figures."""
    import rag_eval
    from rag_eval.datasets.io import iter_raw
    from rag_eval.rag.config import default_config
    from rag_eval.ui import batch_rows

    api = rag_eval.estimate(str(rows_file), judge="llm", judge_options={"model": "gpt-4o-mini"}, metrics=[])
    pairs = list(iter_raw(rows_file))
    dataset = batch_rows.LoadedDataset("rows.jsonl", pairs, "fingerprint")
    config = default_config().with_changes(**{"judge.kind": "llm", "judge.model": "gpt-4o-mini"})
    page = batch_rows.estimate(dataset, batch_rows.JUDGE, len(pairs), config)
    assert (api.rows, api.usable, api.requests) == (page.rows, page.usable, page.requests) == (4, 3, 5)
    assert api.prompt_tokens == page.prompt_tokens and api.cost_usd == page.cost_usd
    assert api.max_requests == page.max_requests == 10  # 3 judge and 2 answer match, each re-asked once


def test_a_plugin_kind_that_calls_a_network_states_its_cost(rows_file):
    """A kind declared with ``calls_network`` and an ``estimate`` gets an honest dry-run
    line, with no edit to the project (as a plugin package registers it)."""
    from pydantic import BaseModel

    from rag_eval.judges.kinds import JUDGE_KINDS, JudgeKind
    from rag_eval.llm.pricing import dry_run_estimate

    class Options(BaseModel):
        model: str = "gpt-4o-mini"

    def estimate(rows, spec):
        chats = [[{"role": "user", "content": r.item.question}] for r in rows]
        return [dry_run_estimate(chats, spec.options.get("model", "gpt-4o-mini") if spec.options else "gpt-4o-mini",
                                 100, purpose="judge")]

    JUDGE_KINDS.register(JudgeKind("fakellm", factory=lambda options: None, options=Options, calls_network=True,
                                   estimate=estimate, help="a throwaway network judge"))
    try:
        dry = CliRunner().invoke(cli, ["judge", str(rows_file), "--judge", "fakellm", "--dry-run", "--metrics", "none"])
        listed = CliRunner().invoke(cli, ["judges", "list"])
    finally:
        JUDGE_KINDS.unregister("fakellm")
    assert dry.exit_code == 0, dry.output
    assert "the fakellm judge calls a network" in dry.output and "no cost" not in dry.output
    assert "requests: 3 (3 judge) to gpt-4o-mini" in dry.output and "estimated cost: $0.0002" in dry.output
    lines = {line.split()[0]: line for line in listed.output.splitlines() if line.strip()}
    assert "calls a network" in lines["fakellm"] and "options: model" in lines["fakellm"]
    assert "options: model, base_url, api_key_env" in lines["llm"]  # the built-ins' options, like a plugin's
    assert "options: model_path, calibration, workers" in lines["local"]


def test_a_bad_judge_option_is_named_with_the_allowed_ones_before_any_row(rows_file):
    import rag_eval
    from rag_eval.judges.base import JudgeUsageError

    with pytest.raises(JudgeUsageError, match=r"temperature.*options: model, base_url, api_key_env"):
        rag_eval.evaluate(str(rows_file), judge="llm", judge_options={"temperature": 0}, progress=False)


def test_a_rag_runs_estimate_counts_answers_judge_calls_and_answer_matches(demo_collection, demo_questions,
                                                                           openai_server, monkeypatch):
    """Questions through the RAG system with an LLM generator and the LLM judge: one answer,
    one judge call and (with a reference) one answer match per usable question; the server
    receives exactly the estimated requests. (Issue 41: the demo run was estimated at 20 calls
    and made 37.) Tokens are compared for the judged-rows path above: here the chunks the
    retriever will return are not known before the run."""
    from rag_eval.judges.factory import build_judge, judge_spec
    from rag_eval.llm.config import LLMConfig
    from rag_eval.rag.config import default_config
    from rag_eval.runs.engine import evaluate
    from rag_eval.runs.estimate import estimate_run
    from rag_eval.runs.sinks import MemorySink
    from rag_eval.runs.sources import RagSource

    monkeypatch.setenv("RAG_EVAL_ALLOWED_BASE_URLS", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")

    def reply(body):
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "Label the response now" in user or body["messages"][0]["content"] == ANSWER_MATCH_SYSTEM_PROMPT:
            return _reply(body)
        return "Open the Picture settings and choose Expert Settings. Adjust the value there."

    openai_server.set_handler(reply)
    rows = [*demo_questions[:4], {"id": "blank", "question": "  "}]
    assert sum(1 for r in rows[:4] if r.get("reference_answer")) == 3
    config = default_config("estimate").with_changes(**{
        "retrieval.k": 3, "generator.kind": "openai", "generator.model": "test-model",
        "generator.base_url": openai_server.base_url, "judge.kind": "llm"})
    llm = LLMConfig.from_settings(model="test-model", base_url=openai_server.base_url)
    estimate = estimate_run(RagSource(rows, config, demo_collection), judge_spec(config.judge, llm=llm), metrics=())
    assert openai_server.request_count == 0
    assert (estimate.rows, estimate.usable) == (5, 4)
    assert {p.purpose: p.requests for p in estimate.parts} == {"answers": 4, "judge": 4, "answer match": 3}

    summary = evaluate(RagSource(rows, config, demo_collection), build_judge(config.judge, llm=llm), MemorySink(),
                       config=config, metrics=())
    assert summary.counts.get("ok") == 4
    assert openai_server.request_count == estimate.requests == 11


def test_a_network_kind_without_an_estimate_is_unknown_never_free(rows_file):
    from rag_eval.judges.kinds import JUDGE_KINDS, JudgeKind

    JUDGE_KINDS.register(JudgeKind("mystery", factory=lambda options: None, calls_network=True))
    try:
        dry = CliRunner().invoke(cli, ["judge", str(rows_file), "--judge", "mystery", "--dry-run", "--metrics", "none"])
    finally:
        JUDGE_KINDS.unregister("mystery")
    assert dry.exit_code == 0, dry.output
    assert "requests: unknown (the mystery judge kind declares no estimate)" in dry.output
    assert "estimated cost: unknown" in dry.output and "none" not in dry.output
