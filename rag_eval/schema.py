"""The plain data that flows through the workbench.

Every stage (sentencizer, judge, scorer, run store, CLI, dashboard) exchanges these
objects and nothing richer, so each stage can be tested and replaced on its own.
Field names follow RAGBench's annotation schema wherever RAGBench has a name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, is_dataclass
from enum import Enum
from typing import Any


@dataclass(frozen=True, slots=True)
class Sentence:
    """One keyed sentence. ``start``/``end`` are character offsets into the source
    text when known (new text split by us), or -1 when the row arrived pre-split."""

    key: str
    text: str
    start: int = -1
    end: int = -1


@dataclass(slots=True)
class EvalItem:
    """What a judge looks at: a question, keyed document sentences and keyed
    response sentences. ``documents[i]`` holds the sentences of document ``i``."""

    id: str
    question: str
    documents: list[list[Sentence]]
    response_sentences: list[Sentence]
    response: str = ""
    document_texts: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    #: ISO 639-1 code of the item's language (its response's, else its question's):
    #: given by the row (``language``), the configuration or the caller, else detected
    #: (``rag_eval.text.language``); "" until known. Sentence splitting, words, stop
    #: words and whether a judge can read the item follow it.
    language: str = ""

    @property
    def document_keys(self) -> list[str]:
        return [s.key for doc in self.documents for s in doc]

    @property
    def response_keys(self) -> list[str]:
        return [s.key for s in self.response_sentences]

    def sentence_text(self) -> dict[str, str]:
        """Key -> text for every document and response sentence."""
        out = {s.key: s.text for doc in self.documents for s in doc}
        out.update({s.key: s.text for s in self.response_sentences})
        return out


SPECIAL_SUPPORT_TOKENS = frozenset(
    {"supported_without_sentence", "general", "well_known_fact", "numerical_reasoning"}
)


@dataclass(slots=True)
class SentenceSupport:
    """RAGBench's ``sentence_support_information`` entry for one response sentence."""

    response_sentence_key: str
    supporting_sentence_keys: list[str] = field(default_factory=list)
    fully_supported: bool | None = None
    explanation: str = ""
    probability: float | None = None  # P(fully supported), from judges that have one

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SentenceSupport:
        return cls(
            response_sentence_key=str(d.get("response_sentence_key", "")),
            supporting_sentence_keys=_str_list(d.get("supporting_sentence_keys")),
            fully_supported=d.get("fully_supported"),
            explanation=str(d.get("explanation") or ""),
            probability=d.get("probability"),
        )


@dataclass(slots=True)
class Labels:
    """Judge labels in RAGBench's schema, plus optional per-key probabilities."""

    all_relevant_sentence_keys: list[str] = field(default_factory=list)
    all_utilized_sentence_keys: list[str] = field(default_factory=list)
    sentence_support_information: list[SentenceSupport] = field(default_factory=list)
    unsupported_response_sentence_keys: list[str] = field(default_factory=list)
    overall_supported: bool | None = None
    relevance_explanation: str = ""
    overall_supported_explanation: str = ""
    relevance_probabilities: dict[str, float] | None = None
    utilization_probabilities: dict[str, float] | None = None
    support_probabilities: dict[str, float] | None = None
    # P(the whole response is grounded), from judges that estimate it; when set, the
    # scorer uses it as the continuous adherence score (better ranking than a fraction).
    adherence_probability: float | None = None

    def to_dict(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict deep-copies field by field, the hot spot of a cached rerun
        def opt(value: dict[str, float] | None) -> dict[str, float] | None:
            return None if value is None else dict(value)

        return {
            "all_relevant_sentence_keys": list(self.all_relevant_sentence_keys),
            "all_utilized_sentence_keys": list(self.all_utilized_sentence_keys),
            "sentence_support_information": [
                {"response_sentence_key": s.response_sentence_key,
                 "supporting_sentence_keys": list(s.supporting_sentence_keys),
                 "fully_supported": s.fully_supported, "explanation": s.explanation, "probability": s.probability}
                for s in self.sentence_support_information
            ],
            "unsupported_response_sentence_keys": list(self.unsupported_response_sentence_keys),
            "overall_supported": self.overall_supported,
            "relevance_explanation": self.relevance_explanation,
            "overall_supported_explanation": self.overall_supported_explanation,
            "relevance_probabilities": opt(self.relevance_probabilities),
            "utilization_probabilities": opt(self.utilization_probabilities),
            "support_probabilities": opt(self.support_probabilities),
            "adherence_probability": self.adherence_probability,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Labels:
        """Build from a RAGBench row or a judge output dict. RAGBench stores
        ``overall_supported`` as ``adherence_score`` (bool); both are accepted."""
        overall = d.get("overall_supported")
        if overall is None and isinstance(d.get("adherence_score"), bool):
            overall = d["adherence_score"]
        return cls(
            all_relevant_sentence_keys=_str_list(d.get("all_relevant_sentence_keys")),
            all_utilized_sentence_keys=_str_list(d.get("all_utilized_sentence_keys")),
            sentence_support_information=[
                SentenceSupport.from_dict(x) for x in (_as_list(d.get("sentence_support_information")))
                if isinstance(x, dict)
            ],
            unsupported_response_sentence_keys=_str_list(d.get("unsupported_response_sentence_keys")),
            overall_supported=overall,
            relevance_explanation=str(d.get("relevance_explanation") or ""),
            overall_supported_explanation=str(d.get("overall_supported_explanation") or ""),
            relevance_probabilities=d.get("relevance_probabilities"),
            utilization_probabilities=d.get("utilization_probabilities"),
            support_probabilities=d.get("support_probabilities"),
            adherence_probability=d.get("adherence_probability"),
        )


class JudgeStatus(str, Enum):
    """How a judgement ended. Only ``ok`` and ``repaired`` carry usable labels."""

    OK = "ok"
    REPAIRED = "repaired"
    PARSE_ERROR = "parse_error"
    TRUNCATED = "truncated"
    REFUSED = "refused"
    PROVIDER_ERROR = "provider_error"
    TIMEOUT = "timeout"
    INVALID_INPUT = "invalid_input"
    CANCELLED = "cancelled"
    #: The judge cannot read the item's language (never "supported" by default): not usable,
    #: counted in coverage with the language in its reason.
    UNSUPPORTED_LANGUAGE = "unsupported_language"

    @property
    def usable(self) -> bool:
        return self in (JudgeStatus.OK, JudgeStatus.REPAIRED)


USABLE_STATUSES = frozenset({JudgeStatus.OK.value, JudgeStatus.REPAIRED.value})


def is_usable(status: object) -> bool:
    """The one definition of a usable item: its judgement ended ``ok`` or ``repaired``.
    Only usable items enter a mean; every other item counts in coverage and the status
    table (a RAG source's ``retrieval_error`` / ``generation_error`` are not usable)."""
    return str(getattr(status, "value", status)) in USABLE_STATUSES


@dataclass(slots=True)
class JudgeResult:
    id: str
    status: JudgeStatus
    labels: Labels | None = None
    error: str | None = None
    raw: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)  # prompt / completion / total
    cost_usd: float | None = None
    latency_s: float | None = None
    judge: str = ""  # e.g. "llm:gpt-4o-mini" or "local:2.0.0"
    prompt_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # samples, agreement rate, retries...

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d


def _plain_copy(value: Any) -> Any:
    """A deep copy of JSON-like data (what ``dataclasses.asdict`` does to a field's value)."""
    if isinstance(value, dict):
        return {k: _plain_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain_copy(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


class ScoringMode(str, Enum):
    RAGBENCH = "ragbench"
    CLEAN = "clean"
    LEGACY = "legacy"


@dataclass(slots=True)
class TraceScores:
    """The four TRACe metrics of one row. ``None`` means undefined for this row
    (e.g. no document sentences), never a silent zero."""

    context_relevance: float | None
    context_utilization: float | None
    completeness: float | None
    adherence: bool | None
    adherence_score: float | None
    mode: str
    per_document: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # by hand, as Labels.to_dict: asdict was half the CPU of building a cached row's record
        return {
            "context_relevance": self.context_relevance, "context_utilization": self.context_utilization,
            "completeness": self.completeness, "adherence": self.adherence,
            "adherence_score": self.adherence_score, "mode": self.mode,
            "per_document": [_plain_copy(d) for d in self.per_document],
            "diagnostics": _plain_copy(self.diagnostics),
        }

    def metric_values(self) -> dict[str, float | None]:
        """The four metrics as floats (adherence as 0/1) for aggregation."""
        return {
            "context_relevance": self.context_relevance,
            "context_utilization": self.context_utilization,
            "completeness": self.completeness,
            "adherence": None if self.adherence is None else float(self.adherence),
        }


# Ground-truth score columns in RAGBench rows, by metric name.
RAGBENCH_TRUTH_COLUMNS = {
    "context_relevance": "relevance_score",
    "context_utilization": "utilization_score",
    "completeness": "completeness_score",
    "adherence": "adherence_score",
}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        return list(value.tolist())
    return [value]


def _str_list(value: Any) -> list[str]:
    return [str(v) for v in _as_list(value)]


@dataclass(slots=True)
class ItemRecord:
    """What the workbench keeps of one evaluated item: the one record, built only by
    :func:`rag_eval.runs.records.build_record` from (the item as its source prepared it,
    the judge's result, the configuration). A run store item and a ``rag-eval judge``
    output row are two serialisations of it (``to_store`` / ``to_file_row`` in
    :mod:`rag_eval.runs.records`). Every item ends with a ``status``; a failed item has ``scores`` None (never 0).
    """

    id: str
    position: int
    status: str
    error: str | None = None
    question: str = ""
    answer: str | None = None  # the response judged (given, or generated by the RAG system)
    reference_answer: str | None = None
    gold_doc_ids: list[str] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    retrieved_doc_ids: list[str] = field(default_factory=list)
    generator: dict[str, Any] | None = None
    labels: dict[str, Any] | None = None
    scores: dict[str, float | None] | None = None  # TRACe metric values and adherence_score
    correctness: dict[str, float | None] | None = None  # bleu, rouge_l (and answer_match) against the reference
    # Per-item metrics of the metric registry's ``custom`` family (plugins, users): ``name`` or
    # ``name.key`` -> value; a metric that failed on this item is None here with its reason in
    # ``metric_errors`` (never 0 or NaN).
    metrics: dict[str, float | None] | None = None
    metric_errors: dict[str, str] = field(default_factory=dict)
    # Why a per-item metric gave its value, where it says (a rubric's one-sentence reason).
    metric_reasons: dict[str, str] = field(default_factory=dict)
    trace: dict[str, Any] | None = None  # TraceScores.to_dict(): mode, per document, diagnostics
    report: dict[str, Any] = field(default_factory=dict)  # the original project's report fields
    retrieval: dict[str, float | None] | None = None
    judge: str | None = None
    prompt_id: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    latency_s: float | None = None
    timings: dict[str, float] = field(default_factory=dict)
    truth: dict[str, float | None] | None = None  # RAGBench ground truth, when the row has it
    sentences: dict[str, Any] | None = None  # the keyed sentences judged (stored as ``item``)
    metadata: dict[str, Any] = field(default_factory=dict)  # the row's metadata, verbatim
    language: str = ""  # the item's language (EvalItem.language; "" when unknown)
    judge_extra: dict[str, Any] = field(default_factory=dict)  # samples, retries, label repairs...
    raw: str | None = None  # what the judge said when it gave no usable labels
    mode: str = "clean"
    # Not serialised: the source's item (keyed sentences, retrieved chunks, the generation) and
    # the judge's result, for callers that show one item (ask, rag_eval.testing).
    source: Any = field(default=None, repr=False, compare=False)
    judge_result: JudgeResult | None = field(default=None, repr=False, compare=False)

    @property
    def usable(self) -> bool:
        return is_usable(self.status)
