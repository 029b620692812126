from __future__ import annotations

import pytest

from rag_eval.llm.config import LLMConfig
from rag_eval.llm.pricing import cost_usd, dry_run_estimate, price_for


def test_from_settings_reads_environment_then_overrides(monkeypatch):
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "llama3.1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("RAG_EVAL_LLM_CONCURRENCY", "4")
    cfg = LLMConfig.from_settings(rpm=30, model=None)
    assert (cfg.model, cfg.base_url, cfg.concurrency, cfg.rpm) == ("llama3.1", "http://localhost:11434/v1", 4, 30)
    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", "http://vllm:8000/v1")
    assert LLMConfig.from_settings().base_url == "http://vllm:8000/v1"  # ours wins over OPENAI_BASE_URL
    assert LLMConfig.from_settings(model="m2").model == "m2"


def test_bad_settings_name_the_setting(monkeypatch):
    monkeypatch.setenv("RAG_EVAL_LLM_CONCURRENCY", "many")
    with pytest.raises(ValueError, match="RAG_EVAL_LLM_CONCURRENCY"):
        LLMConfig.from_settings()
    monkeypatch.delenv("RAG_EVAL_LLM_CONCURRENCY")
    with pytest.raises(ValueError, match="unknown LLM setting"):
        LLMConfig.from_settings(api_key="sk-123")


@pytest.mark.parametrize("kw", [{"concurrency": 0}, {"model": ""}, {"rpm": 0}, {"max_retries": -1}, {"timeout_s": 0}])
def test_invalid_config_raises_value_error(kw):
    with pytest.raises(ValueError):
        LLMConfig(**kw)


def test_key_resolved_at_call_time(monkeypatch):
    cfg = LLMConfig(api_key_env="SOME_KEY")
    assert not cfg.has_key()
    monkeypatch.setenv("SOME_KEY", "sk-abcdef")
    assert cfg.has_key() and cfg.api_key() == "sk-abcdef"
    assert "sk-abcdef" not in repr(cfg) and "sk-abcdef" not in str(cfg.to_dict())


def test_default_cache_dir_is_under_data_dir(rag_eval_home):
    assert LLMConfig().resolved_cache_dir() == rag_eval_home / "cache" / "llm"


@pytest.mark.parametrize(
    ("model", "expected"),
    [("gpt-4o-mini", 0.15), ("gpt-4o-mini-2024-07-18", 0.15), ("openai/gpt-4o", 2.5), ("gpt-4o", 2.5), ("llama3.1:8b", None)],
)
def test_price_lookup(model, expected):
    price = price_for(model)
    assert (price.input_per_m if price else None) == expected


def test_price_override_and_cost():
    price = price_for("my-local", {"my-local": {"input": 1, "output": 3}})
    assert cost_usd({"prompt_tokens": 2_000_000, "completion_tokens": 1_000_000}, price) == pytest.approx(5.0)
    assert cost_usd({"prompt_tokens": 5}, None) is None


def test_dry_run_estimate_counts_samples():
    batch = [[{"role": "user", "content": "x" * 400}]] * 3
    est = dry_run_estimate(batch, "gpt-4o-mini", expected_completion_tokens=100, samples=2)
    assert est.requests == 6 and est.prompt_tokens == (100 + 4) * 6 and est.completion_tokens == 600
    assert est.cost_usd == pytest.approx((624 * 0.15 + 600 * 0.6) / 1e6)


def test_passing_the_key_instead_of_its_variable_name_is_refused_without_echo():
    with pytest.raises(ValueError) as info:
        LLMConfig(api_key_env="sk-proj-abc123-secret")
    assert "sk-proj-abc123-secret" not in str(info.value) and "NAME" in str(info.value)


def test_credentials_in_the_url_are_not_recorded():
    cfg = LLMConfig(base_url="https://user:pa55word@proxy.example:8443/v1?key=abc")
    assert cfg.endpoint() == "https://proxy.example:8443/v1"
    assert "pa55word" not in str(cfg.to_dict()) and "abc" not in cfg.to_dict()["base_url"]
