"""The CI gate: thresholds on means or interval lower bounds, failures, coverage, JUnit."""

import xml.etree.ElementTree as ET

import pytest

from rag_eval.metrics.gate import (
    MetricStat,
    RowCase,
    Threshold,
    check_directions,
    evaluate_gate,
    junit_suite,
    parse_thresholds,
    row_failures,
    stats_from_rows,
)


def test_parse_thresholds():
    assert parse_thresholds("context_relevance=0.4, adherence=0.9") == [
        Threshold("context_relevance", 0.4), Threshold("adherence", 0.9)]
    assert parse_thresholds(["a=0.1", "a=0.2,b=1"]) == [Threshold("a", 0.2), Threshold("b", 1.0)]
    assert parse_thresholds(None) == [] and parse_thresholds("") == []
    for bad in ("adherence", "=0.3", "adherence=high", "x=nan"):
        with pytest.raises(ValueError):
            parse_thresholds(bad)


def test_stats_from_rows_leave_failures_out():
    rows = [{"m": 0.2}, {"m": 0.4}, None, {"m": None}, {"m": 0.6}]
    s = stats_from_rows(rows, ["m", "absent"], n_boot=200)
    assert s["m"].mean == pytest.approx(0.4) and s["m"].n == 3
    assert 0.2 <= s["m"].ci_low <= 0.4 <= s["m"].ci_high <= 0.6
    assert s["absent"].mean is None and s["absent"].n == 0
    one = stats_from_rows([{"m": 0.7}], ["m"])["m"]
    assert (one.ci_low, one.ci_high) == (0.7, 0.7)


STATS = {"context_relevance": MetricStat(0.5, 0.35, 0.62, 40), "adherence": MetricStat(0.95, 0.9, 1.0, 40)}


def test_mean_passes_but_lower_bound_fails():
    thresholds = parse_thresholds("context_relevance=0.4,adherence=0.9")
    by_mean = evaluate_gate(STATS, thresholds, rows_given=40, rows_usable=40)
    assert by_mean.passed and [c.observed for c in by_mean.checks[:2]] == [0.5, 0.95]
    by_lower = evaluate_gate(STATS, thresholds, rows_given=40, rows_usable=40, basis="lower")
    assert not by_lower.passed
    assert [c.metric for c in by_lower.failures] == ["context_relevance"]
    table = "\n".join(by_lower.table())
    assert "FAIL: 0.3500 < 0.4" in table and "gate FAILED (1 of 3 checks)" in table and "lower bound" in table


def test_unknown_metric_and_missing_value_fail_with_a_reason():
    r = evaluate_gate({"a": MetricStat(None)}, [Threshold("a", 0.1), Threshold("typo", 0.1)], rows_given=2, rows_usable=0)
    reasons = [c.message for c in r.failures]
    assert "no scored row has it" in reasons[0] and "no metric 'typo' (known: a)" in reasons[1]
    assert "2 of 2 row(s) failed" in reasons[2]


def test_failures_fail_unless_coverage_is_enough():
    assert not evaluate_gate(STATS, [], rows_given=40, rows_usable=39).passed
    assert evaluate_gate(STATS, [], rows_given=40, rows_usable=39, min_coverage=0.95).passed
    low = evaluate_gate(STATS, [], rows_given=40, rows_usable=37, min_coverage=0.95)
    assert not low.passed and low.checks[-1].message == "37/40 rows usable"
    assert not evaluate_gate({}, [], rows_given=0, rows_usable=0).passed
    with pytest.raises(ValueError):
        evaluate_gate(STATS, [], rows_given=1, rows_usable=1, basis="median")


def test_junit_one_case_per_check_and_per_row(tmp_path):
    thresholds = parse_thresholds("context_relevance=0.4,adherence=0.9")
    result = evaluate_gate(STATS, thresholds, rows_given=3, rows_usable=2, basis="lower", min_coverage=0.5)
    rows = [RowCase("q1", "ok", True, {"context_relevance": 0.8, "adherence": 1.0}),
            RowCase("q2", "ok", True, {"context_relevance": 0.1, "adherence": 1.0}),
            RowCase("q3", "timeout", False, error="60 s")]
    assert row_failures(rows[1], thresholds) == ["context_relevance 0.1000 < 0.4"]
    path = tmp_path / "gate.xml"
    junit_suite(result, rows, thresholds).write(str(path))
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert [len(s.findall("testcase")) for s in suites] == [3, 3]
    gate_cases = {c.get("name"): c.find("failure") for c in suites[0].findall("testcase")}
    assert gate_cases["context_relevance >= 0.4"] is not None and gate_cases["adherence >= 0.9"] is None
    assert gate_cases["coverage >= 0.5"] is None
    row_cases = {c.get("name"): c.find("failure") for c in suites[1].findall("testcase")}
    assert row_cases["q1"] is None and "status timeout: 60 s" in row_cases["q3"].get("message")
    assert suites[0].get("failures") == "1"


def test_an_upper_limit_for_a_metric_where_lower_is_better():
    stats = {"latency": MetricStat(2.0, 1.5, 2.5, 10), "adherence": MetricStat(0.9, 0.85, 0.95, 10)}
    limits = parse_thresholds("latency=2.2", at_most=True)
    assert limits == [Threshold("latency", 2.2, at_most=True)]
    assert evaluate_gate(stats, limits, rows_given=10, rows_usable=10).passed
    strict = evaluate_gate(stats, limits, rows_given=10, rows_usable=10, basis="lower")  # the interval's upper end
    assert not strict.passed and strict.checks[0].name == "latency <= 2.2" and strict.checks[0].observed == 2.5
    case = RowCase("r1", "ok", True, {"latency": 3.0})
    assert row_failures(case, limits) == ["latency 3.0000 > 2.2"]


def test_a_limit_on_the_wrong_side_of_a_registered_metric_is_refused():
    with pytest.raises(ValueError, match="higher is better.*--fail-under"):
        check_directions(parse_thresholds("adherence=0.9", at_most=True))
    check_directions(parse_thresholds("adherence=0.9"))  # the right side
    check_directions(parse_thresholds("not_registered=1", at_most=True))  # the gate names unknown metrics
