"""The metric registry: every metric the workbench computes, declared once.

A :class:`Metric` carries everything an output needs: its ``name``, a readable ``label``,
its ``range``, which way is better, what it ``needs`` (response, documents, reference,
labels, an LLM), how one item is computed (``compute``, for per-item metrics), how it
aggregates and its ``help`` text. The record, the file row, the summary, the gate, the
exports, agreement, the review queue, the pages and the HTML report all read their
lists from :data:`METRICS`, so a new metric is one declaration.

Built-in metrics register here exactly as a plugin's do: the four TRACe metrics and the
continuous adherence score (family ``trace``, stored in a record's ``scores``), answer
correctness against a reference (``correctness``: BLEU, ROUGE-L, the LLM answer match),
retrieval metrics (``retrieval``, names ``metric@k``, parsed by :func:`parse_metric_name`)
and per-item metrics of users and plugins (``custom``, stored in ``metrics``).

A plugin declares an entry point in group ``rag_eval.metrics`` (``[project.entry-points
."rag_eval.metrics"] words = "my_package.metrics"``); the module it names registers with
the :func:`metric` decorator (or the entry point names a :class:`Metric`). Plugins load on
the first look at the registry; one that fails to import is named in
:attr:`MetricRegistry.plugin_errors` and the rest still works.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from rag_eval.metrics._common import check_k
from rag_eval.plugins import BUILT_IN, Registry, loading_origin

if TYPE_CHECKING:  # numpy (through metrics.retrieval) loads when a retrieval metric is computed, not
    # when the registry is read: `rag-eval --help` reads it (issue 35 item 3)
    from rag_eval.metrics.retrieval import BatchScore
    from rag_eval.schema import EvalItem, Labels, TraceScores

# ---------------------------------------------------------------- declarations
#: What a metric may need from an item. ``labels``: a judge's usable labels (TRACe);
#: ``llm``: a configured LLM endpoint; ``retrieval``: ranked retrieval against gold ids;
#: ``passages``: the embeddings of the retrieved chunks and of gold passages (no gold ids).
NEEDS = ("response", "documents", "reference", "labels", "llm", "retrieval", "passages")
#: Where each family's values live in a stored item record (and in :class:`ItemRecord`); the
#: family's name is its key in a run's summary.
FAMILY_FIELD = {"trace": "scores", "correctness": "correctness", "retrieval": "retrieval", "custom": "metrics"}
#: The heading each family is shown under (the CLI, the report, the pages).
FAMILY_HEADING = {"trace": "TRACe metrics", "correctness": "Answer correctness", "retrieval": "Retrieval",
                  "custom": "Other metrics"}
#: Families computed only for an item whose judgement is usable (answer correctness is kept
#: beside the scores of the judgement that read the same answer).
JUDGED_FAMILIES = ("trace", "correctness")
#: Families whose values enter a summary for every item (they do not depend on the judge).
JUDGE_FREE_FAMILIES = ("retrieval",)
AGGREGATES = ("mean",)
METRICS_GROUP = "rag_eval.metrics"
#: this package's own plugins by entry point group, loaded by name whether or not the package's metadata is
#: installed (a Space installs ``requirements.txt`` alone: no dist-info, no entry points): the rubrics
#: ``rag-eval metrics add`` keeps in the data folder
OWN_PLUGINS = {METRICS_GROUP: {"rubrics": "rag_eval.judges.rubric_plugin:RUBRICS"}}


@dataclass(frozen=True, slots=True)
class MetricItem:
    """The one context every metric's ``compute`` sees of one item: ``documents`` are the
    texts of the retrieved or given documents, ``reference`` the reference answer or None;
    ``trace`` the TRACe scores of the judge's usable ``labels`` (None: no usable judgement);
    ``ranking`` the retrieved document ids in rank order (None: nothing was retrieved),
    ``gold_ids`` the gold document ids, ``k`` the run's top-k; ``answer_match`` the verdict
    of the run's LLM on the answer against the reference (None: no LLM, or no verdict:
    ``answer_match_error`` then says why the LLM gave none); ``passage_vectors`` the embeddings
    of the retrieved chunks and of the gold passages of a row without gold ids (None: none)."""

    id: str
    question: str
    response: str
    documents: list[str]
    reference: str | None = None
    #: The item's ISO 639-1 code ("" : the text metrics read it from the texts).
    language: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    labels: Labels | None = None
    trace: TraceScores | None = None
    ranking: Sequence[str] | None = None
    gold_ids: frozenset[str] = frozenset()
    k: int | None = None
    answer_match: float | None = None
    answer_match_error: str | None = None
    passage_vectors: tuple[Any, Any] | None = None  # (retrieved chunks', gold passages') embeddings
    eval_item: EvalItem | None = None  # the keyed sentences the judge labelled (the TRACe group scores them)
    mode: str = "clean"  # the TRACe scoring mode


class Explained(NamedTuple):
    """A per-item value with the reason the metric gives for it (a rubric's one-sentence
    reason from its LLM judge): ``value`` is stored as a plain return would be, ``reason``
    in the record's ``metric_reasons`` under the metric's name."""

    value: float | Mapping[str, float]
    reason: str


MetricValue = float | Mapping[Any, float] | Explained
MetricFunction = Callable[[MetricItem], MetricValue | None]  # None: undefined (a built-in family's only)


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric's declaration (see the module docstring). ``compute`` takes the item's
    :class:`MetricItem` and returns a float, or a dict of named values (stored as
    ``name.key``; a retrieval metric's keys are its cut-offs, stored as ``name@k``), either
    one with its reason as an :class:`Explained`, or raises to mark that item's metric as
    failed with the exception as the reason. A built-in family's metric may return None
    (an undefined value, as TRACe's on an item without document sentences)."""

    name: str
    label: str
    family: str = "custom"
    higher_is_better: bool = True
    range: tuple[float | None, float | None] = (0.0, 1.0)
    needs: frozenset[str] = frozenset({"response"})
    compute: MetricFunction | None = field(default=None, compare=False)
    aggregate: str = "mean"
    help: str = ""
    origin: str = BUILT_IN

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"metric name {self.name!r}: use lower-case letters, digits and _ (it is a column name)")
        if self.family not in FAMILY_FIELD:
            raise ValueError(f"metric {self.name!r}: family must be one of {', '.join(FAMILY_FIELD)}")
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"metric {self.name!r} needs {sorted(unknown)}; choose from {', '.join(NEEDS)}")
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"metric {self.name!r}: aggregate must be one of {', '.join(AGGREGATES)}")

    def key(self, part: Any) -> str:
        """The stored name of one value of a dict result (``recall@5``, ``words.mean``)."""
        return f"{self.name}{'@' if self.family == 'retrieval' else '.'}{part}"

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


class MetricRegistry(Registry[Metric]):
    """Metrics by name, in declaration order (:class:`rag_eval.plugins.Registry`): ``recall@5``
    and ``words.mean`` name the metric before the ``@`` or ``.``; a plugin's module registers
    its metrics with :func:`metric` while it is imported."""

    declares = Metric
    self_registering = True
    noun = "metric"

    def _replaces(self, known: Metric, new: Metric) -> bool:
        """A plugin's new declaration of its own metric (an installed rubric edited, then loaded
        again: same origin) replaces the earlier one; built-ins are never replaced."""
        return known.origin == new.origin and known.origin != BUILT_IN

    def base_name(self, name: str) -> str:
        return re.split(r"[@.]", name, maxsplit=1)[0]

    def names(self, family: str | None = None) -> tuple[str, ...]:
        return tuple(m.name for m in self if family is None or m.family == family)

    def built_in(self) -> tuple[Metric, ...]:
        """The metrics every item gets where they apply (a ``custom`` one when a run asks for it)."""
        return tuple(m for m in self if m.compute is not None and m.family != "custom")

    def per_item(self) -> tuple[Metric, ...]:
        """Metrics an item's own function computes (``custom`` family)."""
        return tuple(m for m in self if m.compute is not None and m.family == "custom")

    def label(self, name: str) -> str:
        """A readable label; ``recall@5`` and ``words.mean`` keep their suffix."""
        found = self.find(name)
        if found is None:
            return name
        if name == found.name:
            return found.label
        return found.label + name[len(found.name):]

    def help(self, name: str) -> str:
        found = self.find(name)
        return found.help if found is not None else ""

    def higher_is_better(self, name: str) -> bool:
        found = self.find(name)
        return True if found is None else found.higher_is_better


METRICS = MetricRegistry(METRICS_GROUP, OWN_PLUGINS[METRICS_GROUP])

F = TypeVar("F", bound=Callable[..., Any])


def metric(
    fn: F | None = None,
    *,
    name: str | None = None,
    label: str | None = None,
    higher_is_better: bool = True,
    range: tuple[float | None, float | None] = (None, None),  # noqa: A002 - the declaration's word
    needs: Sequence[str] = ("response",),
    help: str | None = None,  # noqa: A002
    aggregate: str = "mean",
) -> Any:
    """Register a per-item metric: ``fn(item: MetricItem) -> float | dict[str, float]``.

    ::

        @rag_eval.metric(name="answer_words", higher_is_better=False, label="Answer length (words)")
        def answer_words(item) -> float:
            return len(item.response.split())

    Returns ``fn`` unchanged (its declaration is ``fn.metric``)."""

    def declare(function: F) -> F:
        origin = loading_origin() or getattr(function, "__module__", "") or "user"
        metric_name = name or function.__name__
        declared = Metric(
            name=metric_name, label=label or metric_name.replace("_", " ").capitalize(), family="custom",
            higher_is_better=higher_is_better, range=range, needs=frozenset(needs), compute=function,
            aggregate=aggregate, help=help or (function.__doc__ or "").strip().split("\n\n")[0], origin=origin)
        METRICS.register(declared)
        function.metric = declared  # type: ignore[attr-defined]
        return function

    return declare(fn) if fn is not None else declare


# ---------------------------------------------------------------- per-item computation
class MetricOutcome(NamedTuple):
    """The values one item gave (``name``, ``name.key``, ``name@k``; in ``families`` by family),
    the metrics that failed (with why), the reasons they gave for values (:class:`Explained`)
    and the TRACe group's scoring (None: no usable judgement scored)."""

    values: dict[str, float | None]
    errors: dict[str, str]
    reasons: dict[str, str] = {}  # a NamedTuple default (shared, never mutated)
    families: dict[str, dict[str, float | None]] = {}
    trace: TraceGroup | None = None


class TraceGroup(NamedTuple):
    """What the TRACe group's compute gives one item: its scores (the four TRACe metrics and
    adherence_score, with the scoring's diagnostics) and the report fields read from them."""

    scores: TraceScores
    report: dict[str, Any]


def score_trace(item: MetricItem) -> TraceGroup | None:
    """The compute of the TRACe group (family ``trace`` and the report fields): the scoring
    of the judge's usable ``labels`` over the item's keyed sentences
    (:func:`rag_eval.metrics.trace.score_item`); None without a usable judgement. Each
    ``trace`` metric's own ``compute`` reads its value from it."""
    if item.labels is None or item.eval_item is None:
        return None
    from rag_eval.metrics.report_fields import report_fields
    from rag_eval.metrics.trace import score_item

    scores = score_item(item.eval_item, item.labels, item.mode)
    return TraceGroup(scores, report_fields(scores.metric_values(), item.labels, item.eval_item.response_keys))


def compute_item_metrics(metrics: Iterable[Metric], item: MetricItem) -> MetricOutcome:
    """Run each metric's ``compute`` on ``item``. A float is stored under the metric's name,
    a dict under :meth:`Metric.key`; a function that raises, or returns something that is
    not a finite number, marks that metric failed on this item with the reason (its value
    None, never 0 or NaN). A ``custom`` metric (a run asked for it) whose needs the item lacks
    is failed with the need; a built-in one is not computed where its needs are not met."""
    import math

    metrics = list(metrics)
    scored = score_trace(item) if item.trace is None and any(m.family == "trace" for m in metrics) else None
    if scored is not None:
        item = replace(item, trace=scored.scores)
    values: dict[str, float | None] = {}
    families: dict[str, dict[str, float | None]] = {}
    errors: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for m in metrics:
        if m.compute is None:
            continue
        asked = m.family == "custom"
        if not asked and not _applies(m, item):
            continue
        group = families.setdefault(m.family, {})
        missing = [n for n in ("response", "documents", "reference")
                   if n in m.needs and n not in _implied(m) and not _has(item, n)]
        if missing:
            values[m.name] = group[m.name] = None
            errors[m.name] = f"the item has no {', '.join(missing)}"
            continue
        try:
            out = m.compute(item)
            reason: str | None = None
            if isinstance(out, Explained):
                reason = str(out.reason)
                out = out.value
            named = {m.name: out} if not isinstance(out, Mapping) else {m.key(k): v for k, v in out.items()}
            checked: dict[str, float | None] = {}
            for key, value in named.items():
                if value is None and not asked:
                    checked[key] = None  # undefined on this item (TRACe without document sentences)
                elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise ValueError(f"{key} returned {value!r}, not a finite number")
                else:
                    checked[key] = float(value)
        except Exception as err:  # noqa: BLE001 - a metric's failure is that item's status for it
            values[m.name] = group[m.name] = None
            errors[m.name] = f"{type(err).__name__}: {err}"
            continue
        values.update(checked)
        group.update(checked)
        if reason:
            reasons[m.name] = reason
    return MetricOutcome(values, errors, reasons, families, scored)


def _implied(metric: Metric) -> tuple[str, ...]:
    """Needs a usable judgement's scores stand for (a TRACe metric reads them, not the texts)."""
    return ("documents", "response", "labels") if metric.family == "trace" else ()


def _applies(metric: Metric, item: MetricItem) -> bool:
    if metric.family in JUDGED_FAMILIES and item.trace is None:
        return False
    return all(_has(item, need) for need in metric.needs if need not in _implied(metric))


def _has(item: MetricItem, need: str) -> bool:
    if need in ("response", "reference"):
        text = item.response if need == "response" else item.reference
        return bool(text and text.strip())
    if need == "documents":
        return bool(item.documents)
    if need == "labels":
        return item.trace is not None
    if need == "retrieval":
        return item.ranking is not None and bool(item.gold_ids)
    if need == "passages":
        return item.passage_vectors is not None
    # llm: checked by a built-in metric only, whose LLM verdict (or why there is none) the run fetched beforehand
    return item.answer_match is not None or item.answer_match_error is not None


def item_values(item: Mapping[str, Any]) -> dict[str, Any]:
    """Every metric value a stored item record holds, flat (every family's field)."""
    out: dict[str, Any] = {}
    for group in FAMILY_FIELD.values():
        part = item.get(group)
        if isinstance(part, Mapping):
            out.update(part)
    return out


def _trace(name: str) -> MetricFunction:
    def compute(item: MetricItem) -> MetricValue:
        value = getattr(item.trace, name)
        return float(value) if isinstance(value, bool) else value  # adherence: 0/1

    return compute


def _answer_match(item: MetricItem) -> float | None:
    if item.answer_match_error is not None:  # the LLM was asked and gave no verdict: a failure, never absent
        raise ValueError(f"the LLM gave no verdict ({item.answer_match_error})")
    return item.answer_match


def _bleu(item: MetricItem) -> float:
    from rag_eval.metrics.text import bleu

    return bleu(item.response, item.reference or "", language=item.language or None)


def _rouge_l(item: MetricItem) -> float:
    from rag_eval.metrics.text import rouge

    return float(rouge(item.response, item.reference or "", language=item.language or None)["rougeL"].fmeasure)


def _retrieval(name: str) -> MetricFunction:
    """A retrieval metric of an item's ranking against its gold ids at the run's k (``mrr``
    over the whole ranking)."""
    def compute(item: MetricItem) -> MetricValue:
        ranked, gold = list(item.ranking or ()), set(item.gold_ids)
        if name == "mrr":
            return retrieval_function(name)(ranked, gold)
        return {item.k: retrieval_function(name)(ranked, gold, k=item.k)}

    return compute


def _cosine(name: str) -> MetricFunction:
    """A retrieval metric against gold passages rather than ids: a passage is found when a
    retrieved chunk's embedding is close to its own (one to one, cosine), at the run's k."""
    def compute(item: MetricItem) -> MetricValue:
        from rag_eval.metrics import retrieval

        retrieved, gold = item.passage_vectors or ((), ())
        if not len(retrieved):
            return {item.k: 0.0}  # nothing retrieved: no gold passage found
        return {item.k: getattr(retrieval, f"{name}_at_k_cosine")(retrieved, gold, k=item.k)}

    return compute


# ---------------------------------------------------------------- the built-in metrics
_HELP_ADHERENCE = (
    "yes / no: whether every response sentence is supported by the documents (RAGBench's boolean; one unsupported "
    "sentence makes it no). The number in brackets is the continuous adherence score: the judge's probability that "
    "the response is grounded, or the share of supported sentences. 'no (0.89)' therefore means: at least one "
    "sentence is unsupported, yet most of the response is grounded — not a contradiction.")

_BUILTIN: tuple[Metric, ...] = (
    Metric("context_relevance", "Context relevance", "trace", compute=_trace("context_relevance"),
           needs=frozenset({"documents", "labels"}),
           help="Share of the retrieved document sentences that are relevant to the question (RAGBench: relevant "
                "sentences / all document sentences). Low: the retriever brought noise."),
    Metric("context_utilization", "Context utilization", "trace", compute=_trace("context_utilization"),
           needs=frozenset({"documents", "response", "labels"}),
           help="Share of the retrieved document sentences the response actually used (utilized / all document "
                "sentences). Low with high relevance: the generator ignored context."),
    Metric("completeness", "Completeness", "trace", compute=_trace("completeness"),
           needs=frozenset({"documents", "response", "labels"}),
           help="Of the relevant sentences, the share the response used (|relevant ∩ utilized| / |relevant|); 1.0 "
                "when nothing was relevant. Low: relevant information was left out."),
    Metric("adherence", "Adherence", "trace", compute=_trace("adherence"),
           needs=frozenset({"documents", "response", "labels"}),
           help=_HELP_ADHERENCE),
    Metric("adherence_score", "Adherence score", "trace", compute=_trace("adherence_score"),
           needs=frozenset({"documents", "response", "labels"}),
           help="Continuous adherence: the judge's probability that the response is grounded, or the share of "
                "response sentences not marked unsupported."),
    Metric("bleu", "BLEU", "correctness", compute=_bleu, needs=frozenset({"response", "reference"}),
           help="Sentence BLEU (sacrebleu) of the answer against the reference answer, divided by 100."),
    Metric("rouge_l", "Answer correctness (ROUGE-L)", "correctness", compute=_rouge_l,
           needs=frozenset({"response", "reference"}),
           help="ROUGE-L F1 of the answer against the dataset's reference answer; shown only when the dataset has "
                "reference answers."),
    Metric("answer_match", "Answer match (LLM)", "correctness", compute=_answer_match,
           needs=frozenset({"response", "reference", "llm"}),
           help="1 when an LLM judges the answer to say what the reference answer says, else 0 (only with an LLM "
                "configured)."),
    Metric("recall", "recall", "retrieval", compute=_retrieval("recall"), needs=frozenset({"retrieval"}),
           help="Share of the gold documents found in the top k."),
    Metric("precision", "precision", "retrieval", compute=_retrieval("precision"), needs=frozenset({"retrieval"}),
           help="Share of the top k retrieved documents that are gold documents."),
    Metric("ndcg", "nDCG", "retrieval", compute=_retrieval("ndcg"), needs=frozenset({"retrieval"}),
           help="Normalised discounted cumulative gain at k: 1 when the gold documents are ranked first."),
    Metric("mrr", "MRR", "retrieval", compute=_retrieval("mrr"), needs=frozenset({"retrieval"}),
           help="Mean reciprocal rank: 1 / rank of the first retrieved document that is a gold document (0 when "
                "none is retrieved), averaged over questions."),
    Metric("hit_rate", "hit", "retrieval", compute=_retrieval("hit_rate"), needs=frozenset({"retrieval"}),
           help="1 when at least one gold document is in the top k, averaged over questions."),
    Metric("f1", "F1", "retrieval", compute=_retrieval("f1"), needs=frozenset({"retrieval"}),
           help="Harmonic mean of precision and recall at k."),
    Metric("log_rank", "log rank", "retrieval", compute=_retrieval("log_rank"), needs=frozenset({"retrieval"}),
           help="Hybrid log-rank score of the gold documents' ranks."),
    Metric("recall_cosine", "recall (passages)", "retrieval", compute=_cosine("recall"),
           needs=frozenset({"passages"}),
           help="Share of the gold passages matched one to one by a retrieved chunk in the top k (cosine of their "
                "embeddings; rows with gold passages and no gold document ids)."),
    Metric("precision_cosine", "precision (passages)", "retrieval", compute=_cosine("precision"),
           needs=frozenset({"passages"}),
           help="Share of the top k retrieved chunks matched one to one with a gold passage (cosine of their "
                "embeddings; rows with gold passages and no gold document ids)."),
)
for _declared in _BUILTIN:
    METRICS.register(_declared)

#: The four TRACe metrics (what agreement, the review queue and the spread use).
TRACE_METRICS: tuple[str, ...] = tuple(m.name for m in _BUILTIN if m.family == "trace" and m.name != "adherence_score")
#: A record's ``scores``: the TRACe metrics and the continuous adherence score.
TRACE_SCORES: tuple[str, ...] = tuple(m.name for m in _BUILTIN if m.family == "trace")

# ---------------------------------------------------------------- retrieval metrics by name
# name -> the scalar exact-match function of rag_eval.metrics.retrieval (retrieved, relevant, *, k, ...) -> float
RETRIEVAL_METRICS: dict[str, str] = {
    "precision": "precision_at_k",
    "recall": "recall_at_k",
    "f1": "f1_at_k",
    "hit_rate": "hit_rate_at_k",
    "mrr": "reciprocal_rank",
    "ndcg": "ndcg_at_k",
    "log_rank": "hybrid_log_rank",
}


def retrieval_function(metric: str) -> Callable[..., float]:
    """The function behind a retrieval metric's name (imported on first use)."""
    from rag_eval.metrics import retrieval

    return getattr(retrieval, RETRIEVAL_METRICS[metric])
if set(RETRIEVAL_METRICS) != {m.name for m in _BUILTIN if m.family == "retrieval" and "passages" not in m.needs}:
    raise ImportError("every retrieval function needs its declaration in _BUILTIN (and the other way round)")

# Parameters a metric accepts besides k, so options reach only the metrics that use them.
_METRIC_PARAMS: dict[str, frozenset[str]] = {
    "precision": frozenset({"denominator"}),
    "f1": frozenset({"denominator"}),
    "ndcg": frozenset({"gain"}),
    "log_rank": frozenset({"alpha", "gamma"}),
}

_NAME = re.compile(r"^\s*([a-z_0-9]+?)\s*(?:@\s*(\d+))?\s*$")


class MetricName(NamedTuple):
    metric: str
    k: int | None

    def __str__(self) -> str:
        return self.metric if self.k is None else f"{self.metric}@{self.k}"


def unsupported_message(name: str) -> str:
    return f"unsupported metric {name!r}; use one of {', '.join(sorted(RETRIEVAL_METRICS))}, optionally with @k (e.g. recall@5)"


def parse_metric_name(name: str) -> MetricName:
    """``"ndcg@10"`` -> ``MetricName("ndcg", 10)``; ``"MRR"`` -> ``("mrr", None)``.
    Raises ValueError for an unknown metric or a bad ``k``."""
    if not isinstance(name, str):
        raise ValueError(f"metric name must be a string, got {type(name).__name__}")
    match = _NAME.match(name.lower())
    if not match:
        raise ValueError(unsupported_message(name))
    metric, k = match.group(1), match.group(2)
    if metric not in RETRIEVAL_METRICS:
        raise ValueError(unsupported_message(name))
    return MetricName(metric, None if k is None else check_k(int(k), f"k in {name!r}"))


def resolve_metric(name: str, **params: Any) -> Callable[[Sequence[Any], Any], float]:
    """A one-query function ``f(retrieved, relevant) -> float`` for ``name``, with ``k``
    and whichever of ``params`` (denominator, gain, alpha, gamma) the metric takes."""
    parsed = parse_metric_name(name)
    allowed = _METRIC_PARAMS.get(parsed.metric, frozenset())
    kwargs = {key: value for key, value in params.items() if key in allowed}
    return partial(retrieval_function(parsed.metric), k=parsed.k, **kwargs)


def evaluate_run(run: Mapping[str, Sequence[Any]], qrels: Mapping[str, Any], metrics: Sequence[str],
                 **params: Any) -> dict[str, BatchScore]:
    """Each named metric's mean over the queries of ``qrels`` (see :class:`BatchScore`)."""
    from rag_eval.metrics import retrieval

    functions = {str(parse_metric_name(m)): resolve_metric(m, **params) for m in metrics}
    return {name: retrieval.mean_over_queries(fn, run, qrels) for name, fn in functions.items()}
