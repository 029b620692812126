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


def _clear_llm_env(monkeypatch):
    for name in ("RAG_EVAL_LLM_MODEL", "RAG_EVAL_LLM_BASE_URL", "OPENAI_BASE_URL", "RAG_EVAL_LLM_API_KEY_ENV",
                 "RAG_EVAL_LLM_CONCURRENCY", "RAG_EVAL_LLM_RPM", "RAG_EVAL_LLM_PRICES", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_without_configuration_the_dashboard_is_offline(monkeypatch):
    from rag_eval.ui.settings import environment_settings

    _clear_llm_env(monkeypatch)
    assert environment_settings() == DEFAULTS


def test_the_environment_applies_in_the_dashboard(monkeypatch):
    """RAG_EVAL_LLM_MODEL / _CONCURRENCY / _RPM reach the LLM client the dashboard builds
    (the defaults are not passed as overrides), and a key plus a model configured in the
    environment (a Space's secrets and variables) start the dashboard on the LLM judge."""
    from rag_eval.ui.settings import environment_settings, llm_config

    _clear_llm_env(monkeypatch)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "space-model")
    monkeypatch.setenv("RAG_EVAL_LLM_CONCURRENCY", "9")
    monkeypatch.setenv("RAG_EVAL_LLM_RPM", "321")
    values = environment_settings()
    assert values["provider"] == "local"  # a model but no key and no endpoint: offline still
    llm = llm_config(values)
    assert (llm.model, llm.concurrency, llm.rpm) == ("space-model", 9, 321.0)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-123")
    values = environment_settings()
    assert values["provider"] == "openai"
    config = config_from_settings(values)
    assert (config.judge.kind, config.judge.model, config.judge.concurrency) == ("llm", "space-model", 9)


def test_the_batch_estimate_uses_the_runs_model_and_price_table(monkeypatch):
    import json

    from rag_eval.judges.factory import judge_spec
    from rag_eval.rag.config import default_config
    from rag_eval.runs.estimate import estimate_run
    from rag_eval.runs.sources import RowsSource
    from rag_eval.ui.settings import environment_settings, llm_config, llm_values_for

    def estimate_batch(rows, config, llm=None):
        return estimate_run(RowsSource(rows), judge_spec(config.judge, llm=llm), metrics=())

    _clear_llm_env(monkeypatch)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "priced-model")
    monkeypatch.setenv("RAG_EVAL_LLM_PRICES", json.dumps({"priced-model": {"input": 1000.0, "output": 1000.0}}))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-123")
    config = config_from_settings(environment_settings())
    monkeypatch.setattr("rag_eval.ui.settings.st.session_state", {}, raising=False)
    llm = llm_config(llm_values_for(config.judge))
    rows = [{"question": "What?", "documents": ["Context."], "response": "Answer."}] * 3
    estimate = estimate_batch(rows, config, llm)
    assert estimate.parts[0].model == "priced-model" and estimate.cost_usd and estimate.cost_usd > 0.001
    # a configuration without a model: the environment's model and prices still apply
    bare = default_config().with_changes(**{"judge.kind": "llm"})
    assert estimate_batch(rows[:1], bare).parts[0].model == "priced-model"
    assert estimate_batch(rows[:1], default_config()).requests == 0  # local judge, extractive generator: free


def test_any_installed_judge_kind_is_a_choice_and_only_an_endpoint_kind_gets_the_endpoint():
    """The provider no longer forces the LLM judge: a chosen kind is the judge; a kind on an
    OpenAI-compatible endpoint (llm, a plugin's) gets the session's model, endpoint and key variable."""
    from rag_eval.ui.settings import judge_kinds, judge_label

    assert {"llm", "local", "lexical"} <= set(judge_kinds()) and "llm" not in judge_kinds(offline_only=True)
    assert "endpoint" in judge_label("llm") and "runs on this machine" in judge_label("lexical")
    endpoint = {**DEFAULTS, "model": "m", "base_url": "http://127.0.0.1:9/v1", "concurrency": 2}
    lexical = config_from_settings({**endpoint, "provider": "openai", "judge": "lexical"})
    assert (lexical.judge.kind, lexical.judge.model, lexical.judge.base_url) == ("lexical", None, None)
    llm = config_from_settings({**endpoint, "provider": "local", "judge": "llm"})
    assert (llm.judge.kind, llm.judge.model, llm.judge.base_url) == ("llm", "m", "http://127.0.0.1:9/v1")
    assert config_from_settings({**endpoint, "judge": "uninstalled"}).judge.kind == "local"


def test_a_language_setting_reaches_the_configuration_and_a_rows_own_wins():
    """Settings' language (issue 47: the pages override detection): the configuration's, the
    language of every row that names none; a code that is none is refused before it is saved."""
    from streamlit.testing.v1 import AppTest

    from rag_eval.runs.sources import RowsSource

    config = config_from_settings({**DEFAULTS, "language": "pt-BR"})
    assert config.language == "pt" and config_from_settings(dict(DEFAULTS)).language is None
    rows = [(1, {"question": "Qual é a capital?", "documents": ["Brasília é a capital."], "response": "Brasília."}),
            (2, {"question": "首都は?", "documents": ["東京は首都です。"], "response": "東京です。", "language": "ja"})]
    items = list(RowsSource(rows, language=config.language).items())
    assert [item.metadata.get("language") for item in items] == ["pt", "ja"]

    def page():
        import streamlit as st

        from rag_eval.ui import settings

        try:
            settings.save_settings({"language": st.session_state.get("code", "")})
            st.write("saved", settings.current_config().language)
        except ValueError as error:
            st.write(str(error))

    app = AppTest.from_function(page)
    app.session_state["code"] = "not a language!"
    app.run()
    assert "ISO 639-1 code" in " ".join(m.value for m in app.markdown)
    app.session_state["code"] = "ja"
    app.run()
    assert "saved ja" in " ".join(m.value for m in app.markdown)
