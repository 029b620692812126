import pytest

from rag_eval.text.keys import (
    document_key,
    letters,
    letters_index,
    normalize_key,
    parse_document_key,
    response_key,
)


@pytest.mark.parametrize("index,expected", [(0, "a"), (25, "z"), (26, "aa"), (27, "ab"), (51, "az"), (52, "ba"), (701, "zz"), (702, "aaa")])
def test_letters_is_bijective_base26(index, expected):
    assert letters(index) == expected
    assert letters_index(expected) == index


def test_keys_round_trip_for_many_indices():
    assert [letters_index(letters(i)) for i in range(2000)] == list(range(2000))


def test_document_and_response_keys():
    assert document_key(0, 0) == "0a"
    assert document_key(3, 26) == "3aa"
    assert response_key(1) == "b"
    assert parse_document_key("12ab").doc_index == 12
    assert parse_document_key("12ab").sentence_index == 27
    assert parse_document_key("ab") is None


@pytest.mark.parametrize("raw,expected", [(" 0B. ", "0b"), ("'1c'", "1c"), ("A", "a"), ("[2d]", "2d"), ("0 a", "0a")])
def test_normalize_key_tolerates_judge_output(raw, expected):
    assert normalize_key(raw) == expected


def test_letters_rejects_negative():
    with pytest.raises(ValueError):
        letters(-1)
