"""Malformed files: each problem gives a clear issue naming file, row and field; no
crash, and the good rows still load."""

import json

import pytest

from rag_eval.datasets.io import load_dataset, validate_file
from rag_eval.datasets.validate import Severity, check_sentence_keys, summarize_issues


def _jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_bad_json_line_is_reported_and_good_rows_load(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", [{"id": "1", "question": "a?"}, '{"id": "2", "question": ', {"id": "3", "question": "c?"}])
    result = load_dataset(path)
    assert [r.id for r in result.rows] == ["1", "3"]
    (issue,) = result.issues
    assert issue.row == 2 and "invalid JSON" in issue.message and str(path) in str(issue)


def test_missing_question_column_in_csv(tmp_path):
    """A file without the column is one file-level issue naming it and the columns found,
    not 'missing question' on every row; a column present in some rows stays per row."""
    path = tmp_path / "d.csv"
    path.write_text("id,answer\n1,x\n2,y\n", encoding="utf-8")
    issues = validate_file(path)
    assert [(i.row, i.field, i.message) for i in issues] == [(0, None, "missing column 'question'; found: id, answer")]
    some = _jsonl(tmp_path / "some.jsonl", [{"id": "1", "question": "q?"}, {"id": "2"}])
    assert [(i.row, i.message) for i in validate_file(some)] == [(2, "missing question")]


def test_wrong_types_name_the_field_and_the_value(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", [
        {"id": "1", "question": "q", "documents": "one text, not a list"},
        {"id": "2", "question": "q", "gold_pointers": [{"source": "a", "start": "x"}]},
        {"id": "3", "question": ["not", "text"]},
        {"id": "4", "question": "fine"},
    ])
    result = load_dataset(path)
    assert [r.id for r in result.rows] == ["4"]
    by_row = {i.row: str(i) for i in result.issues}
    assert "field 'documents'" in by_row[1] and "got str" in by_row[1]
    assert "field 'gold_pointers[0].start'" in by_row[2]
    assert "field 'question'" in by_row[3] and "got list" in by_row[3]


@pytest.mark.parametrize("name,content", [("empty.jsonl", ""), ("empty.csv", ""), ("blank.jsonl", "\n\n"),
                                          ("header-only.csv", "id,question\n")])
def test_empty_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    (issue,) = validate_file(path)
    assert issue.severity is Severity.ERROR and "no rows" in issue.message and issue.row == 0


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("id,question\n1,Qu'est-ce que ç'est?\n".encode("latin-1"))
    (issue,) = validate_file(path)
    assert "not valid UTF-8" in issue.message and "line 2" in issue.message and str(path) in str(issue)


def test_missing_file_and_unknown_type(tmp_path):
    assert "no such file" in validate_file(tmp_path / "nope.jsonl")[0].message
    assert "unsupported file type" in validate_file(tmp_path / "x.txt")[0].message


def test_duplicate_ids_and_missing_ids(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "question": "q"}, {"question": "no id"}, {"id": "a", "question": "q2"}])
    result = load_dataset(path)
    assert [r.id for r in result.rows] == ["a", "row-2", "a"]  # nothing dropped
    assert [(i.row, i.severity.value, i.message) for i in result.issues] == [
        (2, "warning", "no id; using 'row-2'"), (3, "error", "duplicate id 'a' (first at row 1)")]


def test_empty_contexts(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", [
        {"id": "1", "question": "q", "documents": [], "response": "r"},
        {"id": "2", "question": "q", "gold_contexts": ["ok", "  "]},
        {"id": "3", "question": "q", "response": "an answer"},
    ])
    issues = load_dataset(path).issues
    assert [(i.row, i.field, i.severity.value) for i in issues] == [
        (1, "documents", "error"), (2, "gold_contexts[1]", "error"), (3, "documents", "warning")]
    assert "empty contexts" in issues[0].message


def test_unknown_sentence_keys_are_warnings(ragbench_rows, tmp_path):
    row = dict(ragbench_rows[0])
    row["all_relevant_sentence_keys"] = ["0c", "9z", "0D."]  # '0D.' normalises to a real key
    row["unsupported_response_sentence_keys"] = ["zz"]
    row["sentence_support_information"] = [{"response_sentence_key": "q", "supporting_sentence_keys": ["general", "7a"]}]
    found = {(f, m) for f, m, s in check_sentence_keys(row)}
    assert found == {
        ("all_relevant_sentence_keys", "unknown sentence keys: 9z"),
        ("sentence_support_information[0].supporting_sentence_keys", "unknown sentence keys: 7a"),
        ("unsupported_response_sentence_keys", "unknown response sentence keys: zz"),
        ("sentence_support_information[0].response_sentence_key", "unknown response sentence key: q"),
    }
    issues = load_dataset(_jsonl(tmp_path / "d.jsonl", [row])).issues
    assert summarize_issues(issues) == {"error": 0, "warning": 4}


def test_committed_ragbench_rows_are_clean(ragbench_rows, tmp_path):
    assert load_dataset(_jsonl(tmp_path / "rb.jsonl", ragbench_rows)).issues == []


def test_unknown_keys_checked_against_split_text_when_not_pre_split():
    row = {"id": "1", "question": "q", "documents": ["First sentence. Second sentence."], "response": "Yes. No.",
           "all_relevant_sentence_keys": ["0a", "0b", "0c"], "unsupported_response_sentence_keys": ["b", "c"]}
    found = {(f, m) for f, m, s in check_sentence_keys(row)}
    assert found == {("all_relevant_sentence_keys", "unknown sentence keys: 0c"),
                     ("unsupported_response_sentence_keys", "unknown response sentence keys: c")}
    assert check_sentence_keys({"id": "2", "question": "q", "documents": ["A."]}) == []  # no labels: nothing to check
