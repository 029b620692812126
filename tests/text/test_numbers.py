"""One rule for how a number reads (issue 33): three significant digits, percentages for
shares, units for times and costs; what Compare, the tables and the report show."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rag_eval.text.numbers import format_number, significant, unit_of


@pytest.mark.parametrize(("value", "text"), [
    (0.20328733617171293, "0.203"), (0.552313478000077, "0.552"), (0.0512345, "0.0512"), (0.5, "0.500"),
    (1.0, "1.00"), (12.345, "12.3"), (1234.5, "1,230"), (0.9996, "1.00"), (99.96, "100"), (0.0, "0"),
])
def test_three_significant_digits(value, text):
    assert significant(value) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (0.20328733617171293, None, "0.203"), (20, None, "20"), (np.int64(1204), None, "1,204"),
    (np.float64(0.25), None, "0.250"), (-0.1875, None, "-0.188"),
    (1.0, "share", "100%"), (0.9512, "share", "95.1%"), (0.005, "share", "0.500%"), (0, "share", "0%"),
    (0.552313478000077, "seconds", "0.552 s"), (27.08, "seconds", "27.1 s"), (750.0, "seconds", "12.5 min"),
    (0.00123456, "usd", "$0.00123"), (1.2345, "usd", "$1.23"), (0.0, "usd", "$0"),
    (None, None, "—"), (math.nan, "share", "—"), (True, None, "yes"), ("n/a", None, "n/a"),
])
def test_format_number(value, unit, text):
    assert format_number(value, unit) == text


def test_a_signed_difference_keeps_its_sign():
    assert format_number(-0.1875, signed=True) == "−0.188"
    assert format_number(0.152, signed=True) == "+0.152"
    assert format_number(0.0, signed=True) == "0.00"
    assert [format_number(v) for v in (0.0, -0.189)] == ["0.00", "-0.189"]  # one column, the same precision
    assert format_number(0) == "0"  # a count


@pytest.mark.parametrize(("column", "unit"), [
    ("coverage", "share"), ("latency_p50_s", "seconds"), ("latency_s", "seconds"), ("cost_usd", "usd"),
    ("cost_usd_total", "usd"), ("mean", None), ("ci_low", None), ("tokens", None),
])
def test_unit_of_a_column(column, unit):
    assert unit_of(column) == unit
