"""Judges against human labels, and judges against each other. Pure functions.

For each judge that labelled reviewed rows:

- TRACe agreement from :func:`rag_eval.metrics.agreement.agreement`: RMSE per metric
  with bootstrap intervals, hallucination AUROC (label = human says not adherent,
  score = 1 - the judge's continuous adherence), coverage;
- sentence-level precision / recall / F1 of the relevant keys, the utilized keys and
  the supporting keys (pairs ``(response key, document key)``), micro-averaged: true
  positives, false positives and false negatives are summed over rows first;
- Cohen's kappa on the adherence verdict (scikit-learn).

Edge cases, decided once here: precision is undefined (None) when the judge marked no
key in any row, recall when the human marked none; F1 is None when both are; kappa is
None when fewer than two rows or both raters give one constant verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from rag_eval.metrics.aggregate import AsDict
from rag_eval.metrics.agreement import AgreementReport, agreement, agreement_by_language, rmse
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.runs.summary import UNKNOWN_LANGUAGE
from rag_eval.schema import Labels
from rag_eval.text.keys import normalize_key, parse_document_key

KEY_KINDS = ("relevant", "utilized", "supporting")


@dataclass(frozen=True, slots=True)
class PRF(AsDict):
    precision: float | None
    recall: float | None
    f1: float | None
    tp: int
    fp: int
    fn: int


def set_prf(predicted: Sequence[Iterable[Any]], truth: Sequence[Iterable[Any]]) -> PRF:
    """Micro-averaged precision, recall and F1 of aligned sets (``predicted[i]`` vs ``truth[i]``)."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predicted sets but {len(truth)} truth sets")
    tp = fp = fn = 0
    for p, t in zip(predicted, truth):
        ps, ts = set(p), set(t)
        tp += len(ps & ts)
        fp += len(ps - ts)
        fn += len(ts - ps)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    denom = 2 * tp + fp + fn
    f1 = 2 * tp / denom if denom else None
    return PRF(precision, recall, f1, tp, fp, fn)


def key_sets(labels: Labels) -> dict[str, set[Any]]:
    """Normalised relevant keys, utilized keys and (response key, document key) support pairs."""
    support = {
        (normalize_key(s.response_sentence_key), normalize_key(k))
        for s in labels.sentence_support_information
        for k in s.supporting_sentence_keys
        if parse_document_key(normalize_key(k)) is not None
    }
    return {
        "relevant": {normalize_key(k) for k in labels.all_relevant_sentence_keys},
        "utilized": {normalize_key(k) for k in labels.all_utilized_sentence_keys},
        "supporting": support,
    }


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> tuple[float | None, str | None]:
    """Cohen's kappa of two raters' verdicts (scikit-learn), or None with the reason."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} verdicts against {len(b)}")
    if len(a) < 2:
        return None, f"too few rows ({len(a)})"
    if len(set(a) | set(b)) < 2:
        return None, "both raters give one constant verdict"
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score([bool(x) for x in a], [bool(x) for x in b]))
    return (None, "undefined (chance agreement is 1)") if math.isnan(value) else (value, None)


@dataclass(slots=True)
class JudgeAgreement:
    """One judge against the human labels on the rows both labelled."""

    judge: str
    n_rows: int
    trace: AgreementReport
    sentences: dict[str, PRF]
    kappa: float | None
    kappa_reason: str | None = None
    item_ids: list[str] = field(default_factory=list)
    #: ``trace`` per language of the rows, when they hold more than one (``rag-eval agreement``'s breakdown)
    by_language: dict[str, AgreementReport] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge, "n_rows": self.n_rows, "trace": self.trace.to_dict(),
            "sentences": {k: v.to_dict() for k, v in self.sentences.items()},
            "adherence_kappa": self.kappa, "adherence_kappa_reason": self.kappa_reason,
            "item_ids": self.item_ids,
            **({"by_language": {k: v.to_dict() for k, v in self.by_language.items()}} if self.by_language else {}),
        }


@dataclass(frozen=True, slots=True)
class Rated:
    """One rater's labels and TRACe scores on one row (a judge or a human reviewer)."""

    rater: str
    id: str
    labels: Labels
    scores: Mapping[str, Any]


def _adherent(scores: Mapping[str, Any]) -> bool | None:
    value = scores.get("adherence")
    return None if value is None else bool(value)


def _verdict_kappa(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> tuple[float | None, str | None]:
    """Kappa on the adherence verdicts of the rows where both raters give one."""
    left: list[bool] = []
    right: list[bool] = []
    for x, y in zip(a, b):
        va, vb = _adherent(x), _adherent(y)
        if va is not None and vb is not None:
            left.append(va)
            right.append(vb)
    return cohen_kappa(left, right)


def judge_vs_human(judged: Sequence[Rated], human: Mapping[str, Rated], *, n_boot: int = 1000,
                   seed: int = 0, languages: Mapping[str, str] | None = None) -> list[JudgeAgreement]:
    """Each judge in ``judged`` against ``human`` (item id -> the human rating), on the
    items both labelled, judges in name order. ``languages`` (item id -> its language): the
    TRACe agreement is also broken down by language when the rows hold more than one."""
    by_judge: dict[str, list[Rated]] = {}
    for r in judged:
        if r.id in human:
            by_judge.setdefault(r.rater, []).append(r)
    out = []
    for judge in sorted(by_judge):
        rows = sorted(by_judge[judge], key=lambda r: r.id)
        truths = [human[r.id] for r in rows]
        predicted, true = [dict(r.scores) for r in rows], [dict(t.scores) for t in truths]
        report = agreement(predicted, true, n_boot=n_boot, seed=seed)
        of = [(languages or {}).get(r.id) or UNKNOWN_LANGUAGE for r in rows]
        by_language = agreement_by_language(predicted, true, of, n_boot=n_boot, seed=seed)
        pred_sets = [key_sets(r.labels) for r in rows]
        true_sets = [key_sets(t.labels) for t in truths]
        sentences = {k: set_prf([p[k] for p in pred_sets], [t[k] for t in true_sets]) for k in KEY_KINDS}
        kappa, why = _verdict_kappa([r.scores for r in rows], [t.scores for t in truths])
        out.append(JudgeAgreement(judge, len(rows), report, sentences, kappa, why, [r.id for r in rows], by_language))
    return out


@dataclass(frozen=True, slots=True)
class PairAgreement(AsDict):
    """Two raters on the rows both labelled."""

    a: str
    b: str
    n_rows: int
    rmse: dict[str, float | None]
    kappa: float | None
    kappa_reason: str | None
    relevant_f1: float | None


def pairwise(ratings: Sequence[Rated]) -> list[PairAgreement]:
    """Every pair of raters that labelled at least one common row: RMSE of each TRACe
    metric between them, kappa on adherence and F1 of relevant keys (a against b)."""
    by_rater: dict[str, dict[str, Rated]] = {}
    for r in ratings:
        by_rater.setdefault(r.rater, {})[r.id] = r
    out = []
    for a, b in combinations(sorted(by_rater), 2):
        common = sorted(set(by_rater[a]) & set(by_rater[b]))
        if not common:
            continue
        ra, rb = [by_rater[a][i] for i in common], [by_rater[b][i] for i in common]
        errors = {m: rmse([x.scores.get(m) for x in ra], [y.scores.get(m) for y in rb]) for m in TRACE_METRICS}
        kappa, why = _verdict_kappa([x.scores for x in ra], [y.scores for y in rb])
        f1 = set_prf([key_sets(x.labels)["relevant"] for x in ra], [key_sets(y.labels)["relevant"] for y in rb]).f1
        out.append(PairAgreement(a, b, len(common), errors, kappa, why, f1))
    return out


#: The word-overlap reference's rater name (:mod:`rag_eval.judges.lexical`): shown beside every judge.
REFERENCE = "lexical (reference)"
REFERENCE_NOTE = (f"{REFERENCE}: word overlap alone, recomputed on the reviewed rows: a judge that does not beat it "
                  "on these rows adds nothing over counting shared words.")


def reference_ratings_of(items: Sequence[Any]) -> list[Rated]:
    """The lexical reference judge's ratings of ``items`` (the reviewed rows as reviewed),
    scored as a run scores a judge's labels; rows it cannot judge are left out, as a failed
    judge row is."""
    from rag_eval.judges.lexical import LexicalJudge
    from rag_eval.metrics.trace import score_item

    by_id = {item.id: item for item in items}
    out = []
    for result in LexicalJudge().judge(list(items)):
        if result.status.usable and result.labels is not None:
            scores = score_item(by_id[result.id], result.labels)
            out.append(Rated(REFERENCE, result.id, result.labels,
                             dict(scores.metric_values(), adherence_score=scores.adherence_score)))
    return out


def human_ratings(label_sets: Sequence[Mapping[str, Any]]) -> list[Rated]:
    """Label sets (as the store returns them) as ratings by ``human:<reviewer>``."""
    return [Rated(f"human:{s['reviewer']}", str(s["item_id"]), Labels.from_dict(s["labels"]), dict(s["scores"]))
            for s in label_sets]


def reference_sets(label_sets: Sequence[Mapping[str, Any]], reviewer: str | None = None) -> list[Mapping[str, Any]]:
    """The human truth's label set per item: ``reviewer``'s, or (None) the latest save of any reviewer."""
    chosen: dict[str, Mapping[str, Any]] = {}
    for s in label_sets:
        if reviewer is not None and s["reviewer"] != reviewer:
            continue
        current = chosen.get(str(s["item_id"]))
        if current is None or (s["created_at"], s.get("id", 0)) > (current["created_at"], current.get("id", 0)):
            chosen[str(s["item_id"])] = s
    return list(chosen.values())


def reference_ratings(label_sets: Sequence[Mapping[str, Any]], reviewer: str | None = None) -> dict[str, Rated]:
    """The human truth per item (:func:`reference_sets`) as ratings."""
    return {r.id: r for r in human_ratings(reference_sets(label_sets, reviewer))}


# ---------------------------------------------------------------- per-item metrics against reviewers
#: Fewer scored rows than this leave a rank correlation undefined.
MIN_RANK_ROWS = 3


@dataclass(frozen=True, slots=True)
class MetricAgreement(AsDict):
    """A per-item metric (a rubric, a plugin's) against the reviewers' scores of it, on
    the rows both scored: mean absolute error, RMSE (in the metric's own units) and
    Spearman's rank correlation (None with the reason when undefined)."""

    metric: str
    n_rows: int
    mae: float | None
    rmse: float | None
    spearman: float | None
    spearman_reason: str | None = None
    item_ids: list[str] = field(default_factory=list)


def spearman(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, str | None]:
    """Spearman's rank correlation of aligned values (scipy), or None with the reason."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} values against {len(b)}")
    if len(a) < MIN_RANK_ROWS:
        return None, f"too few rows ({len(a)})"
    if len(set(a)) < 2 or len(set(b)) < 2:
        return None, "one side gives one constant score"
    from scipy.stats import spearmanr

    value = float(spearmanr(a, b).statistic)
    return (None, "undefined") if math.isnan(value) else (value, None)


def metric_vs_human(measured: Mapping[str, Mapping[str, Any]], human: Mapping[str, Mapping[str, Any]]
                    ) -> list[MetricAgreement]:
    """Each metric the reviewers scored, against the values it gave: ``measured`` is item
    id -> the item's metric values (a failed metric's None is left out, never a 0; a
    sampled rubric's ``NAME.mean`` stands for ``NAME``), ``human`` item id -> the reviewer's
    scores. Metrics in name order."""

    def value(item_id: str, name: str) -> Any:
        values = measured.get(item_id) or {}
        return values.get(name, values.get(f"{name}.mean"))

    names = sorted({n for scores in human.values() for n in scores})
    out = []
    for name in names:
        pairs = [(i, float(value(i, name)), float(human[i][name])) for i in sorted(human)
                 if human[i].get(name) is not None and value(i, name) is not None]
        got, truth = [p[1] for p in pairs], [p[2] for p in pairs]
        errors = [abs(x - y) for x, y in zip(got, truth)]
        mae = sum(errors) / len(errors) if errors else None
        rho, why = spearman(got, truth)
        out.append(MetricAgreement(name, len(pairs), mae, rmse(got, truth), rho, why, [p[0] for p in pairs]))
    return out
