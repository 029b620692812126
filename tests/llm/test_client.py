"""The client over real HTTP against the local OpenAI-compatible server."""

from __future__ import annotations

import logging
import threading

import pytest

from harness.openai_server import Reply
from rag_eval.llm import errors
from rag_eval.llm.client import Completion, LLMClient
from rag_eval.llm.config import LLMConfig

MSG = [{"role": "user", "content": "Say OK."}]
SECRET = "fake.test-SECRET-0123456789abcdef"


# Timeouts: the client's limit leaves a normal reply seconds of margin on a loaded 2-core
# machine, and a "slow" reply waits far beyond it (the server ends the wait when it stops).
CLIENT_TIMEOUT_S = 2.0
NEVER_S = 60.0

def client_for(server, **kw) -> LLMClient:
    kw.setdefault("max_retries", 3)
    kw.setdefault("timeout_s", 5.0)
    return LLMClient(LLMConfig(model="test-model", base_url=server.base_url, **kw))


def test_completion_has_text_usage_and_cost(openai_server):
    openai_server.enqueue(Reply(content="hello", usage={"prompt_tokens": 1000, "completion_tokens": 500}))
    client = client_for(openai_server, prices={"test-model": {"input": 1.0, "output": 2.0}})
    out = client.complete_sync(MSG, temperature=0.3, max_tokens=77)
    assert out.text == "hello" and out.finish_reason == "stop" and not out.cached
    assert out.usage == {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}
    assert out.cost_usd == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6)
    assert out.latency_s > 0
    sent = openai_server.requests[0]
    assert sent["model"] == "test-model" and sent["temperature"] == 0.3 and sent["max_tokens"] == 77
    assert "response_format" not in sent


def test_429_with_retry_after_is_retried_and_honoured(openai_server, fast_backoff):
    openai_server.enqueue(Reply.error(429, "slow down", retry_after=2), "fine")
    client = client_for(openai_server)
    out = client.complete_sync(MSG)
    assert out.text == "fine" and out.retries == 1
    assert fast_backoff[0][1] == 2.0 and fast_backoff[0][2] == 2.0  # waited exactly Retry-After
    assert client.stats.rate_limited == 1 and client.stats.requests == 2


def test_500_is_retried_then_succeeds(openai_server, fast_backoff):
    openai_server.enqueue(Reply.error(500), Reply.error(503), "fine")
    out = client_for(openai_server).complete_sync(MSG)
    assert out.text == "fine" and out.retries == 2


def test_persistent_500_raises_server_error_after_max_retries(openai_server, fast_backoff):
    openai_server.set_handler(lambda body: Reply.error(500, "boom"))
    client = client_for(openai_server, max_retries=2)
    with pytest.raises(errors.ServerError) as info:
        client.complete_sync(MSG)
    assert info.value.status_code == 500 and info.value.retries == 2
    assert openai_server.request_count == 3 and client.stats.failures == 1


def test_400_is_not_retried(openai_server, fast_backoff):
    openai_server.enqueue(Reply.error(404, "no such model"))
    with pytest.raises(errors.StatusError) as info:
        client_for(openai_server).complete_sync(MSG)
    assert info.value.status_code == 404 and not isinstance(info.value, errors.ServerError)
    assert openai_server.request_count == 1


def test_timeout_then_success(openai_server, fast_backoff):
    openai_server.enqueue(Reply.slow(NEVER_S), "fine")
    out = client_for(openai_server, timeout_s=CLIENT_TIMEOUT_S).complete_sync(MSG)
    assert out.text == "fine" and out.retries == 1


def test_timeout_exhausted_raises_timeout_error(openai_server, fast_backoff):
    openai_server.enqueue(Reply.slow(NEVER_S))
    with pytest.raises(errors.TimeoutError):
        client_for(openai_server, timeout_s=CLIENT_TIMEOUT_S, max_retries=0).complete_sync(MSG)


def test_dropped_connection_is_retried(openai_server, fast_backoff):
    openai_server.enqueue(Reply.dropped(), "fine")
    out = client_for(openai_server).complete_sync(MSG)
    assert out.text == "fine" and out.retries == 1


def test_dropped_connection_exhausted_raises_connection_error(openai_server, fast_backoff):
    openai_server.set_handler(lambda body: Reply.dropped())
    with pytest.raises(errors.ConnectionError) as info:
        client_for(openai_server, max_retries=1).complete_sync(MSG)
    assert not isinstance(info.value, errors.TimeoutError)


def test_cache_hit_makes_no_request(openai_server):
    openai_server.set_handler(lambda body: "answer")
    client = client_for(openai_server)
    first = client.complete_sync(MSG)
    again = LLMClient(client.config).complete_sync(MSG)  # a new client, same disk cache
    assert openai_server.request_count == 1
    assert again.cached and again.text == first.text and again.usage == first.usage
    client.complete_sync(MSG, cache_namespace="sample1")  # a different namespace is a new call
    client.complete_sync(MSG, temperature=0.7)  # so are different parameters
    client.complete_sync(MSG, use_cache=False)
    assert openai_server.request_count == 4


def test_cache_can_be_disabled(openai_server):
    client = client_for(openai_server, use_cache=False)
    client.complete_sync(MSG)
    client.complete_sync(MSG)
    assert openai_server.request_count == 2


def test_json_mode_is_requested_and_falls_back_when_rejected(openai_server):
    def handler(body):
        if "response_format" in body:
            return Reply.error(400, "response_format is not supported by this model")
        return '{"ok": true}'

    openai_server.set_handler(handler)
    client = client_for(openai_server)
    out = client.complete_sync(MSG, json_mode=True)
    assert out.text == '{"ok": true}' and not out.json_mode
    assert openai_server.requests[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in openai_server.requests[1]
    client.complete_sync(MSG + [{"role": "user", "content": "again"}], json_mode=True)
    assert "response_format" not in openai_server.requests[2]  # learnt: not asked again


def test_refusal_and_truncation_are_reported(openai_server):
    openai_server.enqueue(Reply.refused("I won't."), Reply.truncated('{"a": '))
    client = client_for(openai_server, use_cache=False)
    refused = client.complete_sync(MSG)
    truncated = client.complete_sync(MSG)
    assert refused.refusal == "I won't." and refused.text == ""
    assert truncated.finish_reason == "length" and truncated.text == '{"a": '


def test_api_key_is_sent_but_never_in_errors_or_logs(openai_server, monkeypatch, caplog, fast_backoff):
    monkeypatch.setenv("MY_KEY", SECRET)
    openai_server.enqueue(Reply.error(500, f"bad key {SECRET}"), Reply.error(401, f"invalid key {SECRET}"))
    client = client_for(openai_server, api_key_env="MY_KEY")
    caplog.set_level(logging.DEBUG)
    with pytest.raises(errors.StatusError) as info:
        client.complete_sync(MSG)
    assert openai_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in str(info.value) and "***" in str(info.value)
    assert SECRET not in caplog.text
    assert SECRET not in repr(client.config) and SECRET not in str(client.config.to_dict())
    assert client.config.has_key()


def test_hosted_provider_without_key_is_a_config_error(monkeypatch):
    client = LLMClient(LLMConfig(model="gpt-4o-mini"))
    with pytest.raises(errors.ConfigError, match="OPENAI_API_KEY"):
        client.complete_sync(MSG)


def test_complete_many_keeps_order_and_reports_failures(openai_server, fast_backoff):
    def handler(body):
        text = body["messages"][-1]["content"]
        return Reply.error(400, "bad") if text == "q3" else f"echo {text}"

    openai_server.set_handler(handler)
    batch = [[{"role": "user", "content": f"q{i}"}] for i in range(10)]
    seen = []
    out = client_for(openai_server, concurrency=4).complete_many(batch, progress=lambda d, t: seen.append((d, t)))
    assert [o.text for o in out if isinstance(o, Completion)] == [f"echo q{i}" for i in range(10) if i != 3]
    assert isinstance(out[3], errors.StatusError)
    assert seen[-1] == (10, 10) and len(seen) == 10


def test_complete_many_cancelled_items_are_marked(openai_server):
    cancel = threading.Event()
    cancel.set()
    out = client_for(openai_server).complete_many([MSG, MSG], cancel=cancel)
    assert all(isinstance(o, errors.CancelledRequest) for o in out)
    assert openai_server.request_count == 0


def test_concurrency_is_bounded(openai_server):
    import time as _t

    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def handler(body):
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        _t.sleep(0.05)
        with lock:
            active["now"] -= 1
        return "ok"

    openai_server.set_handler(handler)
    batch = [[{"role": "user", "content": f"q{i}"}] for i in range(12)]
    client_for(openai_server, concurrency=3).complete_many(batch)
    assert 1 < active["max"] <= 3


def test_reasoning_model_parameters_are_adapted(openai_server):
    def handler(body):
        if "max_tokens" in body:
            return Reply.error(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.")
        if "temperature" in body:
            return Reply.error(400, "Unsupported value: 'temperature' does not support 0.")
        return "fine"

    openai_server.set_handler(handler)
    client = client_for(openai_server)
    out = client.complete_sync(MSG, max_tokens=50)
    assert out.text == "fine" and out.retries == 0
    assert openai_server.requests[-1]["max_completion_tokens"] == 50
    client.complete_sync(MSG + [{"role": "user", "content": "more"}])
    assert openai_server.request_count == 4  # learnt once: the next call goes straight through
