"""``rag-eval judge`` end to end against the local OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.fake_answers import answer_text, prompt_keys
from harness.openai_server import Reply
from rag_eval.cli import cli

SECRET = "fake.cli-SECRET-abcdef0123456789"


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


GOOD = [
    {"id": "a1", "question": "What is X?", "documents": ["X is a cat. It purrs."], "response": "X is a cat.", "extra": 1},
    {"id": "a2", "question": "What is Y?", "documents": ["Y is a dog.", "Dogs bark."], "response": "Y is a dog. It barks."},
]


def run(args, **kw):
    return CliRunner().invoke(cli, ["judge", *args], catch_exceptions=False, **kw)


def test_judges_a_file_in_order_and_summarises(tmp_path, openai_server):
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "in.jsonl", GOOD)
    out = tmp_path / "out.jsonl"
    result = run([str(src), "--model", "test-model", "--base-url", openai_server.base_url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == ["a1", "a2"]
    assert all(r["status"] == "ok" and r["mode"] == "clean" for r in rows)
    for field in ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
                  "unsupported_response_sentence_keys", "overall_supported", "relevance_explanation",
                  "context_relevance", "context_utilization", "completeness", "adherence", "adherence_score",
                  "tokens", "latency_s", "cost_usd"):
        assert field in rows[0]
    assert "| ok | 2 |" in result.output and "coverage: 2/2" in result.output
    # an identical second run is answered from the cache: zero requests
    again = run([str(src), "--model", "test-model", "--base-url", openai_server.base_url, "--out", str(out)])
    assert again.exit_code == 0 and openai_server.request_count == 2
    assert [r["context_relevance"] for r in read_jsonl(out)] == [r["context_relevance"] for r in rows]


def test_bad_rows_are_kept_with_their_reason_and_exit_code_is_1(tmp_path, openai_server):
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "in.jsonl", [GOOD[0], {"id": "b", "question": "q", "response": "r"}, "{broken", GOOD[1]])
    out = tmp_path / "out.jsonl"
    result = run([str(src), "--model", "test-model", "--base-url", openai_server.base_url, "--out", str(out)])
    assert result.exit_code == 1
    rows = read_jsonl(out)
    assert [r["status"] for r in rows] == ["ok", "invalid_input", "invalid_input", "ok"]
    assert "row 2, field 'documents'" in rows[1]["error"] and rows[1]["context_relevance"] is None
    assert "row 3" in rows[2]["error"]
    assert "| invalid_input | 2 |" in result.output and "coverage: 2/4" in result.output


def test_provider_failures_are_reported_not_lost(tmp_path, openai_server, fast_backoff):
    openai_server.set_handler(lambda body: Reply.error(500, "down") if "Y" in body["messages"][1]["content"]
                              else answer_text(body))
    out = tmp_path / "out.jsonl"
    result = run([str(write_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "test-model", "--base-url",
                  openai_server.base_url, "--max-retries", "1", "--out", str(out)])
    assert result.exit_code == 1
    assert [r["status"] for r in read_jsonl(out)] == ["ok", "provider_error"]
    assert "a2: provider_error" in result.output


def test_ragbench_rows_use_their_own_sentence_keys(tmp_path, openai_server, ragbench_rows):
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "rb.jsonl", ragbench_rows[:2])
    out = tmp_path / "out.jsonl"
    result = run([str(src), "--model", "test-model", "--base-url", openai_server.base_url, "--out", str(out),
                  "--mode", "ragbench"])
    assert result.exit_code == 0, result.output
    # Rows are judged concurrently, so find the request for row 0 by its question.
    first = next(r for r in openai_server.requests
                 if ragbench_rows[0]["question"] in next(m["content"] for m in r["messages"] if m["role"] == "user"))
    doc_keys, resp_keys = prompt_keys(first)
    assert doc_keys == [p[0] for doc in ragbench_rows[0]["documents_sentences"] for p in doc]
    assert resp_keys == [p[0] for p in ragbench_rows[0]["response_sentences"]]
    assert [r["id"] for r in read_jsonl(out)] == [str(r["id"]) for r in ragbench_rows[:2]]


def test_dry_run_estimates_and_sends_nothing(tmp_path, openai_server):
    src = write_jsonl(tmp_path / "in.jsonl", GOOD)
    result = run([str(src), "--model", "test-model", "--base-url", openai_server.base_url, "--dry-run",
                  "--price-in", "1", "--price-out", "2", "--samples", "3"])
    assert result.exit_code == 0, result.output
    assert "requests: 6" in result.output and "estimated cost: $" in result.output
    assert openai_server.request_count == 0


def test_no_key_for_a_hosted_provider_is_a_clean_error(tmp_path):
    result = run([str(write_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "gpt-4o-mini", "--out",
                  str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.output


def test_key_never_printed_or_written(tmp_path, openai_server, monkeypatch, fast_backoff):
    monkeypatch.setenv("JUDGE_KEY", SECRET)
    openai_server.set_handler(lambda body: Reply.error(401, f"key {SECRET} is invalid"))
    out = tmp_path / "out.jsonl"
    result = run([str(write_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "test-model", "--base-url",
                  openai_server.base_url, "--api-key-env", "JUDGE_KEY", "--out", str(out)])
    assert result.exit_code == 1
    assert openai_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in result.output and SECRET not in out.read_text(encoding="utf-8")
    assert all(r["status"] == "provider_error" for r in read_jsonl(out))


def test_samples_flag_gives_adherence_probability(tmp_path, openai_server):
    openai_server.set_handler(lambda body: answer_text(body))
    out = tmp_path / "out.jsonl"
    result = run([str(write_jsonl(tmp_path / "in.jsonl", GOOD[:1])), "--model", "test-model", "--base-url",
                  openai_server.base_url, "--samples", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    [row] = read_jsonl(out)
    extra = row["judge_extra"]  # what the judge reports beside its labels, as the store keeps it
    assert row["adherence_probability"] == 1.0 and extra["agreement_rate"] == 1.0 and extra["samples"] == 2
    assert openai_server.request_count == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl", "--out", "o.jsonl"], "missing.jsonl"),
        (["in.jsonl", "--price-in", "1"], "--price-out"),
        (["in.jsonl"], "--out"),
    ],
)
def test_user_errors(tmp_path, openai_server, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "in.jsonl", GOOD)
    result = CliRunner().invoke(cli, ["judge", *args, "--base-url", openai_server.base_url])
    assert result.exit_code != 0 and message in result.output


def test_local_judge_runs_offline(tmp_path, openai_server, ragbench_rows):
    pytest.importorskip("rag_eval.judges.local")
    from rag_eval.judges.local import LocalModel

    try:
        LocalModel.load()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    out = tmp_path / "out.jsonl"
    result = run([str(write_jsonl(tmp_path / "rb.jsonl", ragbench_rows[:2])), "--judge", "local", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    assert [r["status"] for r in rows] == ["ok", "ok"] and rows[0]["judge"].startswith("local:")
    assert rows[0]["context_relevance"] is not None and openai_server.request_count == 0
    assert "trust: local:" in result.output and "hallucination AUROC" in result.output


def test_lexical_reference_judge_labels_by_word_overlap(tmp_path, openai_server):
    """`--judge lexical`: RAGBench labels and TRACe scores like any judge, on this machine, no
    request; a sentence whose content words no document holds is unsupported; a row with no
    documents ends invalid_input with its reason; its option is validated before any row."""
    docs = ["The cat is black. It purrs loudly."]
    rows = [{"id": "a1", "question": "What colour is the cat?", "documents": docs, "response": "The cat is black."},
            {"id": "h", "question": "What colour is the cat?", "documents": docs,
             "response": "The cat is black. Zebras paint violet skyscrapers."},
            {"id": "none", "question": "q", "documents_sentences": [], "response": "r"}]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    result = run([str(src), "--judge", "lexical", "--out", str(out)])
    assert result.exit_code == 1, result.output  # the row without documents failed (and says why)
    got = {r["id"]: r for r in read_jsonl(out)}
    assert got["a1"]["status"] == "ok" and got["a1"]["judge"] == "lexical:2" and got["a1"]["adherence"] == 1.0
    assert got["a1"]["all_relevant_sentence_keys"] == ["0a"] and got["a1"]["all_utilized_sentence_keys"] == ["0a"]
    assert got["a1"]["context_relevance"] == 0.5 and got["a1"]["completeness"] == 1.0
    assert got["h"]["unsupported_response_sentence_keys"] == ["b"] and got["h"]["adherence"] == 0.0
    assert 0.0 < got["h"]["adherence_score"] < 1.0  # 1 - the row's share of novel content words
    assert got["none"]["status"] == "invalid_input" and got["none"]["error"]
    assert openai_server.request_count == 0
    bad = CliRunner().invoke(cli, ["judge", str(src), "--judge", "lexical", "--judge-option", "max_novel=2",
                                   "--out", str(out)])
    assert bad.exit_code != 0 and "max_novel" in bad.output


def test_the_llm_kinds_endpoint_options_are_its_flags(tmp_path, openai_server):
    """``--judge-option model=`` / ``base_url=`` reach the requests, as ``--model`` / ``--base-url`` do (they
    were overridden by the flags' defaults); both name one setting, so differing values are refused."""
    openai_server.set_handler(lambda body: answer_text(body))
    src = write_jsonl(tmp_path / "in.jsonl", GOOD[:1])
    out = tmp_path / "out.jsonl"
    result = run([str(src), "--judge-option", "model=option-model", "--judge-option",
                  f"base_url={openai_server.base_url}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["model"] for r in openai_server.requests] == ["option-model"]
    both = CliRunner().invoke(cli, ["judge", str(src), "--model", "a", "--judge-option", "model=b", "--out", str(out)])
    assert both.exit_code == 2 and "--judge-option model= and --model differ" in both.output


def test_language_names_the_language_of_rows_that_name_none(tmp_path):
    """`--language` (issue 47): every row without a `language` column is read in it, a row's own
    wins, and a code that is none is a usage error before any row."""
    rows = [{"id": "digits", "question": "1945", "documents": ["1945年。"], "response": "1945"},
            {"id": "own", "question": "首都は?", "documents": ["東京は首都です。"], "response": "東京です。",
             "language": "ja"}]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    result = run([str(src), "--judge", "lexical", "--language", "zh-Hans", "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert {r["id"]: r["language"] for r in read_jsonl(out)} == {"digits": "zh", "own": "ja"}
    bad = CliRunner().invoke(cli, ["judge", str(src), "--judge", "lexical", "--language", "not a code",
                                   "--out", str(out)])
    assert bad.exit_code == 2 and "not a language code" in bad.output
