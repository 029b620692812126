"""Parsing judge output: extraction, schema, key validation (pure, no HTTP)."""

from __future__ import annotations

import json

import pytest

from rag_eval.judges.parsing import (
    ParsedTrace,
    ParseProblem,
    find_json,
    iter_balanced_objects,
    looks_like_refusal,
    looks_truncated,
    parse_trace,
    strip_code_fences,
)
from rag_eval.text.sentences import item_from_texts

ITEM = item_from_texts("1", "What is X?", ["X is a cat. It purrs.", "Dogs bark."], "X is a cat. It is blue.")


def good(**over) -> dict:
    d = {
        "relevance_explanation": "0a answers",
        "all_relevant_sentence_keys": ["0a"],
        "overall_supported_explanation": "b is not supported",
        "overall_supported": False,
        "sentence_support_information": [
            {"response_sentence_key": "a", "explanation": "", "supporting_sentence_keys": ["0a"], "fully_supported": True},
            {"response_sentence_key": "b", "explanation": "", "supporting_sentence_keys": [], "fully_supported": False},
        ],
        "all_utilized_sentence_keys": ["0a"],
    }
    d.update(over)
    return d


@pytest.mark.parametrize(
    ("text", "value", "how"),
    [
        ('{"a": 1}', {"a": 1}, "json"),
        ('  {"a": 1}\n', {"a": 1}, "json"),
        ('```json\n{"a": 1}\n```', {"a": 1}, "fenced"),
        ('```\n{"a": 1}\n```', {"a": 1}, "fenced"),
        ('Sure, here it is:\n```JSON\n{"a": "x}{y"}\n```\nHope it helps', {"a": "x}{y"}, "fenced"),
        ('Here you go: {"a": {"b": [1, 2]}} -- done', {"a": {"b": [1, 2]}}, "prose"),
        ('{not json} then {"a": 2}', {"a": 2}, "prose"),
        ('{"a": "quote \\" and brace }"}', {"a": 'quote " and brace }'}, "json"),
        ("[1, 2]", None, "none"),
        ("no json here", None, "none"),
        ("", None, "none"),
        ('{"a": [1, 2', None, "none"),
    ],
)
def test_find_json(text, value, how):
    found = find_json(text)
    assert found.value == value and found.how == how


def test_balanced_objects_and_fences():
    assert list(iter_balanced_objects('x {"a": {}} y {"b": 1}')) == ['{"a": {}}', '{"b": 1}']
    assert strip_code_fences("no fences") == "no fences"
    assert looks_truncated('{"a": [1,') and not looks_truncated('{"a": 1}') and not looks_truncated("text")
    assert looks_like_refusal("I'm sorry, but I can't help with that.")
    assert not looks_like_refusal('Sorry for the wait: {"a": 1}')


def test_valid_output_gives_labels():
    parsed = parse_trace(json.dumps(good()), ITEM)
    assert isinstance(parsed, ParsedTrace) and not parsed.repaired
    labels = parsed.labels
    assert labels.all_relevant_sentence_keys == ["0a"]
    assert labels.unsupported_response_sentence_keys == ["b"]
    assert labels.overall_supported is False
    assert [s.response_sentence_key for s in labels.sentence_support_information] == ["a", "b"]


def test_keys_are_normalised_and_hallucinated_ones_dropped_with_reasons():
    out = good(all_relevant_sentence_keys=["0A", " [0b] ", "7z", "well_known_fact", "0a"],
               all_utilized_sentence_keys=["0a", "b"])
    out["sentence_support_information"][0]["supporting_sentence_keys"] = ["0a", "general", "9q"]
    parsed = parse_trace(json.dumps(out), ITEM)
    assert isinstance(parsed, ParsedTrace) and parsed.repaired
    assert parsed.labels.all_relevant_sentence_keys == ["0a", "0b"]
    assert parsed.labels.sentence_support_information[0].supporting_sentence_keys == ["0a", "general"]
    reasons = {(d["key"], d["reason"]) for d in parsed.dropped}
    assert ("7z", "unknown_key") in reasons
    assert ("well_known_fact", "special_token_not_allowed_here") in reasons
    assert ("b", "unknown_key") in reasons  # a response key among document keys
    assert ("9q", "unknown_key") in reasons


def test_unknown_and_duplicate_response_entries_are_dropped():
    out = good()
    out["sentence_support_information"].append(dict(out["sentence_support_information"][0]))
    out["sentence_support_information"].append({"response_sentence_key": "z", "fully_supported": True})
    parsed = parse_trace(json.dumps(out), ITEM)
    assert {d["reason"] for d in parsed.dropped} == {"duplicate_entry", "unknown_response_key"}
    assert len(parsed.labels.sentence_support_information) == 2


def test_missing_response_sentence_counts_as_unsupported():
    out = good(overall_supported=True)
    out["sentence_support_information"] = out["sentence_support_information"][:1]
    parsed = parse_trace(json.dumps(out), ITEM)
    assert parsed.missing_response_keys == ["b"] and parsed.repaired
    assert parsed.labels.unsupported_response_sentence_keys == ["b"]


def test_missing_optional_fields_are_derived():
    out = good()
    del out["overall_supported"], out["all_utilized_sentence_keys"]
    parsed = parse_trace(json.dumps(out), ITEM)
    assert parsed.derived == ["all_utilized_sentence_keys", "overall_supported"]
    assert parsed.labels.overall_supported is False and parsed.labels.all_utilized_sentence_keys == ["0a"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (json.dumps({"answer": "yes"}), "schema"),
        (json.dumps(good(sentence_support_information="all good")), "schema"),
        (json.dumps(good(overall_supported="perhaps")), "schema"),
        ("The response looks supported.", "no_json"),
        ('{"all_relevant_sentence_keys": ["0a"], "sentence_', "truncated"),
        ("I'm sorry, I cannot help with that request.", "refusal"),
    ],
)
def test_problems_are_classified(text, kind):
    problem = parse_trace(text, ITEM)
    assert isinstance(problem, ParseProblem) and problem.kind == kind and problem.message


def test_lenient_types_are_coerced():
    out = good(all_relevant_sentence_keys="0a")
    out["sentence_support_information"][0]["fully_supported"] = "true"
    parsed = parse_trace(json.dumps(out), ITEM)
    assert isinstance(parsed, ParsedTrace)
    assert parsed.labels.all_relevant_sentence_keys == ["0a"]
    assert parsed.labels.sentence_support_information[0].fully_supported is True


def test_reasoning_blocks_are_ignored():
    text = '<think>maybe {"all_relevant_sentence_keys": ["0b"]} ... </think>\n' + json.dumps(good())
    parsed = parse_trace(text, ITEM)
    assert isinstance(parsed, ParsedTrace) and parsed.labels.all_relevant_sentence_keys == ["0a"]
    assert find_json("<think>unfinished {").value is None


def test_first_object_that_fits_the_schema_wins():
    text = 'An entry looks like {"response_sentence_key": "a", "fully_supported": true}. My answer:\n' + json.dumps(good())
    parsed = parse_trace(text, ITEM)
    assert isinstance(parsed, ParsedTrace) and parsed.how == "prose"
    problem = parse_trace('{"x": 1} and {"y": 2}', ITEM)
    assert isinstance(problem, ParseProblem) and problem.kind == "schema"


@pytest.mark.parametrize(("supporting", "overall", "expected"), [(["0a"], True, True), ([], True, False),
                                                                  (["0a"], False, False)])
def test_null_fully_supported_is_inferred_and_recorded(supporting, overall, expected):
    out = good(overall_supported=overall)
    out["sentence_support_information"][0].update(fully_supported=None, supporting_sentence_keys=supporting)
    parsed = parse_trace(json.dumps(out), ITEM)
    assert parsed.labels.sentence_support_information[0].fully_supported is expected
    assert parsed.derived == ["sentence_support_information[a].fully_supported"] and parsed.repaired
