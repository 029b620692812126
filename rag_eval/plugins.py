"""The one plugin registry: declarations by name, built-in ones and those of installed plugins.

Metrics (:data:`rag_eval.metrics.registry.METRICS`) and judge kinds
(:data:`rag_eval.judges.kinds.JUDGE_KINDS`) are each a :class:`Registry` of their own
declaration type; the subclass adds only what is specific to it (how a stored name such as
``recall@5`` or ``llm:gpt-4o-mini`` names its declaration, what an unknown name raises, the
lists an output reads). Everything else is here once: a name declared twice is an error,
plugins load from their entry point group on the first lookup (``importlib.metadata``, like
pytest's and simonw/llm's plugins), a plugin that fails to load is named in
:attr:`Registry.plugin_errors` while the rest still works, and :meth:`Registry.reload_plugins`
looks again after an install in the running process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Generic, NamedTuple, TypeVar

#: The origin of what this package declares itself; a plugin's declaration gets its distribution's.
BUILT_IN = "rag_eval"


class PluginError(NamedTuple):
    """A plugin that could not be loaded: its entry point, its distribution and why."""

    entry_point: str
    origin: str
    error: str

    def line(self) -> str:
        return f"plugin {self.entry_point!r} ({self.origin}) failed to load: {self.error}"


D = TypeVar("D", bound=Any)  # what a registry holds: a frozen dataclass with a ``name`` and the ``origin`` it came from

_loading_origin = threading.local()


def loading_origin() -> str | None:
    """The distribution whose entry point is loading right now (a decorator that registers
    while its module is imported names it as the declaration's origin), else None."""
    return getattr(_loading_origin, "value", None)


def load_entry_points(group: str, register: Callable[[Any, str], None],
                      own: Mapping[str, str] | None = None) -> list[PluginError]:
    """Load every entry point of ``group`` (``importlib.metadata``), handing each loaded
    object and its distribution's name to ``register``. ``RAG_EVAL_PLUGINS`` (a comma list
    of entry point names; empty: none) limits which load, like simonw/llm's
    ``LLM_LOAD_PLUGINS``. This package's own (``own``: name -> ``module:attribute``) come
    first, whether or not its metadata is installed. A plugin that fails is returned as a
    :class:`PluginError`, never raised: the rest still loads."""
    import os
    from importlib.metadata import EntryPoint, entry_points

    allowed = os.environ.get("RAG_EVAL_PLUGINS")
    only = None if allowed is None else {n.strip() for n in allowed.split(",") if n.strip()}
    errors: list[PluginError] = []
    seen: set[tuple[str, str]] = set()
    mine = [EntryPoint(name, value, group) for name, value in (own or {}).items()]
    for ep in [*mine, *entry_points(group=group)]:
        if (ep.name, ep.value) in seen or (only is not None and ep.name not in only):
            continue
        seen.add((ep.name, ep.value))
        dist = getattr(ep, "dist", None)
        origin = f"{dist.name} {dist.version}" if dist is not None else ep.value
        previous = loading_origin()
        _loading_origin.value = origin
        try:
            register(ep.load(), origin)
        except Exception as err:  # noqa: BLE001 - any failure of a plugin is reported, not fatal
            first = str(err).splitlines()[0] if str(err) else ""
            errors.append(PluginError(ep.name, origin, f"{type(err).__name__}: {first}".rstrip(": ")))
        finally:
            _loading_origin.value = previous
    return errors


class Registry(Generic[D]):
    """Declarations of type ``declares`` by name, in declaration order. Plugins of entry point
    ``group`` (None: none) load lazily on the first lookup that needs them."""

    #: the declaration type an entry point must give (or a list of them)
    declares: type[Any]
    #: a module named by an entry point registers its declarations itself while it is imported
    #: (a decorator); otherwise an entry point giving anything but a declaration is a plugin error
    self_registering = False
    #: how a declaration is called in messages ("metric", "judge kind")
    noun = "declaration"

    def __init__(self, group: str | None, own: Mapping[str, str] | None = None) -> None:
        self._items: dict[str, D] = {}
        self.group = group
        self.own = dict(own or {})
        self.plugin_errors: list[PluginError] = []
        self._plugins_loaded = group is None
        self._lock = threading.RLock()

    # -- declaring
    def _replaces(self, known: D, new: D) -> bool:
        """Whether ``new`` may replace ``known``, a different declaration of the same name."""
        return False

    def register(self, item: D) -> D:
        """Add ``item``; a second declaration of a name is an error (one declaration per
        concept), unless it is the very same declaration (a module imported twice) or one
        :meth:`_replaces` allows."""
        with self._lock:
            known = self._items.get(item.name)
            if known is not None and known != item and not self._replaces(known, item):
                raise ValueError(f"{self.noun} {item.name!r} is already registered (from {known.origin})")
            self._items[item.name] = item
        return item

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register throwaway declarations clean up with it)."""
        with self._lock:
            self._items.pop(name, None)

    # -- plugins
    def _ensure_plugins(self) -> None:
        if self._plugins_loaded:
            return
        with self._lock:
            if self._plugins_loaded:
                return
            self._plugins_loaded = True
            self.plugin_errors.extend(load_entry_points(self.group or "", self._register_loaded, self.own))

    def _register_loaded(self, obj: Any, origin: str) -> None:
        if isinstance(obj, self.declares):
            self.register(replace(obj, origin=origin) if obj.origin == BUILT_IN else obj)
        elif isinstance(obj, (list, tuple)):
            for one in obj:
                self._register_loaded(one, origin)
        elif not self.self_registering:
            raise TypeError(f"the entry point gave {type(obj).__name__}, not a rag_eval {self.declares.__name__}")

    def reload_plugins(self) -> list[PluginError]:
        """Look at the installed entry points again (after installing a plugin in-process)."""
        with self._lock:
            self._plugins_loaded = self.group is None
            self.plugin_errors = []
        self._ensure_plugins()
        return list(self.plugin_errors)

    # -- looking up
    def base_name(self, name: str) -> str:
        """The declared name a stored name stands for (``recall@5`` -> ``recall``)."""
        return name

    def unknown(self, name: str) -> Exception:
        """What :meth:`get` raises for a name nothing declares."""
        return ValueError(f"unknown {self.noun} {name!r}; installed: {', '.join(self.names())}")

    def find(self, name: str) -> D | None:
        """The declaration of ``name`` or of its :meth:`base_name`, or None. A built-in name
        is found without loading the plugins."""
        for key in (name, self.base_name(name)):
            if key in self._items:
                return self._items[key]
        self._ensure_plugins()
        return self._items.get(name) or self._items.get(self.base_name(name))

    def get(self, name: str) -> D:
        found = self.find(name)
        if found is None:
            raise self.unknown(name)
        return found

    def names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self)

    def __iter__(self) -> Iterator[D]:
        self._ensure_plugins()
        return iter(list(self._items.values()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None
