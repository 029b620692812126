"""Ground-truth and predicted scores read from a row's columns, and the error that names a
bad one: what ``rag-eval score``, ``rag-eval agreement``, the rows source and the RAG source
(gold truth carried into a record) all read the same way. A module of its own below them, so
preparing a row does not import the scoring of files (an import cycle)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.schema import RAGBENCH_TRUTH_COLUMNS

_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


def truth_number(value: Any, name: str, bounded: bool = True) -> float | None:
    """A score as a float (in [0, 1] when ``bounded``: ground truth always is, while a
    legacy-mode utilization may exceed 1); None when absent or empty. CSV cells arrive
    as text, so "0.25", "True" and "false" are accepted."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if not text or text in ("nan", "null", "none"):
            return None
        if text in _TRUE or text in _FALSE:
            return 1.0 if text in _TRUE else 0.0
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"expected a number in [0, 1] or true/false, got {value!r}") from None
    if not isinstance(value, (int, float)):
        raise ValueError(f"expected a number in [0, 1] or true/false, got {describe_value(value)}")
    number = float(value)
    if math.isnan(number):
        return None
    if bounded and not 0.0 <= number <= 1.0:
        raise ValueError(f"expected a number in [0, 1], got {number}")
    return number


class FieldValueError(ValueError):
    """A bad value in a named field of a row."""

    def __init__(self, field_name: str | None, message: str):
        super().__init__(f"field '{field_name}': {message}")
        self.field = field_name
        self.message = message


def values_of(row: Mapping[str, Any], columns: Mapping[str, Sequence[str]], bounded: bool = True) -> dict[str, float | None]:
    """``{metric: value}`` taking each metric from the first of its columns present.
    Raises :class:`FieldValueError` for a bad value."""
    out: dict[str, float | None] = {}
    for metric, names in columns.items():
        name = next((n for n in names if row.get(n) is not None), None)
        try:
            out[metric] = None if name is None else truth_number(row[name], name, bounded)
        except ValueError as err:
            raise FieldValueError(str(name), str(err)) from None
    return out


def truth_of(row: Mapping[str, Any]) -> dict[str, float | None] | None:
    """The row's RAGBench ground-truth scores (None when it has none); raises
    :class:`FieldValueError` naming the column when one cannot be read."""
    truth = values_of(row, {m: (RAGBENCH_TRUTH_COLUMNS[m],) for m in TRACE_METRICS})
    return truth if any(v is not None for v in truth.values()) else None


# A RAGBench row's truth: its own columns; a scored file used as truth: metric names.
TRUTH_COLUMNS = {m: (m, RAGBENCH_TRUTH_COLUMNS[m]) for m in TRACE_METRICS}
PREDICTION_COLUMNS = {**TRUTH_COLUMNS, "adherence_score": ("adherence_score", "adherence")}


def describe_value(value: Any) -> str:
    """A bad value for a message: its type and the start of its repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"
