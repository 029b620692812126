"""The one factory builds a judge from a name and its kind's options (what ``make_judge``
once did with keywords)."""

from __future__ import annotations

import pytest

from rag_eval.judges.base import JudgeUsageError
from rag_eval.judges.factory import build_judge
from rag_eval.judges.llm import LLMJudge
from rag_eval.llm.config import LLMConfig


def test_llm_from_settings_and_options(monkeypatch):
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "env-model")
    judge = build_judge("llm", options={"base_url": "http://127.0.0.1:9/v1", "samples": 3, "consistency_check": True})
    assert isinstance(judge, LLMJudge) and judge.name == "llm:env-model"
    assert judge.samples == 3 and judge.consistency_check and judge.config.base_url == "http://127.0.0.1:9/v1"


def test_llm_from_config():
    assert build_judge("llm", llm=LLMConfig(model="m")).name == "llm:m"


def test_unknown_kind_and_unknown_option_list_the_choices():
    with pytest.raises(JudgeUsageError, match="llm, local"):
        build_judge("oracle")
    with pytest.raises(JudgeUsageError, match=r"rpm: not an option of this kind \(options: model, base_url"):
        build_judge("llm", options={"rpm": 60})
