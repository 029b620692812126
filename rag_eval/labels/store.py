"""Human label sets in the run store, beside (never over) the judge's labels.

Every save appends a row to the store's ``human_labels`` table; the latest save per
item and reviewer is the current label set, so two reviewers' labels stay apart and
earlier saves remain as history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rag_eval.labels.review import build_label_set, item_hash
from rag_eval.runs.store import RunStore
from rag_eval.schema import EvalItem, Labels
from rag_eval.text.sentences import item_from_row

if TYPE_CHECKING:
    from rag_eval.labels.agreement import Rated

ADHOC_PREFIX = "adhoc:"


def adhoc_run_id(source: str) -> str:
    """Where rows reviewed outside a run (an Ask result, a dataset sample) are kept."""
    return f"{ADHOC_PREFIX}{source}"


def save_review(store: RunStore, run_id: str, item: EvalItem, labels: Labels, reviewer: str, *,
                created_at: str | None = None, **details: Any) -> dict[str, Any]:
    """Store one human label set (scores recomputed from ``labels``; ``details``: the
    ``note``, ``judge``, ``source`` and reviewer's ``metrics`` of :func:`build_label_set`)
    and return it as read back."""
    record = build_label_set(item, labels, **details)
    store.add_human_labels(run_id, item.id, reviewer, record, created_at=created_at)
    saved = latest_review(store, run_id, item.id, reviewer)
    if saved is None:  # pragma: no cover - the write above either raised or is readable
        raise RuntimeError("the saved label set could not be read back")
    return saved


def latest_review(store: RunStore, run_id: str, item_id: str, reviewer: str) -> dict[str, Any] | None:
    sets = [s for s in store.human_labels(run_id, reviewer=reviewer) if s["item_id"] == str(item_id)]
    return sets[-1] if sets else None


def reviews(store: RunStore, run_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
    """The current label set of every reviewed item (per reviewer) of a run."""
    return store.human_labels(run_id, reviewer=reviewer)


def reviewed_scores(store: RunStore, run_ids: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per run, item id -> the reviewer's scores of the item: TRACe recomputed from the
    current human label set (the latest save of any reviewer, the truth agreement uses) and
    the per-item metrics the reviewer scored. What Compare sets against the judge's scores."""
    from rag_eval.labels.agreement import reference_sets

    return {run_id: {str(s["item_id"]): {**(s.get("scores") or {}), **(s.get("metrics") or {})}
                     for s in reference_sets(reviews(store, run_id))} for run_id in run_ids}


@dataclass(frozen=True, slots=True)
class Progress:
    reviewed: int  # items with at least one human label set
    total: int  # items of the run
    reviewers: tuple[str, ...]

    @property
    def text(self) -> str:
        who = f" by {', '.join(self.reviewers)}" if self.reviewers else ""
        return f"{self.reviewed} of {self.total} rows reviewed{who}"


def review_progress(store: RunStore, run_id: str) -> Progress:
    sets = store.human_labels(run_id)
    total = len(store.item_statuses(run_id)) if not run_id.startswith(ADHOC_PREFIX) else len(
        {s["item_id"] for s in sets})
    return Progress(len({s["item_id"] for s in sets}), total, tuple(sorted({s["reviewer"] for s in sets})))


def item_from_record(record: dict[str, Any]) -> EvalItem:
    """The judged item of a stored run record (the support map shows it, a review keys its
    labels to it): records that kept their keyed sentences (``item``) are used as stored;
    pipeline records are re-keyed from their chunks and answer exactly as the pipeline
    keyed them (``runs.ask.build_item``, with the extractive answer's own sentences)."""
    stored = record.get("item")
    if isinstance(stored, dict) and stored.get("documents_sentences") is not None:
        return item_from_row({"id": record.get("id"), "question": record.get("question"), **stored})
    from rag_eval.rag.retrieve import RetrievedChunk
    from rag_eval.runs.ask import build_item

    chunks = [RetrievedChunk.from_dict(c) for c in record.get("chunks") or []]
    chosen = (record.get("generator") or {}).get("sentences") or None  # the extractive answer's own sentences
    return build_item(str(record.get("id")), str(record.get("question") or ""), chunks,
                      str(record.get("answer") or ""), response_sentences=chosen)


def judgements_for(store: RunStore, label_sets: list[dict[str, Any]]) -> list[Rated]:
    """Every judge's usable labels on the reviewed rows, rated by the judge: the items, in
    any run, with the same id and the same content (question, keyed documents and response)
    as a reviewed row. A row judged again by the same judge counts once (its latest run)."""
    from rag_eval.labels.agreement import Rated

    wanted = {(s["item_id"], s.get("item_hash")) for s in label_sets}
    out: dict[tuple[str, str], Rated] = {}
    for _run_id, record in sorted(store.items_with_ids({i for i, _ in wanted}), key=lambda x: x[0]):
        if record.get("status") not in ("ok", "repaired") or not isinstance(record.get("labels"), dict):
            continue
        if not record.get("judge") or not isinstance(record.get("scores"), dict):
            continue
        try:
            h = item_hash(item_from_record(record))
        except (ValueError, KeyError, TypeError):
            continue
        if (str(record["id"]), h) not in wanted:
            continue
        out[(str(record["judge"]), str(record["id"]))] = Rated(
            str(record["judge"]), str(record["id"]), Labels.from_dict(record["labels"]), dict(record["scores"]))
    return list(out.values())


def _languages(store: RunStore, run_id: str, reviewed: Sequence[EvalItem]) -> dict[str, str]:
    """Each reviewed row's language: the run's item's (a row's or the configuration's
    language, else detected when the run judged it), else the reviewed text's, detected."""
    stored = {} if run_id.startswith(ADHOC_PREFIX) else {
        str(i["id"]): str(i["language"]) for i in store.items(run_id, ("id", "language")) if i.get("language")}
    return {item.id: stored.get(item.id) or item.language for item in reviewed}


@dataclass(slots=True)
class RunAgreement:
    """Every judge against the human labels of a run's reviewed rows, and rater pairs."""

    run_id: str
    n_reviewed: int
    reviewer: str | None
    judges: list[Any]  # list[agreement.JudgeAgreement]
    pairs: list[Any]  # list[agreement.PairAgreement]
    metrics: list[Any] = field(default_factory=list)  # list[agreement.MetricAgreement]: per-item metrics
    reference: str | None = None  # the word-overlap reference's name among ``judges`` (agreement.REFERENCE)

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "n_reviewed": self.n_reviewed, "reviewer": self.reviewer,
                "judges": [j.to_dict() for j in self.judges], "pairs": [p.to_dict() for p in self.pairs],
                "metrics": [m.to_dict() for m in self.metrics], "reference": self.reference}


def agreement_for_run(store: RunStore, run_id: str, reviewer: str | None = None, n_boot: int = 1000,
                      seed: int = 0) -> RunAgreement:
    """Judge-vs-human and rater-vs-rater agreement on the run's reviewed rows, and each
    per-item metric the reviewers scored (a rubric) against the run's own values of it."""
    from rag_eval.labels.agreement import (
        REFERENCE,
        human_ratings,
        judge_vs_human,
        metric_vs_human,
        pairwise,
        reference_ratings,
        reference_ratings_of,
        reference_sets,
    )
    from rag_eval.schema import is_usable

    sets = reviews(store, run_id)
    truth = reference_ratings(sets, reviewer)
    scored = {str(s["item_id"]): dict(s["metrics"]) for s in reference_sets(sets, reviewer) if s.get("metrics")}
    measured = {}
    if scored and not run_id.startswith(ADHOC_PREFIX):  # the run's values, of usable items only (as summaries)
        measured = {str(i["id"]): dict(i.get("metrics") or {})
                    for i in store.items(run_id, ("id", "status", "metrics")) if is_usable(i.get("status"))}
    metrics = metric_vs_human(measured, scored) if scored else []
    judged = judgements_for(store, sets)
    reviewed = [item_from_row(dict(s["item"])) for s in reference_sets(sets, reviewer)]
    # beside every judge, word overlap on the same rows: the floor a judge must beat
    judged += reference_ratings_of(reviewed)
    judges = judge_vs_human(judged, truth, n_boot=n_boot, seed=seed, languages=_languages(store, run_id, reviewed))
    # Judge against judge, reviewer against reviewer (judge against human is above).
    pairs = [p for p in pairwise([*judged, *human_ratings(sets)])
             if p.a.startswith("human:") == p.b.startswith("human:")]
    return RunAgreement(run_id, len(truth), reviewer, judges, pairs, metrics,
                        reference=REFERENCE if any(j.judge == REFERENCE for j in judges) else None)
