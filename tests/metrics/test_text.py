"""BLEU and ROUGE wrappers: scale, empty inputs, and agreement with the libraries."""

import pytest
import sacrebleu
from rouge_score import rouge_scorer

from rag_eval.metrics.text import bleu, rouge


def test_bleu_identical_is_one_and_matches_sacrebleu_scaled():
    assert bleu("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(1.0)
    hyp, ref = "the cat is on the mat", "there is a cat on the mat"
    assert bleu(hyp, ref) == pytest.approx(sacrebleu.sentence_bleu(hyp, [ref]).score / 100)
    assert bleu(hyp, [ref, hyp]) == pytest.approx(1.0)


def test_rouge_by_hand_like_rouge_score():
    # Two of the reference's four unigrams: P=1, R=1/2, F=2/3.
    scores = rouge("testing one", "testing one two three", use_stemmer=False)
    assert scores["rouge1"] == pytest.approx((1.0, 0.5, 2 / 3))
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    hyp, ref = "the cats were sitting on mats", "a cat sat on the mat"
    expected = scorer.score(ref, hyp)
    got = rouge(hyp, ref)
    for name in ("rouge1", "rouge2", "rougeL"):
        assert got[name].fmeasure == pytest.approx(expected[name].fmeasure)
        assert got[name].precision == pytest.approx(expected[name].precision)


@pytest.mark.parametrize("hyp, ref", [("", "a reference"), ("a hypothesis", ""), ("", "")])
def test_empty_text_gives_zero(hyp, ref):
    assert bleu(hyp, ref) == 0.0
    assert all(s.fmeasure == 0.0 for s in rouge(hyp, ref).values())


@pytest.mark.parametrize(
    "call",
    [lambda: bleu(None, "x"), lambda: bleu("x", [1]), lambda: rouge("x", None)],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
