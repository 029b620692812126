"""The one judge factory: ``build_judge(config, ray=None)``.

Every entry point (``rag-eval judge``, ``run``, ``run --judge-only``, ``ask``, the Ask
and Batch pages, the labels rerun, ``rag_eval.testing``) builds its judge here, so a
configuration means the same judge everywhere:

- ``config`` is a judge name (``"llm"``, ``"local"``, ``"local:NAME"`` = the local judge
  with the stored calibration NAME), a :class:`JudgeSpec`, or anything with a
  pipeline ``JudgeConfig``'s attributes (``kind``, ``calibration``, ``model``, ...).
- ``ray`` (a :class:`RaySpec`) wraps the judge for a Ray cluster: the local judge runs in
  Ray actors that each build *the same* judge from the same spec (calibration included);
  the LLM judge stays in the driver under one rate limiter (see :mod:`rag_eval.judges.ray`).

What cannot work is a :class:`JudgeUsageError`, raised here, before any row is read:
``--ray`` without Ray installed, an unknown calibration, a calibration fitted on another
model, a missing model file. Entry points turn it into one line and exit code 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rag_eval.judges.base import Judge, JudgeSpec, JudgeUsageError, RaySpec
from rag_eval.judges.kinds import JUDGE_KINDS


def judge_spec(config: Any, **changes: Any) -> JudgeSpec:
    """The :class:`JudgeSpec` of a name, a spec or a ``JudgeConfig``-like object."""
    if isinstance(config, JudgeSpec):
        spec = config
    elif isinstance(config, str):
        kind, _, calibration = config.partition(":")
        declared = JUDGE_KINDS.get(kind)
        if (calibration and not declared.calibrated) or (config.endswith(":") and not calibration):
            raise JudgeUsageError(f"unknown judge {config!r}; choose one of: {', '.join(JUDGE_KINDS.names())} "
                                  "or local:NAME (a stored calibration)")
        spec = JudgeSpec(kind=kind, calibration=calibration or None)
    else:
        kind = str(getattr(config, "kind", "local"))
        if getattr(config, "calibration", None) is not None and not JUDGE_KINDS.get(kind).calibrated:
            raise JudgeUsageError(f"judge {kind!r} takes no calibration (a calibration is for local:NAME)")
        spec = JudgeSpec(kind=kind, calibration=getattr(config, "calibration", None),
                         model=getattr(config, "model", None), base_url=getattr(config, "base_url", None),
                         api_key_env=getattr(config, "api_key_env", None), prompt_id=getattr(config, "prompt_id", None),
                         concurrency=getattr(config, "concurrency", None), options=getattr(config, "options", None))
    changes = {k: v for k, v in changes.items() if v is not None}
    return replace(spec, **changes) if changes else spec


def judge_changes(name: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``judge.*`` changes of a ``RagConfig`` that choose the judge ``name`` (a kind or
    ``local:NAME``) with ``options`` (``rag-eval run --judge``, the dashboard's judge choice):
    an endpoint kind's endpoint settings go to the configuration's own ``model``/``base_url``/
    ``api_key_env``, where the ``llm`` kind's go. Unknown kinds are a usage error."""
    kind, _, calibration = name.partition(":")
    settings, rest = JUDGE_KINDS.get(kind).endpoint_settings(options)
    return {"judge.kind": kind, "judge.calibration": calibration or None, "judge.options": rest,
            **{f"judge.{key}": value for key, value in settings.items()}}


def build_judge(config: Any = "local", ray: RaySpec | None = None, **changes: Any) -> Judge:
    """The judge ``config`` names (see the module docstring), spread over Ray when
    ``ray`` is given. ``changes`` override spec fields (``model_path``, ``samples``,
    ``llm``...). Raises :class:`JudgeUsageError` before any work when it cannot be built."""
    spec = judge_spec(config, **changes)
    declared = JUDGE_KINDS.get(spec.kind)
    spec = declared.resolve(spec)  # a bad option is a usage error before anything is built
    if ray is not None:
        from rag_eval.judges.ray import ray_judge, require_ray

        require_ray()
        # Ray spreads the rows over its actors: each actor's judge is one process.
        return ray_judge(replace(spec, workers=1), ray, build_from_spec, in_driver=declared.ray == "driver")
    return declared.build(spec)


def build_from_spec(spec: JudgeSpec) -> Judge:
    """The judge of ``spec``'s kind, built here (what each Ray actor runs: a top-level
    function, so it pickles by name and the actor looks the kind up in its own registry)."""
    return JUDGE_KINDS.get(spec.kind).build(spec)


def answer_matcher_for(judge: Any) -> Any:
    """The LLM answer match (:class:`~rag_eval.judges.answer_match.AnswerMatchJudge`) on the
    LLM judge's own endpoint, model and settings, or None when ``judge`` is not an LLM
    judge (no LLM configured: answer correctness is BLEU and ROUGE-L only)."""
    from rag_eval.judges.llm import LLMJudge

    if not isinstance(judge, LLMJudge):
        return None
    from rag_eval.judges.answer_match import AnswerMatchJudge

    return AnswerMatchJudge(judge.config)
