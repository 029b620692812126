"""The engine's three contracts, as :class:`typing.Protocol` s mypy checks.

:func:`rag_eval.runs.engine.evaluate` takes a :class:`Source` (what yields the items), a
:class:`~rag_eval.judges.base.Judge` (what labels them) and a :class:`Sink` (where each
record goes). Nothing else is asked of them; a judge that needs to connect first (Ray)
or to let go of something afterwards is a :class:`~rag_eval.judges.base.ManagedJudge`.

Vocabulary: a **row** is a line of an input file; a :class:`~rag_eval.runs.sources.SourceItem`
is the engine's input unit (a row or a question as its source prepared it; ``id`` is its
id); an :class:`~rag_eval.schema.ItemRecord` is the stored result of one item, built only
by :func:`rag_eval.runs.records.build_record`. The glossary: docs/architecture.md.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from rag_eval.runs.sources import SourceInfo, SourceItem
from rag_eval.schema import ItemRecord


@runtime_checkable
class Source(Protocol):
    """Yields the items of one evaluation, in input order, each with a status when it
    ended before the judge (a bad row, a retrieval error)."""

    #: the row cache answering rows judged before (None: none)
    row_cache: Any
    #: the LLM answer match; None until the engine sets one from an LLM judge
    answer_matcher: Any

    def open(self) -> None:
        """Check what the source needs (a collection) before anything is stored."""

    def describe(self) -> SourceInfo:
        """Size, fingerprint and label of the input (read before a stored run opens)."""

    def size_hint(self) -> int:
        """The number of items when known without reading the input, else 0."""

    def items(self, skip: frozenset[str] = ..., cancel: threading.Event | None = None) -> Iterator[SourceItem]:
        """Every item not in ``skip`` (a resumed run's finished ids)."""


@runtime_checkable
class Sink(Protocol):
    """Receives each record in input order; opened with the source's description (when
    ``needs_info``), closed with the run's final status. A sink that resumes a run is
    told which when it is made (:class:`~rag_eval.runs.sinks.StoreSink`)."""

    #: whether :meth:`open` wants the source's :class:`SourceInfo` (reading it may cost a pass)
    needs_info: bool
    #: the stored run, once opened (None: the sink is not a run store)
    run_id: str | None

    def open(self, info: SourceInfo | None) -> dict[str, dict[str, Any]]:
        """Returns the items it already holds, by id, in the store's form (the fields
        :data:`rag_eval.runs.summary.SUMMARY_FIELDS` at least): a resumed run's finished
        items, which the run's summary counts."""

    def write(self, record: ItemRecord) -> None: ...

    def close(self, status: str, error: str | None = None) -> None: ...
