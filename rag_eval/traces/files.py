"""Trace files: OTLP JSON (an OpenTelemetry Collector's file exporter) and Phoenix's span parquet.

- **OTLP JSON**: one ``ExportTraceServiceRequest`` per line (``resourceSpans`` → ``scopeSpans`` →
  ``spans``), attribute values typed as OTLP's JSON encoding writes them (``stringValue``,
  ``intValue`` as text, ``arrayValue``, ``kvlistValue``...). Ids are hex (the collector's form) or
  base64 (protobuf's own JSON mapping); both are read. A whole file holding one JSON request
  (pretty-printed, not one per line) reads too.
- **Phoenix parquet**: the spans dataframe Phoenix's client returns
  (``client.spans.get_spans_dataframe(...)`` then ``to_parquet``): ``context.trace_id``,
  ``context.span_id``, ``parent_id``, ``span_kind``, ``start_time``... and one
  ``attributes.*`` column per attribute, whose values may be nested (lists of documents or
  messages); :func:`rag_eval.traces.spans.flatten` makes them the same flat keys as OTLP.

A line or row that cannot be read is reported as a RowError (file, line as its row, reason) and the rest goes on.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag_eval.io.rows import RowError, json_problem
from rag_eval.traces.spans import Span, as_text, flatten, parse_time

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def otlp_id(value: Any) -> str | None:
    """A trace/span id as lower-case hex: hex text as is, base64 (protobuf JSON) decoded;
    empty and all-zero ids (OTLP's "no parent") are None."""
    text = as_text(value)
    if text is None:
        return None
    if not (len(text) in (16, 32) and _HEX.match(text)):
        try:
            text = base64.b64decode(text, validate=True).hex()
        except (binascii.Error, ValueError):
            return text
    text = text.lower()
    return None if not text.strip("0") else text


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (JSON encoding) as a plain Python value."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv.get("key"): any_value(kv.get("value")) for kv in (value["kvlistValue"] or {}).get("values", [])}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items or []:
        if isinstance(kv, dict) and kv.get("key") is not None:
            value = any_value(kv.get("value"))
            if isinstance(value, dict):  # a kvlist value: nested keys under the attribute's name
                flatten(value, str(kv["key"]), out)
            else:
                out[str(kv["key"])] = value
    return out


def _status(raw: Any) -> str | None:
    code = (raw or {}).get("code") if isinstance(raw, dict) else None
    if code in (2, "STATUS_CODE_ERROR", "ERROR"):
        return "ERROR"
    if code in (1, "STATUS_CODE_OK", "OK"):
        return "OK"
    return "UNSET" if code is not None else None


def otlp_spans(request: dict[str, Any]) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` (JSON encoding)."""
    for resource_spans in request.get("resourceSpans") or request.get("resource_spans") or []:
        resource = _attributes(((resource_spans or {}).get("resource") or {}).get("attributes"))
        scopes = resource_spans.get("scopeSpans") or resource_spans.get("scope_spans") \
            or resource_spans.get("instrumentationLibrarySpans") or []
        for scope in scopes:
            for raw in (scope or {}).get("spans") or []:
                attributes = _attributes(raw.get("attributes"))
                for key, value in resource.items():  # session / user ids may sit on the resource
                    attributes.setdefault(f"resource.{key}", value)
                kind = raw.get("kind")
                yield Span(
                    trace_id=otlp_id(raw.get("traceId") or raw.get("trace_id")) or "",
                    span_id=otlp_id(raw.get("spanId") or raw.get("span_id")) or "",
                    parent_id=otlp_id(raw.get("parentSpanId") or raw.get("parent_span_id")),
                    name=str(raw.get("name") or ""),
                    kind=str(attributes.get("openinference.span.kind") or _KINDS.get(kind, str(kind or "UNKNOWN"))),
                    start=parse_time(raw.get("startTimeUnixNano") or raw.get("start_time_unix_nano")),
                    end=parse_time(raw.get("endTimeUnixNano") or raw.get("end_time_unix_nano")),
                    attributes=attributes,
                    status_code=_status(raw.get("status")),
                    dropped_attributes=int(raw.get("droppedAttributesCount") or 0),
                )


def read_otlp_file(path: str | Path, problems: list[RowError]) -> Iterator[Span]:
    """Every span of an OTLP JSON file, line by line; unreadable lines go to ``problems``."""
    path = Path(path)
    name = str(path)
    with path.open("rb") as fh:
        first = fh.readline()
        rest_is_one_document = first.strip() in (b"{", b"[")
    if rest_is_one_document:  # a pretty-printed single request
        try:
            whole = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            message = json_problem(err) if isinstance(err, json.JSONDecodeError) else f"not UTF-8 ({err})"
            problems.append(RowError(name, 1, None, message))
            return
        for request in whole if isinstance(whole, list) else [whole]:
            yield from otlp_spans(request if isinstance(request, dict) else {})
        return
    with path.open("rb") as fh:
        for lineno, data in enumerate(fh, start=1):
            if not data.strip():
                continue
            try:
                request = json.loads(data.decode("utf-8"))
            except UnicodeDecodeError as err:
                problems.append(RowError(name, lineno, None, f"not UTF-8 (byte {err.start})"))
                continue
            except json.JSONDecodeError as err:
                problems.append(RowError(name, lineno, None, json_problem(err)))
                continue
            if not isinstance(request, dict) or not ("resourceSpans" in request or "resource_spans" in request):
                problems.append(RowError(name, lineno, None, "not an ExportTraceServiceRequest (no resourceSpans)"))
                continue
            yield from otlp_spans(request)


# -- Phoenix's spans dataframe (REST rows share the shape) -------------------------------------
def phoenix_span(record: dict[str, Any]) -> Span | None:
    """A span from a Phoenix spans-dataframe row (flat ``context.*`` / ``attributes.*`` columns)
    or from Phoenix's REST API (nested ``context`` and ``attributes``). None without ids."""
    raw_context = record.get("context")
    context: dict[str, Any] = raw_context if isinstance(raw_context, dict) else {}
    trace_id = as_text(context.get("trace_id") or record.get("context.trace_id"))
    span_id = as_text(context.get("span_id") or record.get("context.span_id"))
    if not trace_id or not span_id:
        return None
    attributes: dict[str, Any] = {}
    nested = record.get("attributes")
    if isinstance(nested, dict):
        if any(isinstance(v, (dict, list, tuple)) for v in nested.values()):
            flatten(nested, "", attributes)
        else:  # already flat (Phoenix's REST API flattens them): no walk
            attributes.update(nested)
    for key, value in record.items():
        if key.startswith("attributes.") and value is not None:
            if isinstance(value, float) and value != value:  # NaN: the column is empty in this row
                continue
            flatten(value, key[len("attributes."):], attributes) if isinstance(value, (dict, list)) \
                else attributes.__setitem__(key[len("attributes."):], value)
    kind = as_text(record.get("span_kind")) or as_text(attributes.get("openinference.span.kind")) or "UNKNOWN"
    return Span(trace_id=trace_id.lower(), span_id=span_id.lower(),
                parent_id=(as_text(record.get("parent_id")) or None), name=as_text(record.get("name")) or "",
                kind=kind.upper(), start=parse_time(record.get("start_time")), end=parse_time(record.get("end_time")),
                attributes=attributes, status_code=as_text(record.get("status_code")))


def read_parquet_file(path: str | Path, problems: list[RowError]) -> Iterator[Span]:
    """Every span of a Phoenix spans parquet export, in record batches."""
    import pyarrow.parquet as pq

    name = str(path)
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=1024)
    except Exception as err:  # pyarrow raises several types for a file that is not parquet
        problems.append(RowError(name, 0, None, f"not a readable Parquet file ({err})"))
        return
    number = 0
    for batch in batches:
        for record in batch.to_pylist():
            number += 1
            span = phoenix_span(record)
            if span is None:
                problems.append(RowError(name, number, None, "row has no context.trace_id / context.span_id"))
            else:
                yield span


def read_trace_file(path: str | Path, problems: list[RowError]) -> Iterator[Span]:
    """Spans of an OTLP JSON (``.json``/``.jsonl``) or Phoenix parquet (``.parquet``) file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix.lower() == ".parquet":
        return read_parquet_file(path, problems)
    return read_otlp_file(path, problems)
