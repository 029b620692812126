"""Redaction at the boundary: a key quoted back by the provider never leaves the client."""

from __future__ import annotations

import json

import pytest

from rag_eval.config import configured_secrets, forget_session_key, register_session_key, setting
from rag_eval.llm import errors
from rag_eval.llm.client import LLMClient
from rag_eval.llm.config import LLMConfig
from rag_eval.llm.redaction import redact_text, redact_value
from tests.echo_server import ECHO_KEY, MODES, echo_handler, echo_reply


@pytest.mark.parametrize("text, expected", [
    (f"Authorization: Bearer {ECHO_KEY}", "Authorization: Bearer ***"),
    (f"raw {ECHO_KEY}!", "raw ***!"),
    ("bearer abcdefgh12345 at the gate", "bearer *** at the gate"),  # any bearer-looking echo
    ("Basic dXNlcjpwYXNzd29yZA==", "Basic ***"),
    ("no secret here", "no secret here"),
])
def test_redact_text(text, expected):
    assert redact_text(text, [ECHO_KEY]) == expected


def test_escaped_forms_and_nested_values_are_redacted():
    escaped = "".join(f"\\u{ord(c):04x}" for c in ECHO_KEY)
    assert ECHO_KEY not in json.loads(redact_text(json.dumps({"a": escaped}).replace("\\\\", "\\"), [ECHO_KEY]))["a"]
    value = {"choices": [{"message": {"tool_calls": [{"arguments": json.dumps({"k": ECHO_KEY})}]}}], ECHO_KEY: 1}
    assert ECHO_KEY not in json.dumps(redact_value(value, [ECHO_KEY]))


def test_configured_secrets_sweeps_secret_named_settings(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-abcdef123456")
    monkeypatch.setenv("SHORT_KEY", "1")  # not a secret: too short
    monkeypatch.setenv("PLAIN_SETTING", "value-abcdef123456")
    found = configured_secrets()
    assert "tok-abcdef123456" in found and "1" not in found and "value-abcdef123456" not in found


def test_session_keys_live_in_memory_only(monkeypatch):
    name = register_session_key("visitor-key-not-real-42")
    try:
        assert setting(name) == "visitor-key-not-real-42"
        assert "visitor-key-not-real-42" in configured_secrets()
    finally:
        forget_session_key(name)
    assert setting(name) is None


@pytest.mark.parametrize("mode", MODES)
def test_client_never_returns_the_key(mode, openai_server, monkeypatch, tmp_path, fast_backoff):
    monkeypatch.setenv("OPENAI_API_KEY", ECHO_KEY)
    openai_server.set_handler(lambda body: echo_reply(body, f"Bearer {ECHO_KEY}", mode))
    client = LLMClient(LLMConfig(model="m", base_url=openai_server.base_url, max_retries=0, cache_dir=tmp_path / "c"))
    try:
        completion = client.complete_sync([{"role": "user", "content": "hi"}])
        seen = json.dumps(completion.to_dict())
    except errors.LLMError as err:
        seen = str(err) + repr(err)
    assert openai_server.headers[-1]["authorization"] == f"Bearer {ECHO_KEY}"  # the key was sent to the server
    assert ECHO_KEY not in seen
    cached = "".join(p.read_text(errors="replace") for p in (tmp_path / "c").rglob("*") if p.is_file())
    assert ECHO_KEY not in cached


def test_echo_handler_cycles_through_every_mode(openai_server, monkeypatch, tmp_path, fast_backoff):
    monkeypatch.setenv("OPENAI_API_KEY", ECHO_KEY)
    openai_server.set_handler(echo_handler(openai_server))
    client = LLMClient(LLMConfig(model="m", base_url=openai_server.base_url, max_retries=0, use_cache=False))
    out = client.complete_many([[{"role": "user", "content": f"q{i}"}] for i in range(len(MODES))])
    assert len(out) == len(MODES) and any(isinstance(o, errors.LLMError) for o in out)
    assert ECHO_KEY not in repr(out)


def test_a_key_given_as_a_plugin_judges_option_is_never_stored(tmp_path, ragbench_rows):
    """A plugin kind may take its key as an option (``judge_options={"api_key": ...}``): the
    value is in no environment variable, yet the run record, the export and the printed
    configuration must not hold it."""
    from pydantic import BaseModel

    import rag_eval
    from rag_eval.judges.kinds import JUDGE_KINDS, JudgeKind
    from rag_eval.judges.lexical import LexicalJudge
    from rag_eval.runs.store import RunStore

    class KeyedOptions(BaseModel):
        api_key: str
        endpoint: str = "http://127.0.0.1:9/v1"

    class KeyedJudge(LexicalJudge):
        name = "keyed:1"

    literal = "fake.plugin-option-SECRET-0123456789"
    JUDGE_KINDS.register(JudgeKind("keyed", factory=lambda options: KeyedJudge(), options=KeyedOptions,
                                   calls_network=True, origin="test"))
    try:
        rows = [{k: r[k] for k in ("id", "question", "documents", "response")} for r in ragbench_rows[:2]]
        result = rag_eval.evaluate(rows, judge="keyed", judge_options={"api_key": literal}, progress=False)
        store = tmp_path / "runs.sqlite"
        run_id = result.save("keyed", store=store)
        stored = RunStore(store).get_run(run_id)
        assert stored["config"]["judge"]["kind"] == "keyed"
        assert literal not in json.dumps(stored) and literal not in result.to_pandas().to_json()
        assert literal in configured_secrets()  # every other redaction (logs, exports, pages) knows it too
        assert literal not in configured_secrets(sessions=False)  # not the server's secret: locks no dashboard
    finally:
        JUDGE_KINDS.unregister("keyed")
