"""Judges by name: ``make_judge("llm", model=..., ...)`` or ``make_judge("local")``.

Entry points (CLI, pipeline, dashboard) build judges only through here, so a new
kind is added in one place and the error message lists what exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rag_eval.judges.base import Judge


def _llm(**options: Any) -> Judge:
    from rag_eval.judges.llm import LLMJudge
    from rag_eval.judges.prompts import TRACE_PROMPT_ID
    from rag_eval.llm.config import LLMConfig

    judge_options: dict[str, Any] = {
        "samples": options.pop("samples", 1) or 1,
        "consistency_check": bool(options.pop("consistency_check", False)),
        "prompt_id": options.pop("prompt_id", None) or TRACE_PROMPT_ID,
    }
    config = options.pop("config", None)
    if config is None:
        config = LLMConfig.from_settings(**options)
    elif options:
        raise ValueError(f"pass either config or LLM settings, not both (got {', '.join(sorted(options))})")
    return LLMJudge(config, **judge_options)


def _local(**options: Any) -> Judge:
    from rag_eval.judges.local import LocalJudge  # written alongside; imported only when asked for

    return LocalJudge(**options)


REGISTRY: dict[str, Callable[..., Judge]] = {"llm": _llm, "local": _local}


def make_judge(kind: str, **options: Any) -> Judge:
    """A judge of ``kind`` ("llm" | "local"). LLM options are LLMConfig fields (model,
    base_url, api_key_env, concurrency, rpm, ...) or ``config=LLMConfig(...)``, plus
    samples, consistency_check, prompt_id. Local options: model_path, calibration
    (``"local:NAME"`` is the local judge with the stored calibration NAME)."""
    if kind.startswith("local:"):  # local:NAME = the local judge with a stored calibration
        kind, options = "local", {**options, "calibration": kind.split(":", 1)[1]}
    try:
        factory = REGISTRY[kind]
    except KeyError:
        raise ValueError(f"unknown judge {kind!r}; choose one of: {', '.join(REGISTRY)}") from None
    return factory(**options)
