"""Edge-case decisions shared by the metric functions, made once here.

Like rouge's ``fmeasure`` and ranx's zero-division rules, every ratio with an empty
denominator has one documented value instead of an exception or a NaN:

- a ratio with denominator 0 is 0.0 (nothing retrieved, nothing relevant);
- F1 of precision 0 and recall 0 is 0.0;
- ``k`` must be a positive integer; ``k`` larger than the list simply looks at the
  whole list (the precision denominator still follows its documented choice);
- a stored value that is not a finite real number (None, NaN, inf, text) is missing
  (:func:`finite_number`). It lives here, with no numpy, because the command line's
  display helpers read it and ``rag-eval --help`` must not load numpy
  (``tests/cli/test_startup.py``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

PRECISION_DENOMINATORS = ("k", "retrieved")


def safe_div(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is 0."""
    return numerator / denominator if denominator else 0.0


def f1(precision: float, recall: float) -> float:
    """Harmonic mean; 0.0 when both are 0."""
    return safe_div(2.0 * precision * recall, precision + recall)


def check_k(k: Any, name: str = "k") -> int:
    """``k`` as an int, or ValueError naming it (bools and floats like 2.5 are refused)."""
    if isinstance(k, bool) or not isinstance(k, int) and not (isinstance(k, float) and k.is_integer()):
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    return int(k)


def check_unit_interval(value: Any, name: str) -> float:
    """A float in [0, 1], or ValueError naming the parameter."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return number


def check_denominator(denominator: str) -> str:
    if denominator not in PRECISION_DENOMINATORS:
        raise ValueError(f"precision denominator must be one of {', '.join(PRECISION_DENOMINATORS)}; got {denominator!r}")
    return denominator


def unique_ranked(retrieved: Sequence[Any], name: str = "retrieved") -> list[str]:
    """Retrieved ids as strings in rank order, keeping the first occurrence of a repeat
    (a document retrieved twice is one document, so precision never exceeds 1)."""
    if isinstance(retrieved, (str, bytes)) or not isinstance(retrieved, Sequence):
        raise ValueError(f"{name} must be a sequence of ids in rank order, got {type(retrieved).__name__}")
    return list(dict.fromkeys(str(doc) for doc in retrieved))


def relevance_grades(relevant: Collection[Any] | Mapping[Any, float], name: str = "relevant") -> dict[str, float]:
    """Ground truth as ``{doc_id: grade}``. A plain collection means grade 1 for each.
    Grades <= 0 are judged non-relevant (TREC convention) and kept only for nDCG's
    ideal ordering, where they contribute nothing."""
    if isinstance(relevant, (str, bytes)):
        raise ValueError(f"{name} must be a collection of ids or a mapping id -> grade, got a string")
    if isinstance(relevant, Mapping):
        grades: dict[str, float] = {}
        for doc, grade in relevant.items():
            if isinstance(grade, bool) or not isinstance(grade, (int, float)) or math.isnan(grade):
                raise ValueError(f"{name}[{doc!r}] must be a number, got {grade!r}")
            grades[str(doc)] = float(grade)
        return grades
    if not isinstance(relevant, Collection):
        raise ValueError(f"{name} must be a collection of ids or a mapping id -> grade, got {type(relevant).__name__}")
    return {str(doc): 1.0 for doc in relevant}


def relevant_set(relevant: Collection[Any] | Mapping[Any, float], name: str = "relevant") -> set[str]:
    """The ids judged relevant (grade > 0)."""
    return {doc for doc, grade in relevance_grades(relevant, name).items() if grade > 0}


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a real number (booleans count as 0/1); None for
    None, NaN, inf and non-numbers."""
    if isinstance(value, bool):
        value = float(value)
    return float(value) if isinstance(value, numbers.Real) and math.isfinite(value) else None


def finite(values: Iterable[Any]) -> list[float]:
    """The values that are real numbers (see :func:`finite_number`), the others dropped."""
    return [x for v in values if (x := finite_number(v)) is not None]
