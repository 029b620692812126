"""Judges by name, for callers that pass LLM settings as keywords:
``make_judge("llm", model=..., ...)``, ``make_judge("local")``, ``make_judge("local:NAME")``.

A thin spelling of :func:`rag_eval.judges.factory.build_judge` (the one factory): the
keywords become :class:`~rag_eval.judges.factory.JudgeSpec` fields.
"""

from __future__ import annotations

from typing import Any

from rag_eval.judges.base import Judge
from rag_eval.judges.factory import JudgeSpec, build_judge, kinds
from rag_eval.judges.kinds import JUDGE_KINDS

LLM_SPEC_FIELDS = ("model", "base_url", "api_key_env", "prompt_id", "concurrency", "samples", "consistency_check")


def make_judge(kind: str, **options: Any) -> Judge:
    """A judge of ``kind`` ("llm" | "local" | "local:NAME" | a plugin's kind). LLM options:
    ``config`` (an LLMConfig) or LLMConfig fields, plus samples, consistency_check,
    prompt_id. Local options: model_path, calibration. A plugin kind: its own options."""
    declared = JUDGE_KINDS.find(kind)
    if declared is None:
        raise ValueError(f"unknown judge {kind!r}; choose one of: {', '.join(kinds())}")
    if declared.from_spec is None:  # a plugin's kind: the keywords are its options
        return build_judge(kind, options=options or None)
    config = options.pop("config", None)
    spec_fields = {k: options.pop(k) for k in (*LLM_SPEC_FIELDS, "model_path", "calibration") if k in options}
    settings = sorted([*options, *(k for k in ("model", "base_url", "api_key_env", "concurrency") if k in spec_fields)])
    if config is not None and settings:
        raise ValueError(f"pass either config or LLM settings, not both (got {', '.join(settings)})")
    if options:  # other LLMConfig fields (rpm, timeout_s, ...): a config from the settings with them
        from rag_eval.llm.config import LLMConfig

        llm_settings = {k: spec_fields.pop(k) for k in ("model", "base_url", "api_key_env", "concurrency")
                        if k in spec_fields}
        config = LLMConfig.from_settings(**llm_settings, **options)
    if spec_fields.get("model_path") is not None:
        spec_fields["model_path"] = str(spec_fields["model_path"])
    return build_judge(kind, llm=config, **spec_fields)


__all__ = ["JudgeSpec", "build_judge", "make_judge"]
