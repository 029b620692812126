"""One preparation for rows that already carry a response: what
:class:`rag_eval.runs.sources.RowsSource` (``rag-eval judge`` and its ``--dry-run``, ``run
--judge-only``, Batch, the API) does to each row, so the same file gives the same ids, fields
and errors everywhere. Each field is accepted under any of its names in
:data:`rag_eval.datasets.schema.JUDGED_ROW_COLUMNS` (rag-eval's, ragas's, deepeval's), the
documents also as RAGBench's ``documents_sentences``; a missing or blank id becomes
``row-{row number}``; the normalised row is validated against
:class:`rag_eval.datasets.schema.DatasetRow`, a problem becoming a
:class:`~rag_eval.io.rows.RowError` naming file, row and field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from rag_eval.datasets.schema import JUDGED_ROW_COLUMNS, DatasetRow
from rag_eval.datasets.validate import issues_from_validation_error
from rag_eval.io.rows import RowError
from rag_eval.runs.truth import FieldValueError, truth_of
from rag_eval.schema import EvalItem, _as_list
from rag_eval.text.sentences import item_from_row

QUESTION_FIELDS = JUDGED_ROW_COLUMNS["question"]
RESPONSE_FIELDS = JUDGED_ROW_COLUMNS["response"]
CONTEXT_FIELDS = JUDGED_ROW_COLUMNS["documents"]


@dataclass(slots=True)
class PreparedRow:
    """One input row: its keyed item (and RAGBench ground truth when the row has it),
    or the error that keeps it from the judge."""

    row_number: int
    id: str
    question: str = ""
    item: EvalItem | None = None
    truth: dict[str, float | None] | None = None
    error: RowError | None = None


def default_id(row_number: int) -> str:
    return f"row-{row_number}"


def id_of(row: dict[str, Any], row_number: int) -> str:
    """The row's ``id`` as text, or ``row-{row_number}`` when it is missing or blank."""
    value = row.get("id")
    blank = value is None or (isinstance(value, float) and math.isnan(value)) or not str(value).strip()
    return default_id(row_number) if blank else str(value).strip()


def _first(row: dict[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    for name in names:
        if row.get(name) not in (None, "", []):
            return name, row[name]
    return None, None


def row_question(row: dict[str, Any]) -> Any:
    """The row's question, under any name it is accepted under (None when it has none)."""
    return _first(row, QUESTION_FIELDS)[1]


def has_response(row: dict[str, Any]) -> bool:
    """Whether a row is meant to be judged as given: it holds a response (without its
    documents it is then told so, not sent through the RAG system instead)."""
    return _first(row, RESPONSE_FIELDS)[0] is not None or row.get("response_sentences") is not None


def _normalised(row: dict[str, Any], item_id: str) -> dict[str, Any]:
    """The row with ``response`` and ``documents`` under their schema names (``answer``
    here is the response, not a reference answer), or a :class:`FieldValueError`."""
    q_name, question = _first(row, QUESTION_FIELDS)
    if not isinstance(question, str) or not question.strip():
        raise FieldValueError(q_name or "question", "missing or empty")
    out = {**{k: v for k, v in row.items() if k not in QUESTION_FIELDS}, "id": item_id, "question": question}
    name, response = _first(row, RESPONSE_FIELDS)
    if name is None:
        if row.get("response_sentences") is None:
            raise FieldValueError("response", f"is missing (give {' or '.join(RESPONSE_FIELDS)})")
    elif not isinstance(response, str):
        raise FieldValueError(name, f"must be text, got {type(response).__name__}")
    else:
        for alias in RESPONSE_FIELDS:
            out.pop(alias, None)
        out["response"] = response
    if row.get("documents_sentences") is not None:
        for d, doc in enumerate(_as_list(row["documents_sentences"])):
            for s, pair in enumerate(_as_list(doc)):
                if len(_as_list(pair)) < 2:
                    raise FieldValueError(f"documents_sentences[{d}][{s}]", "must be a [key, sentence] pair")
        return out
    ctx_name, contexts = _first(row, CONTEXT_FIELDS)
    if ctx_name is None:
        raise FieldValueError("documents", f"is missing (give {' or '.join(CONTEXT_FIELDS)}: a list of texts; "
                                       "or documents_sentences)")
    if isinstance(contexts, str) or not isinstance(contexts, (list, tuple)) and not hasattr(contexts, "tolist"):
        raise FieldValueError(ctx_name, "must be a list of texts")
    docs = _as_list(contexts)
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise FieldValueError(f"{ctx_name}[{i}]", f"must be text, got {type(doc).__name__}")
    for alias in CONTEXT_FIELDS:
        out.pop(alias, None)
    out["documents"] = docs
    return out


def prepare_row(value: dict[str, Any] | RowError, row_number: int, source: str = "dataset") -> PreparedRow:
    """The keyed item of one row (``row_number`` as the file numbers it), or an error
    naming ``source``, the row and the field."""
    if isinstance(value, RowError):
        return PreparedRow(row_number, default_id(row_number), error=value)
    item_id = id_of(value, row_number)
    raw_question = row_question(value)
    question = raw_question if isinstance(raw_question, str) else ""
    try:
        row = _normalised(value, item_id)
        try:
            DatasetRow.model_validate(row)
        except ValidationError as err:
            first = issues_from_validation_error(err, source, row_number)[0]
            raise FieldValueError(first.field, first.message) from None
        truth = truth_of(value)
        item = item_from_row(row, default_id=item_id)
    except FieldValueError as err:
        return PreparedRow(row_number, item_id, question, error=RowError(source, row_number, err.field, err.message))
    except ValueError as err:
        return PreparedRow(row_number, item_id, question, error=RowError(source, row_number, None, str(err)))
    return PreparedRow(row_number, item_id, question, item=item, truth=truth)
