"""How a number reads, wherever a person reads it: the dashboard's pages and tables, the
HTML report. One rule, so a statistic does not read 0.20328733617171293 on one page, 0.2033
on another and 0.203 in the report, and coverage is not "1" here and "100%" there:

- a score, statistic or difference: three significant digits, never scientific notation
  (0.203, 0.0512, 12.3, 1,230, and 0.00 for zero); an integer as it is (20, 1,204);
- a share (coverage, a rate): a percentage with up to three significant digits (100%, 95.1%, 0.5%);
- a time: seconds with the unit (0.552 s, 27.1 s), minutes past ten minutes (12.5 min);
- a cost: US dollars with the unit, three significant digits ($0.00123, $1.23, $0);
- nothing (undefined, failed, not measured): an em dash; a yes/no: yes or no.

Pure (no I/O, no presentation library): the dashboard (``rag_eval.ui``) and the report
(``rag_eval.report``) both call :func:`format_number`; :func:`unit_of` names the unit of a
table column by the project's column names (``coverage``, ``latency_p50_s``, ``cost_usd``).
"""

from __future__ import annotations

import math
from typing import Literal

Unit = Literal["share", "seconds", "usd"]
SIGNIFICANT = 3
MISSING = "—"
MINUS = "−"  # a minus sign, not a hyphen, as a signed difference is printed
#: A score or difference of exactly zero, with three significant digits like its neighbours in
#: a column ("0.00" beside "-0.189", where "0" read as a count or a missing decimal part).
ZERO = "0.00"


def significant(value: float, digits: int = SIGNIFICANT) -> str:
    """``value`` to ``digits`` significant digits in positional notation, thousands grouped
    (0.203, 0.0512, 1.00, 12.3, 1,230); zero is ``0``."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > magnitude:  # 0.9996 -> 1.00, not 1.000
        decimals = max(0, decimals - 1)
    if decimals == 0:
        whole = round(value, digits - 1 - magnitude) if magnitude >= digits else round(value)
        return f"{int(whole):,}"
    return f"{value:,.{decimals}f}"


def format_number(value: object, unit: Unit | None = None, *, signed: bool = False) -> str:
    """``value`` as a person reads it (see the module docstring). ``unit``: ``share`` (a
    fraction shown as a percentage), ``seconds`` or ``usd``; ``signed``: a difference, with
    ``+`` or ``−`` in front. Text is returned as it is; None and NaN are an em dash."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    try:
        number = float(value)  # type: ignore[arg-type]  # numpy scalars, Decimal
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return MISSING
    if math.isinf(number):
        return ("−∞" if number < 0 else "∞")
    sign = ("+" if number > 0 else MINUS if number < 0 else "") if signed else ("-" if number < 0 else "")
    size = abs(number)
    is_integer = not isinstance(value, float) and float(number).is_integer()
    if unit == "share":
        return f"{sign}{significant(size * 100)}%"
    if unit == "usd":
        return f"{sign}${significant(size)}"
    if unit == "seconds":
        if size >= 600:
            return f"{sign}{significant(size / 60)} min"
        return f"{sign}{significant(size)} s"
    if is_integer:
        return f"{sign}{int(size):,}"
    return sign + (significant(size) if size else ZERO)


def unit_of(column: str) -> Unit | None:
    """The unit of a table column by its name: ``coverage`` and ``*_rate`` are shares;
    ``*_s`` and ``latency*`` seconds; ``cost*`` and ``*_usd`` dollars; anything else none."""
    name = column.lower()
    if name == "coverage" or name.endswith(("_coverage", "_rate", "_share")):
        return "share"
    if name.startswith("latency") or name.endswith("_s"):
        return "seconds"
    if name.startswith("cost") or name.endswith(("_usd", "_usd_total")):
        return "usd"
    return None
