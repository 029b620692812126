"""One row schema for golden, imported and synthetic evaluation datasets.

A row is a question plus whatever ground truth is known about it: reference answers, wrong ("negative")
answers for testing judges, gold context as chunk texts, pointers into sources or document ids, and, when
the RAG output is given, the ``response`` and retrieved ``documents``. RAGBench's columns
(``documents_sentences``, ``relevance_score`` ...) stay top-level under their names, so a dataset file is
also an input of the judge and scoring commands; unknown columns are kept (``extra="allow"``): an import
never loses a field. ``provenance`` says who produced the ground truth: ``human``, ``llm`` (RAGBench's
GPT-4 labels), ``synthetic`` (not yet reviewed) or ``synthetic-reviewed`` (accepted by a reviewer).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Provenance(str, Enum):
    HUMAN = "human"
    LLM = "llm"
    SYNTHETIC = "synthetic"
    SYNTHETIC_REVIEWED = "synthetic-reviewed"


class QueryType(str, Enum):
    """The synthetic question types (imported rows may carry any other string)."""

    SIMPLE = "simple"
    MULTI_HOP = "multi_hop"
    COMPARISON = "comparison"
    DISTRACTING = "distracting"
    UNANSWERABLE = "unanswerable"


# The reference answer of an ``unanswerable`` row: the system should decline.
CANNOT_ANSWER = "cannot answer"


class RowMetadata(BaseModel):
    """Descriptive metadata; any further keys are kept."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)

    query_type: str | None = None
    question_source: str | None = None  # e.g. "ragbench:covidqa", "beir", "synth:gpt-4o-mini"
    difficulty: str | None = None
    domain: str | None = None


class ContextPointer(BaseModel):
    """Where a gold passage lives: a source (file, URL, document id) and optional
    character offsets, plus the chunk/document ids when they are known."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)

    source: str
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)
    doc_id: str | None = None
    chunk_id: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> ContextPointer:
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError(f"end ({self.end}) is before start ({self.start})")
        return self


# Fields that are always written, even when empty or at their default.
ALWAYS_WRITTEN = ("id", "question", "provenance")

# Input names accepted for ``reference_answers`` (one string or a list).
_REFERENCE_ALIASES = ("reference_answer", "reference", "ground_truth", "answer", "answers")

#: The fields of a row to judge (one that carries its response) and the column names each is read from,
#: first present wins: rag-eval's own, then ragas's (``user_input``, ``retrieved_contexts``, ``response``,
#: ``reference``) and deepeval's (``input``, ``actual_output``, ``retrieval_context``, ``expected_output``).
#: Every reader of such rows takes them (``rag-eval judge``'s files, the Batch page, the Python API);
#: ``answer`` here is the response, not a reference.
JUDGED_ROW_COLUMNS: dict[str, tuple[str, ...]] = {
    "question": ("question", "user_input", "input"),
    "response": ("response", "answer", "actual_output"),
    "documents": ("documents", "contexts", "retrieved_contexts", "retrieval_context"),
    "reference_answer": ("reference_answers", "reference_answer", "reference", "ground_truth", "expected_output"),
}
#: what stands in for a required field when its text is given already split into keyed sentences (RAGBench)
PRESPLIT_COLUMNS = {"documents": "documents_sentences", "response": "response_sentences"}
REQUIRED_JUDGED_FIELDS = ("question", "response", "documents")


#: The columns a file of rows to judge must have: each required field under one of the names it is
#: accepted under, or given pre-split. Checked once for the file before anything is created
#: (:func:`rag_eval.datasets.validate.shape_issue`), by every path that judges rows.
JUDGED_ROW_REQUIRED: dict[str, tuple[str, ...]] = {
    name: (*JUDGED_ROW_COLUMNS[name], *([PRESPLIT_COLUMNS[name]] if name in PRESPLIT_COLUMNS else []))
    for name in REQUIRED_JUDGED_FIELDS}
#: The columns a file of questions (a RAG run, a golden dataset) must have.
QUESTION_REQUIRED: dict[str, tuple[str, ...]] = {"question": ("question",)}


class DatasetRow(BaseModel):
    """One evaluation row. See the module docstring for the meaning of each group."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, validate_assignment=True)

    id: str = Field(min_length=1)
    question: str
    reference_answers: list[str] = Field(default_factory=list)
    negative_answers: list[str] = Field(default_factory=list)
    gold_contexts: list[str] = Field(default_factory=list)  # gold chunk texts
    gold_pointers: list[ContextPointer] = Field(default_factory=list)
    gold_doc_ids: list[str] = Field(default_factory=list)
    response: str | None = None
    documents: list[str] | None = None  # retrieved contexts, when the RAG output is given
    metadata: RowMetadata = Field(default_factory=RowMetadata)
    provenance: Provenance = Provenance.HUMAN

    # RAGBench labels and ground-truth scores (same names as RAGBench's columns).
    documents_sentences: list[list[list[str]]] | None = None
    response_sentences: list[list[str]] | None = None
    all_relevant_sentence_keys: list[str] | None = None
    all_utilized_sentence_keys: list[str] | None = None
    sentence_support_information: list[dict[str, Any]] | None = None
    unsupported_response_sentence_keys: list[str] | None = None
    adherence_score: bool | None = None
    relevance_score: float | None = Field(default=None, ge=0, le=1)
    utilization_score: float | None = Field(default=None, ge=0, le=1)
    completeness_score: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="before")
    @classmethod
    def _accept_aliases(cls, data: Any) -> Any:
        """Accept ``reference_answer`` (str or list) and friends for ``reference_answers``."""
        if not isinstance(data, dict) or "reference_answers" in data:
            return data
        for name in _REFERENCE_ALIASES:
            if name in data and data[name] is not None:
                data = dict(data)
                value = data.pop(name)
                data["reference_answers"] = value if isinstance(value, list) else [value]
                break
        return data

    @field_validator("question")
    @classmethod
    def _question_present(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty")
        return value

    @property
    def reference_answer(self) -> str | None:
        """The first reference answer, for metrics that take one."""
        return self.reference_answers[0] if self.reference_answers else None

    @property
    def extras(self) -> dict[str, Any]:
        """Fields that are not part of the schema (kept unchanged)."""
        return dict(self.model_extra or {})

    def to_record(self) -> dict[str, Any]:
        """Plain JSON-ready dict: ``None`` and empty defaults left out (``null`` and
        absent mean the same), field order stable, extra fields kept. An empty list is left
        out only where it is the field's default: for RAGBench labels ``[]`` (no relevant
        sentence) is not ``None`` (no labels) and is kept."""
        out: dict[str, Any] = {}
        for name, value in self.model_dump(mode="json").items():
            declared = DatasetRow.model_fields.get(name)
            if name in ALWAYS_WRITTEN:
                out[name] = value
            elif value is None:
                continue
            elif declared is not None and declared.default_factory is list and value == []:
                continue
            elif name == "metadata":
                meta = {k: v for k, v in value.items() if v is not None}
                if meta:
                    out[name] = meta
            elif name == "gold_pointers":
                out[name] = [{k: v for k, v in p.items() if v is not None} for p in value]
            else:
                out[name] = value
        return out


def mark_reviewed(rows: list[DatasetRow], ids: set[str] | list[str]) -> list[DatasetRow]:
    """Copies of ``rows`` with the synthetic rows whose id is in ``ids`` marked
    ``synthetic-reviewed`` (what a reviewer's "accept" does in the Datasets page).
    Rows of other provenance are returned unchanged; unknown ids raise ``ValueError``
    so a stale selection is noticed rather than ignored."""
    wanted = {str(i) for i in ids}
    unknown = wanted - {r.id for r in rows}
    if unknown:
        raise ValueError(f"unknown row ids: {', '.join(sorted(unknown))}")
    out = []
    for row in rows:
        if row.id in wanted and row.provenance is Provenance.SYNTHETIC:
            row = row.model_copy(update={"provenance": Provenance.SYNTHETIC_REVIEWED}, deep=True)
        out.append(row)
    return out
