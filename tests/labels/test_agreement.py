"""Agreement figures against hand-computed small cases."""

from __future__ import annotations

import math

import pytest

from rag_eval.labels.agreement import (
    Rated,
    cohen_kappa,
    judge_vs_human,
    key_sets,
    pairwise,
    set_prf,
)
from rag_eval.schema import Labels, SentenceSupport


def test_set_prf_micro_average_by_hand():
    # row 1: pred {a, b}, truth {a, c} -> tp 1, fp 1, fn 1; row 2: pred {d}, truth {d} -> tp 1
    prf = set_prf([{"a", "b"}, {"d"}], [{"a", "c"}, {"d"}])
    assert (prf.tp, prf.fp, prf.fn) == (2, 1, 1)
    assert prf.precision == pytest.approx(2 / 3) and prf.recall == pytest.approx(2 / 3)
    assert prf.f1 == pytest.approx(2 / 3)


def test_set_prf_edge_cases():
    none_predicted = set_prf([set()], [{"a"}])
    assert none_predicted.precision is None and none_predicted.recall == 0.0 and none_predicted.f1 == 0.0
    empty = set_prf([set()], [set()])
    assert empty.precision is None and empty.recall is None and empty.f1 is None
    with pytest.raises(ValueError):
        set_prf([set()], [])


def test_cohen_kappa_by_hand():
    # 4 rows: agree on 3. p_o = 3/4; rater a: T,T,F,F; b: T,T,F,T -> p_e = (2/4*3/4) + (2/4*1/4) = 1/2
    kappa, why = cohen_kappa([True, True, False, False], [True, True, False, True])
    assert why is None and kappa == pytest.approx((0.75 - 0.5) / (1 - 0.5))
    assert cohen_kappa([True, True], [True, True]) == (None, "both raters give one constant verdict")
    assert cohen_kappa([True], [False])[0] is None


def _labels(rel, util, unsupported=(), support=None):
    return Labels(all_relevant_sentence_keys=list(rel), all_utilized_sentence_keys=list(util),
                  unsupported_response_sentence_keys=list(unsupported),
                  sentence_support_information=[SentenceSupport(k, v) for k, v in (support or {}).items()])


def _scores(rel, util, adherent, score=None):
    return {"context_relevance": rel, "context_utilization": util, "completeness": 1.0,
            "adherence": float(adherent), "adherence_score": float(adherent) if score is None else score}


def test_key_sets_keep_only_document_support_keys():
    s = key_sets(_labels(["0a", "0A"], ["1b"], support={"a": ["0a", "general"], "b": ["1b"]}))
    assert s["relevant"] == {"0a"} and s["utilized"] == {"1b"}
    assert s["supporting"] == {("a", "0a"), ("b", "1b")}


def test_judge_vs_human_small_case():
    human = {
        "r1": Rated("human:h", "r1", _labels(["0a", "0b"], ["0a"]), _scores(0.5, 0.25, True)),
        "r2": Rated("human:h", "r2", _labels(["0a"], ["0a"], ["a"]), _scores(0.25, 0.25, False)),
        "r3": Rated("human:h", "r3", _labels([], []), _scores(0.0, 0.0, True)),
    }
    judged = [
        Rated("j", "r1", _labels(["0a"], ["0a"]), _scores(0.25, 0.25, True, 0.9)),
        Rated("j", "r2", _labels(["0a", "0c"], []), _scores(0.5, 0.0, True, 0.4)),
        Rated("j", "r3", _labels([], []), _scores(0.0, 0.0, True, 0.8)),
        Rated("j", "not-reviewed", _labels([], []), _scores(1.0, 1.0, True)),
    ]
    (res,) = judge_vs_human(judged, human, n_boot=200, seed=1)
    assert res.n_rows == 3 and res.item_ids == ["r1", "r2", "r3"]
    # relevance errors 0.25, 0.25, 0 -> RMSE sqrt(0.125 / 3)
    assert res.trace.rmse["context_relevance"].value == pytest.approx(math.sqrt(0.125 / 3))
    assert res.trace.rmse["context_utilization"].value == pytest.approx(math.sqrt(0.0625 / 3))
    # hallucinated: r2 only -- too few to rank (an AUROC needs 5 rows of each class): withheld, with the counts
    auroc = res.trace.hallucination_auroc
    assert auroc.value is None and "too few rows" in auroc.reason and "1 hallucinated" in auroc.reason
    # relevant: tp 2 (0a, 0a), fp 1 (0c), fn 1 (0b)
    assert (res.sentences["relevant"].tp, res.sentences["relevant"].fp, res.sentences["relevant"].fn) == (2, 1, 1)
    # utilized: tp 1, fn 1 -> precision 1, recall 0.5
    assert res.sentences["utilized"].precision == 1.0 and res.sentences["utilized"].recall == 0.5
    # adherence: judge says all adherent, human says one not -> judge constant; kappa = 0
    assert res.kappa == pytest.approx(0.0)


def test_pairwise_two_judges():
    a = [Rated("a", "r1", _labels(["0a"], []), _scores(0.5, 0.0, True)),
         Rated("a", "r2", _labels(["0b"], []), _scores(0.5, 0.0, False))]
    b = [Rated("b", "r1", _labels(["0a"], []), _scores(0.0, 0.0, True)),
         Rated("b", "r2", _labels(["0a"], []), _scores(0.5, 0.0, False)),
         Rated("b", "r3", _labels([], []), _scores(0.0, 0.0, True))]
    (p,) = pairwise([*a, *b])
    assert (p.a, p.b, p.n_rows) == ("a", "b", 2)
    assert p.rmse["context_relevance"] == pytest.approx(math.sqrt(0.25 / 2))
    assert p.kappa == pytest.approx(1.0)
    assert p.relevant_f1 == pytest.approx(0.5)  # tp 1, fp 1, fn 1
