"""Scoring files of RAGBench-format rows, and agreement between two files.

Used by ``rag-eval score`` / ``rag-eval agreement`` and by the dashboard. Every input
row ends as exactly one :class:`ScoredRow`, in input order: either scored (status
``ok``) or ``invalid_input`` with a :class:`RowError` naming file, row and field.
Failed rows are counted in the summary's coverage and never enter a mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_eval.io.rows import RowError, iter_rows
from rag_eval.metrics.aggregate import DEFAULT_N_BOOT, DEFAULT_SEED, MeanWithCoverage, mean_with_coverage
from rag_eval.metrics.agreement import (
    DEFAULT_F1_THRESHOLD,
    AgreementReport,
    agreement,
    agreement_by_language,
)
from rag_eval.metrics.diagnosis import Diagnosis, diagnose
from rag_eval.metrics.registry import TRACE_SCORES
from rag_eval.metrics.report_fields import report_fields
from rag_eval.metrics.trace import score_ragbench_row
from rag_eval.runs.join import join_by_id
from rag_eval.runs.summary import UNKNOWN_LANGUAGE
from rag_eval.runs.truth import (
    PREDICTION_COLUMNS,
    TRUTH_COLUMNS,
    FieldValueError,
    describe_value,
    truth_of,
    values_of,
)
from rag_eval.schema import JudgeStatus, Labels, ScoringMode, TraceScores

STATUS_OK = JudgeStatus.OK.value
STATUS_INVALID = JudgeStatus.INVALID_INPUT.value

KEY_LIST_FIELDS = ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "unsupported_response_sentence_keys")
SENTENCE_FIELDS = ("documents_sentences", "response_sentences")
REQUIRED_FIELDS = SENTENCE_FIELDS + KEY_LIST_FIELDS



# ---------------------------------------------------------------- validation
def _is_pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) >= 2 and type(value[0]) is str and type(value[1]) is str


def _row_problem(row: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, message) for the first field scoring cannot use, else None."""
    for name in REQUIRED_FIELDS:
        if name not in row or row[name] is None:
            return name, "missing (a RAGBench-format row needs " + ", ".join(REQUIRED_FIELDS) + ")"
    docs = row["documents_sentences"]
    if not isinstance(docs, (list, tuple)) or not all(isinstance(d, (list, tuple)) for d in docs):
        return "documents_sentences", f"expected a list of documents, each a list of [key, sentence] pairs; got {describe_value(docs)}"
    for d, doc in enumerate(docs):
        if not all(_is_pair(p) for p in doc):
            return f"documents_sentences[{d}]", "expected [key, sentence] pairs of strings"
    resp = row["response_sentences"]
    if not isinstance(resp, (list, tuple)) or not all(_is_pair(p) for p in resp):
        return "response_sentences", f"expected a list of [key, sentence] pairs of strings; got {describe_value(resp)}"
    for name in KEY_LIST_FIELDS:
        keys = row[name]
        if not isinstance(keys, (list, tuple)) or not all(isinstance(k, str) for k in keys):
            return name, f"expected a list of sentence keys (strings); got {describe_value(keys)}"
    support = row.get("sentence_support_information")
    if support is not None and (not isinstance(support, (list, tuple)) or not all(isinstance(s, dict) for s in support)):
        return "sentence_support_information", f"expected a list of objects; got {describe_value(support)}"
    return None




# ---------------------------------------------------------------- scoring
@dataclass(slots=True)
class ScoredRow:
    """One input row's outcome. ``truth`` holds its ground-truth metrics when it has any."""

    row: int
    id: str | None
    scores: TraceScores | None = None
    error: RowError | None = None
    truth: dict[str, float | None] | None = None
    report: dict[str, Any] | None = None  # the original project's six report fields
    labels: dict[str, Any] | None = None  # the row's labels (Labels.to_dict())

    @property
    def status(self) -> str:
        return STATUS_OK if self.error is None else STATUS_INVALID

    def prediction(self) -> dict[str, Any] | None:
        if self.scores is None:
            return None
        return {**self.scores.metric_values(), "adherence_score": self.scores.adherence_score}

    def stored(self) -> dict[str, Any]:
        """The row as the run store keeps an item (:func:`rag_eval.runs.records.scored_record`)."""
        from rag_eval.runs.records import scored_record

        return scored_record(self.id, self.row - 1, self.status, None if self.error is None else str(self.error),
                             self.labels, self.scores, self.report)

    def to_record(self) -> dict[str, Any]:
        """The output row of ``rag-eval score`` for this row: the one flat row
        (:func:`rag_eval.runs.records.item_row`), ``position`` its row number - 1."""
        from rag_eval.runs.records import item_row

        return item_row(self.stored())


def _given_id(row: Mapping[str, Any]) -> str | None:
    value = row.get("id")
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def score_row(number: int, row: Mapping[str, Any], mode: ScoringMode | str, file: str = "") -> ScoredRow:
    """Score one RAGBench-format row; a problem becomes the row's :class:`RowError`."""
    given_id = _given_id(row)
    problem = _row_problem(row)
    if problem is not None:
        return ScoredRow(number, given_id, error=RowError(file, number, problem[0], problem[1]))
    try:
        truth = truth_of(row)
    except FieldValueError as err:
        return ScoredRow(number, given_id, error=RowError(file, number, err.field, err.message))
    try:
        scores = score_ragbench_row(dict(row), mode)
    except ValueError as err:  # trace names the field in its message
        return ScoredRow(number, given_id, error=RowError(file, number, None, str(err)))
    response_keys = [str(p[0]) for p in row["response_sentences"]]
    labels = Labels.from_dict(dict(row))
    report = report_fields(scores.metric_values(), labels, response_keys)
    return ScoredRow(number, given_id, scores, None, truth, report, labels.to_dict())


@dataclass(slots=True)
class ScoringSummary:
    file: str
    mode: str
    rows_given: int
    rows_scored: int
    means: dict[str, MeanWithCoverage]  # over all rows given (n_boot=0: no interval)
    agreement: AgreementReport | None = None
    errors: list[RowError] = field(default_factory=list)
    diagnosis: Diagnosis | None = None

    @property
    def rows_failed(self) -> int:
        return self.rows_given - self.rows_scored


@dataclass(slots=True)
class ScoringResult:
    rows: list[ScoredRow]
    summary: ScoringSummary

    @property
    def errors(self) -> list[RowError]:
        return self.summary.errors

    def records(self) -> list[dict[str, Any]]:
        """The output rows, every one with the same columns (:func:`rag_eval.runs.records.item_rows`)."""
        from rag_eval.runs.records import item_rows

        return item_rows([r.stored() for r in self.rows])


def summarize(
    rows: Sequence[ScoredRow], mode: str, file: str = "", *, n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED, threshold: float = DEFAULT_F1_THRESHOLD,
) -> ScoringSummary:
    """Means with coverage, and agreement statistics when any row carries ground truth."""
    predictions = [r.prediction() for r in rows]
    means = {m: mean_with_coverage([p[m] for p in predictions if p], len(rows), n_boot=0) for m in TRACE_SCORES}
    report = None
    if any(r.truth for r in rows):
        report = agreement(predictions, [r.truth for r in rows], n_boot=n_boot, seed=seed, threshold=threshold)
    return ScoringSummary(
        file=file, mode=ScoringMode(mode).value, rows_given=len(rows),
        rows_scored=sum(r.error is None for r in rows), means=means, agreement=report,
        errors=[r.error for r in rows if r.error is not None],
        diagnosis=diagnose([(r.id if r.id is not None else f"row-{r.row}", p) for r, p in zip(rows, predictions)]),
    )


def score_rows(
    numbered_rows: Iterable[tuple[int, Mapping[str, Any] | RowError]],
    mode: ScoringMode | str = ScoringMode.RAGBENCH,
    file: str = "",
    **summary_options: Any,
) -> ScoringResult:
    """Score ``(row_number, row_or_read_error)`` pairs, as :func:`rag_eval.io.rows.iter_rows` yields them."""
    mode = ScoringMode(mode)
    scored = [
        ScoredRow(number, None, error=value) if isinstance(value, RowError) else score_row(number, value, mode, file)
        for number, value in numbered_rows
    ]
    return ScoringResult(scored, summarize(scored, mode.value, file, **summary_options))


def score_file(path: str | Path, mode: ScoringMode | str = ScoringMode.RAGBENCH, **summary_options: Any) -> ScoringResult:
    """Score every row of a RAGBench-format file. Raises
    :class:`rag_eval.io.rows.FileFormatError` only when the file cannot be read at all."""
    return score_rows(iter_rows(path), mode, str(path), **summary_options)


# ---------------------------------------------------------------- agreement between files
@dataclass(slots=True)
class FileAgreement:
    """Agreement of a predictions file with a truth file joined on ``id``."""

    report: AgreementReport
    ids: list[str]
    only_in_predictions: list[str]
    only_in_truth: list[str]
    errors: list[RowError]
    repeated: dict[str, int] = field(default_factory=dict)  # ids repeated in both files -> occurrences
    note: str | None = None  # what the summary says about repeated ids
    #: the same agreement per language (the rows' ``language``), when the files hold more than one
    by_language: dict[str, AgreementReport] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = self.report.to_dict()
        if self.by_language:
            out["by_language"] = {language: r.to_dict() for language, r in self.by_language.items()}
        out["join"] = {
            "ids": len(self.ids),
            "only_in_predictions": len(self.only_in_predictions),
            "only_in_truth": len(self.only_in_truth),
            "repeated_ids": len(self.repeated),
            "note": self.note,
        }
        out["errors"] = [str(e) for e in self.errors]
        return out


def _rows_with_ids(
    path: str | Path, columns: Mapping[str, Sequence[str]], errors: list[RowError], bounded: bool,
    languages: dict[str, str] | None = None,
) -> list[tuple[str, dict[str, float | None] | None]]:
    """``[(id, values or None)]`` for a file, in order (an id may repeat); a failed row
    (status other than ok) has None. ``languages``: filled with each id's ``language``
    where the row names one (the first row of an id, the first file read, wins)."""
    name = str(path)
    out: list[tuple[str, dict[str, float | None] | None]] = []
    for number, row in iter_rows(path):
        if isinstance(row, RowError):
            errors.append(row)
            continue
        given_id = _given_id(row)
        if given_id is None:
            errors.append(RowError(name, number, "id", "missing; rows are joined on id"))
            continue
        if languages is not None and row.get("language"):
            languages.setdefault(given_id, str(row["language"]))
        if row.get("status") not in (None, STATUS_OK):
            out.append((given_id, None))  # a row that failed upstream: a missing prediction, not a zero
            continue
        try:
            out.append((given_id, values_of(row, columns, bounded)))
        except FieldValueError as err:
            errors.append(RowError(name, number, err.field, err.message))
            out.append((given_id, None))
    return out


def agreement_between_files(
    predictions_path: str | Path, truth_path: str | Path, *, n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED, threshold: float = DEFAULT_F1_THRESHOLD,
) -> FileAgreement:
    """Join predictions and truth on ``id`` and compute :func:`agreement`.

    Predictions take each metric from its own name (``context_relevance``...) or the
    RAGBench column; truth likewise (RAGBench's ``relevance_score``... or a scored
    file's metric names). Ids present on one side only are missing values on the
    other and show in the coverage. An id repeated in both files pairs its k-th
    occurrences (:func:`rag_eval.runs.join.join_by_id`); different counts raise
    :class:`~rag_eval.runs.join.RepeatedIdMismatch` naming the ids.
    """
    errors: list[RowError] = []
    languages: dict[str, str] = {}
    pred = _rows_with_ids(predictions_path, PREDICTION_COLUMNS, errors, bounded=False, languages=languages)
    truth = _rows_with_ids(truth_path, TRUTH_COLUMNS, errors, bounded=True, languages=languages)
    joined = join_by_id(pred, truth, str(predictions_path), str(truth_path))
    report = agreement(joined.left, joined.right, n_boot=n_boot, seed=seed, threshold=threshold)
    return FileAgreement(report, joined.keys, joined.only_left, joined.only_right, errors, joined.repeated,
                         joined.repeated_note, _agreement_by_language(joined, languages, n_boot, seed, threshold))


def _agreement_by_language(joined: Any, languages: Mapping[str, str], n_boot: int, seed: int,
                           threshold: float) -> dict[str, AgreementReport]:
    """:func:`agreement_by_language` of the joined rows, each in its id's language (a
    repeated id's ``id#2`` in the id's; an id with none is ``und``)."""
    of = [languages.get(key) or languages.get(key.split("#")[0]) or UNKNOWN_LANGUAGE for key in joined.keys]
    return agreement_by_language(joined.left, joined.right, of, n_boot=n_boot, seed=seed, threshold=threshold)
