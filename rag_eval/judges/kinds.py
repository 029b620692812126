"""The judge-kind registry: every kind of judge ``build_judge`` can make, declared once.

A :class:`JudgeKind` says everything the rest of the code needs to know about a kind, so no
module outside the kind's own asks for its name:

- ``build``: ``factory(options)`` (a plugin: called with its validated options) or
  ``from_spec(spec)`` (the built-in kinds, which read the :class:`JudgeSpec` fields);
- ``options``: a pydantic model of the options it takes, validated before any row is read
  (like simonw/llm's ``Options``); an unknown or bad option is a usage error naming it and
  listing the allowed ones. ``rag-eval judges list`` shows them for every kind;
- ``calls_network``: whether it sends requests to an endpoint (a key, cost, a rate limit)
  or runs on this machine. The dry run, Batch and Settings read it;
- ``endpoint``: it talks to an OpenAI-compatible endpoint (implies ``calls_network``). Its
  factory is then ``factory(options, llm)``: ``llm`` is the
  :class:`~rag_eval.llm.config.LLMConfig` every entry point resolves exactly as for the
  built-in ``llm`` kind (``--model``, ``--base-url``, ``--api-key-env``, the ``RAG_EVAL_LLM_*``
  settings, the dashboard's Settings, a configuration's ``judge.model``/``base_url``/``api_key_env``,
  ``--judge-option base_url=...``), whose key is read through the key policy
  (``llm.api_key()``: :func:`rag_eval.config.key_for`). Its options model does not declare
  those settings (:data:`ENDPOINT_SETTINGS`). It reports what it spent in each result's
  ``tokens`` (the reply's ``usage``) and ``cost_usd``: sending through
  :class:`rag_eval.llm.client.LLMClient` gives both (``Completion.usage``, ``.cost_usd``);
- ``estimate(rows, spec)``: what judging ``rows`` will send, as
  :class:`~rag_eval.llm.pricing.CostEstimate` s (one per purpose), or None for a free local
  kind. ``rows`` are the run's usable rows (:class:`rag_eval.runs.sources.SourceItem`:
  ``item``, the :class:`~rag_eval.schema.EvalItem` the judge reads, plus ``question``,
  ``answer`` and ``reference_answer``); :mod:`rag_eval.runs.estimate` adds the answers and
  the metrics;
- ``expected_error(judge, calibration)``: how far its labels are expected to be from a
  human's (:mod:`rag_eval.judges.expected_error`), given the judge object or a run's
  recorded judge name; None (the default): "unknown", to be measured by a review;
- ``trust_note(judge_name)``: what the kind says about how far to trust the labels of a
  recorded judge name (the local judge's held-out figures), or None;
- ``ray``: ``"actors"`` (each Ray actor builds the judge from the spec) or ``"driver"``
  (it stays in this process under one rate limiter); by default ``driver`` when it calls
  a network.

The built-in kinds (``llm``, ``local``, and ``lexical``: the word-overlap reference,
:mod:`rag_eval.judges.lexical`) register here exactly as a plugin's do. A plugin
declares an entry point in group ``rag_eval.judges`` naming a :class:`JudgeKind`::

    [project.entry-points."rag_eval.judges"]
    overlap = "my_package.judges:overlap"

    # my_package/judges.py
    class Options(pydantic.BaseModel):
        threshold: float = 0.5

    class OverlapJudge:            # satisfies rag_eval.judges.base.Judge
        name = "overlap:1"
        def __init__(self, options: Options): ...
        def judge(self, items, progress=None, cancel=None) -> list[JudgeResult]: ...

    overlap = JudgeKind(name="overlap", factory=OverlapJudge, options=Options, help="Word overlap")

It is then ``--judge overlap`` on every entry point, a choice in Settings, Batch and Ask, and runs on
Ray actors like the local judge. A kind that calls a paid endpoint also gives
``calls_network=True`` and an ``estimate``, so ``--dry-run`` and Batch state its cost. A
plugin that fails to import is named in :attr:`JudgeKinds.plugin_errors`; the rest still works.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from rag_eval.judges.base import Judge, JudgeSpec, JudgeUsageError
from rag_eval.judges.lexical import LexicalJudge, LexicalOptions
from rag_eval.judges.local_error import local_expected_error
from rag_eval.llm.pricing import CostEstimate
from rag_eval.plugins import Registry

JUDGES_GROUP = "rag_eval.judges"
#: ``estimate(rows, spec)``: rows with ``item``, ``question``, ``answer``, ``reference_answer``.
Estimator = Callable[[Sequence[Any], JudgeSpec], Sequence[CostEstimate] | None]
#: ``expected_error(judge object or recorded judge name, calibration name)`` -> a dict, or None (unknown).
ExpectedError = Callable[[Any, str | None], dict[str, Any] | None]
#: The endpoint settings of a kind with ``endpoint=True``: the :class:`JudgeSpec` fields every
#: entry point fills as for the ``llm`` kind; given as options they move to those fields.
ENDPOINT_SETTINGS = ("model", "base_url", "api_key_env")


@dataclass(frozen=True)
class JudgeKind:
    """One kind of judge (see the module docstring for each field)."""

    name: str
    factory: Callable[..., Judge] | None = None  # (options), or (options, llm) for an endpoint kind
    options: type[BaseModel] | None = None
    calls_network: bool = False
    endpoint: bool = False
    help: str = ""
    origin: str = "rag_eval"
    from_spec: Callable[[JudgeSpec], Judge] | None = None
    #: takes a stored calibration (``local:NAME``)
    calibrated: bool = False
    estimate: Estimator | None = field(default=None, compare=False)
    expected_error: ExpectedError | None = field(default=None, compare=False)
    trust_note: Callable[[str], str | None] | None = field(default=None, compare=False)
    ray: Literal["actors", "driver"] | None = None

    def __post_init__(self) -> None:
        if (self.factory is None) == (self.from_spec is None):
            raise ValueError(f"judge kind {self.name!r}: give factory or from_spec")
        if not self.name.replace("_", "").replace("-", "").isalnum() or ":" in self.name:
            raise ValueError(f"judge kind {self.name!r}: letters, digits, - and _ only")
        if self.endpoint:
            object.__setattr__(self, "calls_network", True)
            declared = [n for n in ENDPOINT_SETTINGS if n in self.option_names()]
            if self.factory is not None and declared:
                raise ValueError(f"judge kind {self.name!r}: an endpoint kind gets {', '.join(declared)} from the "
                                 "endpoint settings (its factory's llm), not from its options")
        if self.ray is None:
            object.__setattr__(self, "ray", "driver" if self.calls_network else "actors")

    def option_names(self) -> tuple[str, ...]:
        return tuple(self.options.model_fields) if self.options is not None else ()

    def needs(self) -> str:
        """What running it takes, in a few words (the judge choice of Settings, Batch and Ask)."""
        required = [name for name, f in (self.options.model_fields.items() if self.options else ())
                    if f.is_required()]
        need = ("an OpenAI-compatible endpoint: model, base URL, key" if self.endpoint else
                "a network service" if self.calls_network else "runs on this machine, no key")
        return need + (f"; options {', '.join(required)}" if required else "")

    def endpoint_settings(self, options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``(settings, rest)``: an endpoint kind's options split into its endpoint settings
        (:data:`ENDPOINT_SETTINGS`, which go where ``--model``/``--base-url``/``--api-key-env``
        go) and its own options; any other kind keeps every option."""
        if not self.endpoint or not options:
            return {}, dict(options) if options else None
        settings = {k: v for k, v in options.items() if k in ENDPOINT_SETTINGS}
        rest = {k: v for k, v in options.items() if k not in ENDPOINT_SETTINGS}
        return settings, rest or None

    def validate_options(self, options: Mapping[str, Any] | None) -> BaseModel | None:
        """The options model of ``options``; a usage error names what is wrong and the allowed options."""
        from rag_eval.config import looks_secret, remember_secret

        for name, value in (options or {}).items():  # a key given as an option is redacted like the owner's
            if isinstance(value, str) and looks_secret(str(name)):
                remember_secret(value)
        allowed = ", ".join(self.option_names()) or "none"
        if self.options is None:
            if options:
                raise JudgeUsageError(f"judge {self.name!r} takes no options (got {', '.join(sorted(options))})")
            return None
        unknown = sorted(set(options or {}) - set(self.option_names()))
        if unknown:  # a model that ignores extra fields would drop them silently
            raise JudgeUsageError(f"judge {self.name!r} options: {', '.join(unknown)}: not an option of this kind "
                                  f"(options: {allowed})")
        try:
            return self.options.model_validate(dict(options or {}))
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise JudgeUsageError(f"judge {self.name!r} options: {problems} (options: {allowed})") from None

    def resolve(self, spec: JudgeSpec) -> JudgeSpec:
        """``spec`` with a built-in kind's validated options moved into its own fields
        (``{"model": ..., "samples": 3}`` -> ``spec.model``, ``spec.samples``) and an endpoint
        kind's endpoint settings given as options moved to the endpoint's (spec fields and
        ``spec.llm``); a plugin's own options stay in ``spec.options``. Raises the usage error
        of a bad option."""
        settings, options = self.endpoint_settings(spec.options)
        settings = {k: v for k, v in settings.items() if v is not None}  # given as options, they win
        spec = replace(spec, options=options, **settings)
        if spec.llm is not None and settings:
            try:
                spec = replace(spec, llm=replace(spec.llm, **settings))
            except ValueError as err:  # e.g. a key pasted where its variable's name goes (never echoed)
                raise JudgeUsageError(f"judge {self.name!r}: {err}") from None
        validated = self.validate_options(spec.options)
        if self.from_spec is None or validated is None:
            return spec
        return replace(spec, options=None, **validated.model_dump(exclude_unset=True))

    def build(self, spec: JudgeSpec) -> Judge:
        spec = self.resolve(spec)
        if self.from_spec is not None:
            return self.from_spec(spec)
        if self.factory is None:  # __post_init__ rules it out
            raise JudgeUsageError(f"judge kind {self.name!r} has no factory")
        options = self.validate_options(spec.options)
        try:
            if self.endpoint:  # the same endpoint, model and key as the llm kind would get
                return self.factory(options, llm_config_of(spec))
            return self.factory(options)
        except (OSError, ValueError, ImportError) as err:
            raise JudgeUsageError(f"cannot build the {self.name} judge: {err}") from err


class JudgeKinds(Registry[JudgeKind]):
    """Judge kinds by name (:class:`rag_eval.plugins.Registry`); ``local:NAME`` and a recorded
    judge name such as ``llm:gpt-4o-mini`` name the kind before the ``:``."""

    declares = JudgeKind
    noun = "judge kind"

    def base_name(self, name: str) -> str:
        return name.split(":", 1)[0]

    def unknown(self, name: str) -> Exception:
        return JudgeUsageError(f"unknown judge {name!r}; choose one of: {', '.join(self.names())} "
                               "(local:NAME: the local judge with a stored calibration)")

    def default(self, endpoint: bool) -> str:
        """The kind used when none is named: the first built-in one that talks to an
        OpenAI-compatible endpoint (``endpoint``: one is configured) or that runs here."""
        return next(k.name for k in self
                    if k.origin == "rag_eval" and k.endpoint == endpoint and (endpoint or not k.calls_network))

    def calls_network(self, name: str | None) -> bool:
        """Whether the judge ``name`` (a kind, ``local:NAME``, or a recorded judge name)
        calls an endpoint; unknown names do not."""
        found = self.find(str(name or ""))
        return bool(found and found.calls_network)


# ---------------------------------------------------------------- the built-in kinds
def _spec_options(title: str, doc: str, *names: str) -> type[BaseModel]:
    """A built-in kind's options model: the :class:`JudgeSpec` fields ``names`` (which
    :meth:`JudgeKind.resolve` fills), with the spec's types and defaults; a count is at
    least 1, a calibration is given by name."""
    types = get_type_hints(JudgeSpec) | {"calibration": str | None}
    defaults: dict[str, Any] = {f.name: f.default for f in fields(JudgeSpec)}
    return create_model(title, __config__=ConfigDict(extra="forbid"), __doc__=doc, **{  # type: ignore[call-overload]
        name: (types[name], Field(defaults[name], ge=1) if name in ("concurrency", "samples", "workers")
               else defaults[name]) for name in names})


LLMJudgeOptions = _spec_options("LLMJudgeOptions", "Options of the ``llm`` judge (the key comes from the variable "
                                "``api_key_env`` names, never from an option).", "model", "base_url", "api_key_env",
                                "concurrency", "samples", "consistency_check", "prompt_id")
LocalJudgeOptions = _spec_options("LocalJudgeOptions", "Options of the ``local`` judge.", "model_path", "calibration",
                                  "workers")


def llm_config_of(spec: JudgeSpec) -> Any:
    """The :class:`~rag_eval.llm.config.LLMConfig` the ``llm`` judge of ``spec`` uses."""
    from rag_eval.llm.config import LLMConfig

    if spec.llm is not None:
        return spec.llm
    settings = {k: v for k, v in {"model": spec.model, "base_url": spec.base_url, "api_key_env": spec.api_key_env,
                                  "concurrency": spec.concurrency}.items() if v is not None}
    try:
        return LLMConfig.from_settings(**settings)
    except ValueError as err:
        raise JudgeUsageError(f"cannot configure the LLM judge: {err}") from err


def _llm(spec: JudgeSpec) -> Judge:
    from rag_eval.judges.llm import LLMJudge
    from rag_eval.judges.prompts import TRACE_PROMPT_ID

    return LLMJudge(llm_config_of(spec), samples=spec.samples or 1, consistency_check=spec.consistency_check,
                    prompt_id=spec.prompt_id or TRACE_PROMPT_ID)


def _llm_estimate(rows: Sequence[Any], spec: JudgeSpec) -> list[CostEstimate]:
    """The TRACe labelling (x samples) of every row, and the answer match of the rows with a
    reference (it runs on the LLM judge's endpoint: :func:`rag_eval.judges.factory.answer_matcher_for`)."""
    from rag_eval.judges.answer_match import estimate_matching
    from rag_eval.judges.llm import estimate_judging
    from rag_eval.judges.prompts import TRACE_PROMPT_ID

    config = llm_config_of(spec)
    judged = estimate_judging([r.item for r in rows], config, spec.samples or 1, spec.prompt_id or TRACE_PROMPT_ID)
    matched = [r for r in rows if r.reference_answer and r.answer]
    return [judged, estimate_matching([(r.question, str(r.reference_answer), str(r.answer)) for r in matched], config)]


def _local(spec: JudgeSpec) -> Judge:
    from rag_eval.judges.local import LocalJudge

    try:
        # A worker process builds its judge here too, from the same spec (one process each).
        return LocalJudge(model_path=spec.model_path, calibration=spec.calibration, workers=spec.workers or 1,
                          worker_judge=partial(_local, replace(spec, workers=1)))
    except (OSError, ValueError, KeyError) as err:  # no model, no calibration, a calibration of another model
        raise JudgeUsageError(f"cannot load the local judge: {str(err).splitlines()[0] if str(err) else err!r}") from err


@functools.lru_cache(maxsize=8)
def _local_trust_note(judge_name: str) -> str | None:
    """The local model's held-out figures, for labels recorded by this very model version."""
    from rag_eval.judges.local import LocalModel

    model = LocalModel.load()
    return model.quality_note() if judge_name == f"local:{model.version}" else None


JUDGE_KINDS = JudgeKinds(JUDGES_GROUP)
JUDGE_KINDS.register(JudgeKind("llm", from_spec=_llm, options=LLMJudgeOptions, endpoint=True,
                               estimate=_llm_estimate,
                               help="An LLM labels every sentence (any OpenAI-compatible endpoint)."))
JUDGE_KINDS.register(JudgeKind("local", from_spec=_local, options=LocalJudgeOptions, calibrated=True,
                               expected_error=local_expected_error, trust_note=_local_trust_note,
                               help="The offline learned judge (ONNX encoder + heads); local:NAME with a calibration."))
JUDGE_KINDS.register(JudgeKind("lexical", factory=LexicalJudge, options=LexicalOptions,
                               help="Word overlap, the reference a judge should beat (no model, no network, no cost)."))
