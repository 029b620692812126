"""One span shape for every trace source, and the attribute helpers the mapping reads with.

Each source (Phoenix's REST API, an OTLP JSON file, Phoenix's span parquet export, TruLens'
OpenTelemetry spans) yields :class:`Span` objects whose ``attributes`` are *flat*: the
OpenInference dotted keys with list positions as numbers (``retrieval.documents.0.document.content``),
whatever nesting the source used. Phoenix nests attributes (``{"retrieval": {"documents":
[{"document": {...}}]}}``), OTLP keeps them flat, so :func:`flatten` brings both to one form and
the mapping (:mod:`rag_eval.traces.mapping`) is written once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass(slots=True)
class Span:
    """One span of a trace. Ids are lower-case hex text (as Phoenix shows them); ``parent_id``
    is None for a root span; times are UTC (None when the source did not give them)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str = ""
    kind: str = "UNKNOWN"  # OpenInference span kind: CHAIN, RETRIEVER, RERANKER, LLM, ...
    start: datetime | None = None
    end: datetime | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    status_code: str | None = None
    dropped_attributes: int = 0  # what the tracer left out (its attribute limit)


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attributes as flat dotted keys. Lists of objects become numbered keys (the
    OpenInference way: ``llm.input_messages.0.message.role``); lists of plain values stay
    lists (an OTLP array attribute such as TruLens' ``retrieved_contexts``)."""
    out = {} if out is None else out
    if isinstance(value, Mapping):
        for key, child in value.items():
            flatten(child, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, (list, tuple)) and any(isinstance(v, Mapping) for v in value):
        for i, child in enumerate(value):
            flatten(child, f"{prefix}.{i}" if prefix else str(i), out)
    elif prefix:
        out[prefix] = list(value) if isinstance(value, tuple) else value
    return out


def indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The numbered entries under ``prefix`` (``prefix.0.x``, ``prefix.1.y``...) as a list of
    flat dicts, in index order; gaps are skipped."""
    found: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        head, _, rest = key[len(start):].partition(".")
        if head.isdigit() and rest:
            found.setdefault(int(head), {})[rest] = value
    return [found[i] for i in sorted(found)]


def as_text(value: Any) -> str | None:
    """A text attribute as ``str`` (numbers and booleans as their text; None, NaN and empty
    values as None); objects and lists are JSON-encoded so nothing is silently lost."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, (int, float, bool)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def parse_time(value: Any) -> datetime | None:
    """A timestamp as an aware UTC datetime: ISO text (Phoenix), nanoseconds since the
    epoch as int or text (OTLP), a datetime or pandas Timestamp (parquet)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        nanos = int(value)
        if nanos <= 0:
            return None
        return datetime.fromtimestamp(nanos / 1e9, tz=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def group_by_trace(spans: Iterable[Span]) -> Iterator[tuple[str, list[Span]]]:
    """``(trace id, spans)`` per trace, traces in the order their first span came."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    yield from traces.items()
