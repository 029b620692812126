"""The judge interface shared by the LLM judge and the local judge.

A judge takes :class:`~rag_eval.schema.EvalItem` objects and returns one
:class:`~rag_eval.schema.JudgeResult` per item, in the same order, each with an
explicit status. A judge never raises for a bad item: the failure is the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from rag_eval.schema import EvalItem, JudgeResult

ProgressCallback = Callable[[int, int], None]  # (done, total)


@runtime_checkable
class Judge(Protocol):
    """Anything with a ``name`` (recorded with every result, e.g. ``"local:2.0.0"``
    or ``"llm:gpt-4o-mini"``) and a ``judge`` method."""

    name: str

    def judge(
        self,
        items: Sequence[EvalItem],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> list[JudgeResult]:
        """One result per item, in input order. When ``cancel`` is set, items not
        yet judged end with status ``cancelled``."""
        ...
