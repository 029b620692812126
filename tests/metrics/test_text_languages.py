"""BLEU and ROUGE in every language: an answer identical to its reference scores 1, a
wrong one does not, and English scores are what they were before languages (rouge-score's
own tokenizer and stemmer, sacrebleu's 13a)."""

import pytest

from rag_eval.metrics.registry import METRICS, MetricItem
from rag_eval.metrics.text import bleu, bleu_tokenizer, rouge

# (language, reference, a wrong answer on the same subject)
PAIRS = [
    ("ru", "Москва — столица России.", "Париж — столица Франции."),
    ("zh", "北京是中国的首都。", "上海是中国最大的城市。"),
    ("ja", "東京は日本の首都です。", "大阪は日本の大きな都市です。"),
    ("th", "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", "เชียงใหม่เป็นเมืองใหญ่ทางภาคเหนือ"),
    ("ar", "القاهرة هي عاصمة مصر.", "الرياض هي عاصمة السعودية."),
    ("hi", "नई दिल्ली भारत की राजधानी है।", "मुंबई भारत का सबसे बड़ा शहर है।"),
    ("ko", "서울은 한국의 수도입니다.", "부산은 한국의 항구 도시입니다."),
    ("el", "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "Η Θεσσαλονίκη είναι μεγάλη πόλη."),
]


@pytest.mark.parametrize(("language", "reference", "wrong"), PAIRS)
@pytest.mark.parametrize("given", [True, False])
def test_identical_answer_scores_one_and_a_wrong_one_does_not(language, reference, wrong, given):
    lang = language if given else None
    assert bleu(reference, reference, language=lang) == pytest.approx(1.0)
    assert all(s.fmeasure == pytest.approx(1.0) for s in rouge(reference, reference, language=lang).values())
    assert bleu(wrong, reference, language=lang) < 0.5
    assert rouge(wrong, reference, language=lang)["rougeL"].fmeasure < 0.6


def test_partial_overlap_gets_partial_credit_in_chinese():
    # With English tokenization the whole sentence was one token: all or nothing.
    score = rouge("北京是中国的首都。", "北京是中华人民共和国的首都。", language="zh")["rougeL"].fmeasure
    assert 0.5 < score < 1.0
    assert 0.0 < bleu("北京是中国的首都。", "北京是中华人民共和国的首都。", language="zh") < 1.0


def test_each_language_has_sacrebleus_tokenizer():
    assert [bleu_tokenizer(c) for c in ("en", "zh", "ja", "th", "ru", "ar", "ko")] == [
        "13a", "zh", "char", "char", "intl", "intl", "intl"]


# Values of main before languages (sacrebleu 13a, rouge-score with Porter stemming).
ENGLISH = [
    ("The Eiffel Tower is in Paris.", "The Eiffel Tower is located in Paris, France.",
     0.3310175185585076, 0.8571428571428571),
    ("Hold the power button for ten seconds.", "Press and hold the power button for 10 seconds to restart the TV.",
     0.1807288326053166, 0.6),
    ("It was founded in 1998 by Larry Page and Sergey Brin.", "Google was founded by Larry Page and Sergey Brin in 1998.",
     0.5280972216470737, 0.7272727272727273),
]


@pytest.mark.parametrize(("hypothesis", "reference", "bleu_before", "rouge_l_before"), ENGLISH)
@pytest.mark.parametrize("language", [None, "en"])
def test_english_scores_are_unchanged(hypothesis, reference, bleu_before, rouge_l_before, language):
    assert bleu(hypothesis, reference, language=language) == pytest.approx(bleu_before)
    assert rouge(hypothesis, reference, language=language)["rougeL"].fmeasure == pytest.approx(rouge_l_before)


def test_a_short_english_answer_with_typographic_quotes_stays_english():
    from rouge_score import rouge_scorer

    hyp, ref = "It’s “Paris”.", "It’s Paris, France."
    expected = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(ref, hyp)["rougeL"].fmeasure
    assert rouge(hyp, ref)["rougeL"].fmeasure == pytest.approx(expected)


def test_english_rouge_with_accents_is_unchanged():
    assert rouge("café au lait costs 3€", "The café sells café au lait for 3€.",
                 language="en")["rougeL"].fmeasure == pytest.approx(0.6153846153846154)


def test_the_registry_passes_the_items_language():
    item = MetricItem(id="1", question="首都は？", response="東京は日本の首都です。", documents=[],
                      reference="東京は日本の首都です。", language="ja")
    assert METRICS.get("bleu").compute(item) == pytest.approx(1.0)
    assert METRICS.get("rouge_l").compute(item) == pytest.approx(1.0)
