"""A configuration file does not move the environment's key (issue 41, item 1).

The environment configures the owner's key, model and endpoint (the real local
OpenAI-compatible server); a configuration file, as a pull request could bring to CI, names
another endpoint for the generator and the judge: a second real server that answers validly,
so a leak would leave no trace in the output. ``rag-eval run --config`` and
``rag_eval.api.ask(config=FILE)`` reach it without the key (the run still completes: a server
that needs no key works), with a warning naming the file, the field and the variable; with
``--trust-config-endpoints`` the user sends the key there on purpose.
"""

from __future__ import annotations

import logging
import secrets

import pytest
from click.testing import CliRunner

from harness.openai_server import start_server
from rag_eval.cli import cli
from rag_eval.rag.config import default_config
from tests.security.test_locked_egress_browser import _owner_reply

KEY = f"owner-llm-{secrets.token_hex(8)}"  # made up per session
QUESTION = "How do I reset the TV?"


@pytest.fixture
def owner(monkeypatch, openai_server):
    """The owner's environment: key, model and endpoint."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    openai_server.set_handler(_owner_reply)
    return openai_server


@pytest.fixture
def other():
    """The endpoint the file names: answers validly, records every request's headers."""
    server = start_server()
    server.set_handler(_owner_reply)
    yield server
    server.stop()


def _config_naming(tmp_path, url):
    path = tmp_path / "from-a-pull-request.yaml"
    default_config("pr").with_changes(**{
        "generator.kind": "openai", "generator.model": "test-model", "generator.base_url": url,
        "judge.kind": "llm", "judge.model": "test-model", "judge.base_url": url}).to_yaml(path)
    return path


def _heard_the_key(server) -> bool:
    return any(KEY in value for headers in server.headers for value in headers.values())


def test_cli_run_with_a_config_naming_another_endpoint_sends_it_no_key(owner, other, tmp_path, demo_home, caplog):
    dataset = tmp_path / "qs.jsonl"
    dataset.write_text('{"id": "a", "question": "How do I reset the TV?"}\n'
                       '{"id": "b", "question": "What is the warranty?"}\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="rag_eval"):
        result = CliRunner().invoke(cli, ["run", str(dataset), "--config", str(_config_naming(tmp_path, other.base_url)),
                                          "--collection", "demo", "--min-coverage", "0"])
    assert result.exit_code in (0, 1), result.output
    assert len(other.requests) >= 4  # generated and judged there (a server needing no key works)
    assert not _heard_the_key(other) and not _heard_the_key(owner)
    assert all(h.get("authorization") != f"Bearer {KEY}" for h in other.headers)
    assert "judge.base_url names the endpoint" in caplog.text and "OPENAI_API_KEY is not sent there" in caplog.text
    assert KEY not in caplog.text and KEY not in result.output


def test_python_api_with_a_config_file_naming_another_endpoint_sends_it_no_key(owner, other, tmp_path, demo_home):
    import rag_eval

    result = rag_eval.ask(QUESTION, _config_naming(tmp_path, other.base_url))
    assert result.generation.status == "ok" and result.judge_result is not None
    assert other.requests and not _heard_the_key(other)
    # an endpoint named in the call itself is the caller's choice: the key goes with it
    from rag_eval.llm.config import LLMConfig

    assert LLMConfig.from_settings(base_url="http://127.0.0.1:9/v1").api_key() == KEY
    assert LLMConfig.from_settings(base_url=other.base_url + "/").api_key() is None  # the file's, however spelled

def test_trust_config_endpoints_sends_the_key_on_purpose(owner, other, tmp_path, demo_home):
    config = str(_config_naming(tmp_path, other.base_url))
    refused = CliRunner().invoke(cli, ["ask", QUESTION, "--config", config])
    assert refused.exit_code == 0, refused.output
    assert other.headers and not _heard_the_key(other)
    other.reset()
    trusted = CliRunner().invoke(cli, ["ask", "What is the warranty?", "--config", config, "--trust-config-endpoints"])
    assert trusted.exit_code == 0, trusted.output
    assert other.headers and all(h.get("authorization") == f"Bearer {KEY}" for h in other.headers)
