"""The judge-kind registry: every kind of judge ``build_judge`` can make, declared once.

A :class:`JudgeKind` says how to build the judge (``build(spec)``), which options it takes
(a pydantic model, validated before any row is read, like simonw/llm's ``Options``),
whether it calls an LLM endpoint (``uses_llm``: a key, cost, one rate limiter in the Ray
driver) or runs on this machine (spread over Ray actors with ``--ray``), and a help line.
Entry points ask this registry instead of assuming "not llm means local".

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

It is then ``--judge overlap`` on every entry point, a choice in Settings, and runs on
Ray actors like the local judge. A plugin that fails to import is named in
:attr:`JudgeKinds.plugin_errors`; the rest still works.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from pydantic import BaseModel, ValidationError

from rag_eval.judges.base import Judge, JudgeSpec, JudgeUsageError
from rag_eval.judges.lexical import LexicalJudge, LexicalOptions
from rag_eval.metrics.registry import PluginError, load_entry_points

JUDGES_GROUP = "rag_eval.judges"


@dataclass(frozen=True)
class JudgeKind:
    """One kind of judge. Either ``factory(options)`` (a plugin: options validated by the
    ``options`` model from :attr:`JudgeSpec.options`) or ``from_spec(spec)`` (the built-in
    kinds, which read the spec's own fields) builds it."""

    name: str
    factory: Callable[[Any], Judge] | None = None
    options: type[BaseModel] | None = None
    uses_llm: bool = False
    help: str = ""
    origin: str = "rag_eval"
    from_spec: Callable[[JudgeSpec], Judge] | None = None
    #: takes a stored calibration (``local:NAME``)
    calibrated: bool = False

    def __post_init__(self) -> None:
        if (self.factory is None) == (self.from_spec is None):
            raise ValueError(f"judge kind {self.name!r}: give factory or from_spec")
        if not self.name.replace("_", "").replace("-", "").isalnum() or ":" in self.name:
            raise ValueError(f"judge kind {self.name!r}: letters, digits, - and _ only")

    def validate_options(self, options: Mapping[str, Any] | None) -> BaseModel | None:
        """The options model of ``options``; a usage error names what is wrong."""
        if self.options is None:
            if options:
                raise JudgeUsageError(f"judge {self.name!r} takes no options (got {', '.join(sorted(options))})")
            return None
        try:
            return self.options.model_validate(dict(options or {}))
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise JudgeUsageError(f"judge {self.name!r} options: {problems}") from None

    def build(self, spec: JudgeSpec) -> Judge:
        if self.from_spec is not None:
            return self.from_spec(spec)
        options = self.validate_options(spec.options)
        if self.factory is None:  # __post_init__ rules it out
            raise JudgeUsageError(f"judge kind {self.name!r} has no factory")
        try:
            return self.factory(options)
        except (OSError, ValueError, ImportError) as err:
            raise JudgeUsageError(f"cannot build the {self.name} judge: {err}") from err


class JudgeKinds:
    """Judge kinds by name; plugins load on the first lookup."""

    def __init__(self, group: str = JUDGES_GROUP) -> None:
        self._kinds: dict[str, JudgeKind] = {}
        self.group = group
        self.plugin_errors: list[PluginError] = []
        self._loaded = False
        self._lock = threading.RLock()

    def register(self, kind: JudgeKind) -> JudgeKind:
        with self._lock:
            known = self._kinds.get(kind.name)
            if known is not None and known != kind:
                raise ValueError(f"judge kind {kind.name!r} is already registered (from {known.origin})")
            self._kinds[kind.name] = kind
        return kind

    def unregister(self, name: str) -> None:
        with self._lock:
            self._kinds.pop(name, None)

    def _ensure(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self.plugin_errors.extend(load_entry_points(self.group, self._register_loaded))

    def _register_loaded(self, obj: Any, origin: str) -> None:
        if not isinstance(obj, JudgeKind):
            raise TypeError(f"the entry point gave {type(obj).__name__}, not a rag_eval JudgeKind")
        from dataclasses import replace

        self.register(replace(obj, origin=origin) if obj.origin == "rag_eval" else obj)

    def reload_plugins(self) -> list[PluginError]:
        with self._lock:
            self._loaded = False
            self.plugin_errors = []
        self._ensure()
        return list(self.plugin_errors)

    def find(self, name: str) -> JudgeKind | None:
        base = name.split(":", 1)[0]
        if base not in self._kinds:
            self._ensure()
        return self._kinds.get(base)

    def get(self, name: str) -> JudgeKind:
        found = self.find(name)
        if found is None:
            raise JudgeUsageError(f"unknown judge {name!r}; choose one of: {', '.join(self.names())} "
                                  "(local:NAME: the local judge with a stored calibration)")
        return found

    def names(self) -> tuple[str, ...]:
        self._ensure()
        return tuple(self._kinds)

    def __iter__(self) -> Iterator[JudgeKind]:
        self._ensure()
        return iter(list(self._kinds.values()))

    def uses_llm(self, name: str | None) -> bool:
        """Whether the judge ``name`` (a kind, ``local:NAME``, or a recorded judge name
        such as ``llm:gpt-4o-mini``) calls an LLM endpoint; unknown names do not."""
        found = self.find(str(name or ""))
        return bool(found and found.uses_llm)


# The built-in kinds' builders (plugins register theirs the same way).
def _llm(spec: JudgeSpec) -> Judge:
    from rag_eval.judges.llm import LLMJudge
    from rag_eval.judges.prompts import TRACE_PROMPT_ID
    from rag_eval.llm.config import LLMConfig

    config = spec.llm
    if config is None:
        settings = {k: v for k, v in {"model": spec.model, "base_url": spec.base_url, "api_key_env": spec.api_key_env,
                                      "concurrency": spec.concurrency}.items() if v is not None}
        try:
            config = LLMConfig.from_settings(**settings)
        except ValueError as err:
            raise JudgeUsageError(f"cannot configure the LLM judge: {err}") from err
    return LLMJudge(config, samples=spec.samples or 1, consistency_check=spec.consistency_check,
                    prompt_id=spec.prompt_id or TRACE_PROMPT_ID)


def _local(spec: JudgeSpec) -> Judge:
    from rag_eval.judges.local import LocalJudge

    try:
        # A worker process builds its judge here too, from the same spec (one process each).
        return LocalJudge(model_path=spec.model_path, calibration=spec.calibration, workers=spec.workers or 1,
                          worker_judge=partial(_local, replace(spec, workers=1)))
    except (OSError, ValueError, KeyError) as err:  # no model, no calibration, a calibration of another model
        raise JudgeUsageError(f"cannot load the local judge: {str(err).splitlines()[0] if str(err) else err!r}") from err


JUDGE_KINDS = JudgeKinds()
JUDGE_KINDS.register(JudgeKind("llm", from_spec=_llm, uses_llm=True,
                               help="An LLM labels every sentence (any OpenAI-compatible endpoint)."))
JUDGE_KINDS.register(JudgeKind("local", from_spec=_local, calibrated=True,
                               help="The offline learned judge (ONNX encoder + heads); local:NAME with a calibration."))
JUDGE_KINDS.register(JudgeKind("lexical", factory=LexicalJudge, options=LexicalOptions,
                               help="Word overlap, the reference a judge should beat (no model, no network, no cost)."))
