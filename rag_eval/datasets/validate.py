"""Dataset validation: every problem as an issue naming file, row and field. Validation never drops or
changes a row. ``error`` issues make a row unusable (no question, wrong types, duplicate id, empty
contexts); ``warning`` issues are worth a look but the row still evaluates (e.g. RAGBench label keys that
name no sentence: the upstream data has some, and the scorer copes with them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import ValidationError

from rag_eval.io.rows import RowError
from rag_eval.schema import SPECIAL_SUPPORT_TOKENS
from rag_eval.text.keys import normalize_key


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem. ``row`` is 1-based as in :class:`~rag_eval.io.rows.RowError`
    (the line of a JSONL/CSV row, the index+1 of a Parquet row), 0 for the file."""

    file: str
    row: int
    field: str | None
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"{self.reason} [{self.severity.value}]"

    @property
    def reason(self) -> str:
        """Where and what, without the severity: ``file: row 3, field 'question': missing question``."""
        return str(RowError(self.file, self.row, self.field, self.message))

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "row": self.row, "field": self.field,
                "message": self.message, "severity": self.severity.value}

    @classmethod
    def from_row_error(cls, err: RowError) -> Issue:
        return cls(err.file, err.row, err.field, err.message, Severity.ERROR)


def issues_from_validation_error(err: ValidationError, file: str, row: int) -> list[Issue]:
    """Pydantic's errors as issues with a dotted field path and the type received."""
    out = []
    for e in err.errors(include_url=False):
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]).lstrip(".")
        message = e["msg"]
        if e["type"] == "missing":
            message = "missing required field"
        elif e["type"] not in ("value_error",) and "input" in e:
            text = repr(e["input"])
            message += f" (got {type(e['input']).__name__}: {text if len(text) <= 40 else text[:37] + '...'})"
        out.append(Issue(file, row, loc or None, message, Severity.ERROR))
    return out


def missing_columns(file: str, found: Iterable[str], required: Mapping[str, Sequence[str]]) -> Issue | None:
    """One file-level issue when no row of ``file`` has a column the rows need (``required``:
    field -> the column names accepted for it), naming the missing column(s), the names
    accepted and the columns found: said once for the file, not as the same error on
    every row."""
    found = list(dict.fromkeys(found))
    missing = [name for name, accepted in required.items() if not set(accepted) & set(found)]
    if not missing:
        return None

    def named(name: str) -> str:
        others = [a for a in required[name] if a != name]
        return f"'{name}'" + (f" (or {', '.join(others)})" if others else "")

    names = [named(name) for name in missing]
    listed = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
    return Issue(file, 0, None,
                 f"missing column{'s' if len(missing) > 1 else ''} {listed}; "
                 f"found: {', '.join(found) or 'no column'}")


NO_ROWS = "no rows (the file is empty or holds only a header)"


def shape_issue(file: str, rows: Iterable[tuple[int, Any]], required: Mapping[str, Sequence[str]]) -> Issue | None:
    """The one verdict on an input as a whole, taken before anything is created (a run, a
    stored dataset) by every path: the CLI, the Python API and the pages. A file that cannot
    be read (a CSV quoting error naming its line, not UTF-8...), holds no rows, or in none of
    whose rows a ``required`` field has a column (:func:`missing_columns`) is one file-level
    issue; otherwise None, and each bad row is then reported on its own. ``rows``: ``(row
    number, row or RowError)`` pairs, read only as far as the required columns are found."""
    from rag_eval.io.rows import FileFormatError

    found: dict[str, None] = {}
    given = 0
    try:
        for _, row in rows:
            given += 1
            if isinstance(row, Mapping):
                found.update(dict.fromkeys(map(str, row)))
                if missing_columns(file, found, required) is None:
                    return None
    except FileFormatError as err:
        return Issue(file, 0, None, str(err).removeprefix(f"{file}: "))
    if not given:
        return Issue(file, 0, None, NO_ROWS)
    return missing_columns(file, found, required) if found else None  # rows unread: each says why


# ---------------------------------------------------------------- row checks
def check_question(row: dict[str, Any]) -> list[tuple[str, str, Severity]]:
    q = row.get("question")
    if q is None:
        return [("question", "missing question", Severity.ERROR)]
    if isinstance(q, str) and not q.strip():
        return [("question", "question is empty", Severity.ERROR)]
    return []


def check_contexts(row: dict[str, Any]) -> list[tuple[str, str, Severity]]:
    """Empty context lists or blank passages in ``documents`` / ``gold_contexts``."""
    out: list[tuple[str, str, Severity]] = []
    for name in ("documents", "gold_contexts"):
        if name not in row:
            continue
        value = row[name]
        if not isinstance(value, list):
            continue  # a wrong type is reported by the schema check
        if not value:
            out.append((name, f"empty contexts: '{name}' is an empty list", Severity.ERROR))
        for i, text in enumerate(value):
            if isinstance(text, str) and not text.strip():
                out.append((f"{name}[{i}]", "empty context passage", Severity.ERROR))
    if row.get("response") not in (None, "") and "documents" not in row and "documents_sentences" not in row:
        out.append(("documents", "a response is given without the documents it was generated from", Severity.WARNING))
    return out


def _keys_of(pairs: Any) -> set[str]:
    out = set()
    if isinstance(pairs, list):
        for pair in pairs:
            if isinstance(pair, (list, tuple)) and pair:
                out.add(normalize_key(pair[0]))
    return out


_LABEL_FIELDS = ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
                 "unsupported_response_sentence_keys")


def _split_keys(row: dict[str, Any]) -> dict[str, Any]:
    """Rows with labels but no pre-split sentences are keyed the way the judge and
    scorer key them (sentencex over ``documents`` / ``response``), so their label keys can
    be checked too."""
    from rag_eval.text.sentences import key_document, key_response

    if not any(row.get(name) for name in _LABEL_FIELDS):
        return row
    row = dict(row)
    docs = row.get("documents")
    if row.get("documents_sentences") is None and isinstance(docs, list) and all(isinstance(d, str) for d in docs):
        row["documents_sentences"] = [[[s.key, s.text] for s in key_document(d, i)] for i, d in enumerate(docs)]
    if row.get("response_sentences") is None and isinstance(row.get("response"), str):
        row["response_sentences"] = [[s.key, s.text] for s in key_response(row["response"])]
    return row


def check_sentence_keys(row: dict[str, Any]) -> list[tuple[str, str, Severity]]:
    """RAGBench label keys that name no sentence of the row: checked against the
    pre-split ``documents_sentences`` / ``response_sentences``, or, without them,
    against the keys that splitting ``documents`` / ``response`` gives."""
    out = []
    row = _split_keys(row)
    docs = row.get("documents_sentences")
    if isinstance(docs, list):
        doc_keys = set().union(*(_keys_of(d) for d in docs)) if docs else set()
        for name in ("all_relevant_sentence_keys", "all_utilized_sentence_keys"):
            unknown = _unknown(row.get(name), doc_keys)
            if unknown:
                out.append((name, f"unknown sentence keys: {', '.join(unknown)}", Severity.WARNING))
        for i, info in enumerate(row.get("sentence_support_information") or []):
            if isinstance(info, dict):
                unknown = _unknown(info.get("supporting_sentence_keys"), doc_keys | SPECIAL_SUPPORT_TOKENS)
                if unknown:
                    out.append((f"sentence_support_information[{i}].supporting_sentence_keys",
                                f"unknown sentence keys: {', '.join(unknown)}", Severity.WARNING))
    resp = row.get("response_sentences")
    if isinstance(resp, list):
        resp_keys = _keys_of(resp)
        unknown = _unknown(row.get("unsupported_response_sentence_keys"), resp_keys)
        if unknown:
            out.append(("unsupported_response_sentence_keys",
                        f"unknown response sentence keys: {', '.join(unknown)}", Severity.WARNING))
        for i, info in enumerate(row.get("sentence_support_information") or []):
            if isinstance(info, dict) and "response_sentence_key" in info:
                unknown = _unknown([info["response_sentence_key"]], resp_keys)
                if unknown:
                    out.append((f"sentence_support_information[{i}].response_sentence_key",
                                f"unknown response sentence key: {unknown[0]}", Severity.WARNING))
    return out


def _unknown(keys: Any, known: set[str]) -> list[str]:
    if not isinstance(keys, list):
        return []
    return [str(k) for k in keys if normalize_key(k) not in known]


ROW_CHECKS = (check_question, check_contexts, check_sentence_keys)


def check_rows(rows: Iterable[tuple[int, dict[str, Any]]], file: str) -> list[Issue]:
    """Row-level checks (question, contexts, sentence keys) and duplicate ids across
    rows. Type errors are left to the schema (see :func:`issues_from_validation_error`)."""
    rows = list(rows)
    issues: list[Issue] = []
    first_seen: dict[str, int] = {}
    for number, row in rows:
        for check in ROW_CHECKS:
            issues.extend(Issue(file, number, f, m, s) for f, m, s in check(row))
        if row.get("id") is None:
            continue
        rid = str(row["id"])
        if rid in first_seen:
            issues.append(Issue(file, number, "id", f"duplicate id '{rid}' (first at row {first_seen[rid]})"))
        else:
            first_seen[rid] = number
    return issues


def summarize_issues(issues: Iterable[Issue]) -> dict[str, int]:
    counts = Counter(i.severity.value for i in issues)
    return {"error": counts.get("error", 0), "warning": counts.get("warning", 0)}
