from __future__ import annotations

import pytest

from rag_eval.judges.llm import LLMJudge
from rag_eval.judges.registry import make_judge
from rag_eval.llm.config import LLMConfig


def test_llm_from_settings_and_options(monkeypatch):
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "env-model")
    judge = make_judge("llm", base_url="http://127.0.0.1:9/v1", samples=3, consistency_check=True, prompt_id=None)
    assert isinstance(judge, LLMJudge) and judge.name == "llm:env-model"
    assert judge.samples == 3 and judge.consistency_check and judge.config.base_url == "http://127.0.0.1:9/v1"


def test_llm_from_config():
    judge = make_judge("llm", config=LLMConfig(model="m"))
    assert judge.name == "llm:m"
    with pytest.raises(ValueError, match="either config"):
        make_judge("llm", config=LLMConfig(model="m"), model="other")


def test_unknown_kind_lists_choices():
    with pytest.raises(ValueError, match="llm, local"):
        make_judge("oracle")
