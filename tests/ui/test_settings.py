"""The session's settings as a RagConfig; key presence never exposes the value."""

from __future__ import annotations

from rag_eval.ui.settings import DEFAULTS, config_from_settings, key_present


def test_local_provider_is_the_offline_default():
    config = config_from_settings(dict(DEFAULTS))
    assert config.judge.kind == "local" and config.generator.kind == "extractive"


def test_llm_provider_switches_judge_and_optionally_generator():
    values = {**DEFAULTS, "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "concurrency": 2}
    config = config_from_settings(values)
    assert (config.judge.kind, config.judge.model, config.judge.concurrency) == ("llm", "m", 2)
    assert config.generator.kind == "extractive"
    assert config_from_settings({**values, "use_llm_generator": True}).generator.kind == "openai"


def test_key_present(monkeypatch):
    monkeypatch.delenv("MY_KEY", raising=False)
    assert key_present("MY_KEY") is False
    monkeypatch.setenv("MY_KEY", "sk-secret-value")
    assert key_present("MY_KEY") is True


def test_a_pasted_key_is_refused_without_echo():
    import pytest
    from streamlit.testing.v1 import AppTest

    def app():
        from rag_eval.ui import settings, state

        state.guarded(lambda: settings.save_settings({"api_key_env": "sk-proj-abc123def456"}))

    at = AppTest.from_function(app).run()
    assert at.error and "sk-proj-abc123def456" not in at.error[0].value
    with pytest.raises(ValueError):
        from rag_eval.ui.settings import save_settings

        save_settings({"api_key_env": "not a name"})
