"""A command's options as one object. click parses the flags; :func:`takes` builds the
command's frozen :class:`CommandOptions` dataclass from them once and hands the command that
object instead of a dozen parameters (``tests/test_declared_once.py`` fails on a function of
``rag_eval/cli/`` with 8 or more)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class CommandOptions:
    """A command's options as click parsed them: the fields a subclass declares, and every
    other flag in its ``rest`` when it declares one (a flag it neither declares nor collects
    is a TypeError, not a flag silently dropped)."""

    @classmethod
    def of(cls, params: dict[str, Any]) -> Any:
        own = {f.name for f in fields(cls)}
        values = {k: v for k, v in params.items() if k in own or "rest" not in own}
        if "rest" in own:
            values["rest"] = {k: v for k, v in params.items() if k not in own}
        return cls(**values)


def takes(options: type[CommandOptions]) -> Callable[[Callable[[Any], None]], Callable[..., None]]:
    """Turn ``command(options)`` into the click callback that receives the parsed flags (its
    name and docstring, the command's help, stay the command's)."""
    def wrap(command: Callable[[Any], None]) -> Callable[..., None]:
        @functools.wraps(command)
        def callback(**params: Any) -> None:
            command(options.of(params))

        return callback

    return wrap
