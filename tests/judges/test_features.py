"""Pure feature functions of the local judge, on hand-made inputs."""

from __future__ import annotations

import numpy as np
import pytest

from rag_eval.judges import features as F


def test_numbers_normalise_thousands_and_keep_decimals():
    assert F.numbers("In 1998 it cost $1,000 and 3.50 euros.") == {"1998", "1000", "3.50"}
    assert F.numbers("no digits here") == set()


def test_named_tokens_skip_sentence_starts_and_stopwords():
    names = F.names_and_capitals("The Eiffel Tower is in Paris. It opened in 1889.")[0]
    assert {"eiffel", "tower", "paris"} <= names
    assert "the" not in names and "it" not in names


def test_content_tokens_drop_stopwords_and_strip_plurals():
    assert F.content_tokens("The viruses of the cities") == ["virus", "city"]
    assert F.content_tokens("a virus") == ["virus"]


@pytest.mark.parametrize("needles,haystack,expected", [
    (["a", "b"], {"a"}, 0.5),
    ([], {"a"}, 1.0),
    (["a"], set(), 0.0),
])
def test_recall(needles, haystack, expected):
    assert F.recall(needles, haystack) == expected


@pytest.mark.parametrize("text,hedged", [
    ("The context does not mention the price.", True),
    ("There is no information about the date.", True),
    ("The price is 10 dollars.", False),
])
def test_is_hedged(text, hedged):
    assert F.is_hedged(text) is hedged


def _unit(rows):
    a = np.asarray(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def test_row_features_shapes_and_missing_number():
    docs = [["Title: Paris", "Paris has 2 million people."], ["Berlin is big."]]
    resp = ["Paris has 3 million people.", "Berlin is big."]
    q = _unit([[1, 0, 0]])[0]
    d = _unit([[1, 0, 0], [1, 1, 0], [0, 1, 1]])
    r = _unit([[1, 1, 0], [0, 1, 1]])
    f = F.row_features("How many people live in Paris?", docs, resp, q, d, r)
    assert f.doc.shape == (3, len(F.DOC_FEATURES))
    assert f.resp.shape == (2, len(F.RESP_FEATURES))
    assert f.resp_doc_sim.shape == (2, 3)
    assert f.missing_numbers == [["3"], []]
    col = {n: i for i, n in enumerate(F.RESP_FEATURES)}
    assert f.resp[0, col["numbers_missing"]] == 1 and f.resp[1, col["numbers_missing"]] == 0
    assert f.resp[1, col["max_cos"]] == pytest.approx(1.0, abs=1e-5)
    dcol = {n: i for i, n in enumerate(F.DOC_FEATURES)}
    assert f.doc[0, dcol["is_title"]] == 1 and f.doc[1, dcol["is_title"]] == 0
    assert f.doc[:, dcol["q_cos_rank"]].max() == 1.0
    assert np.isfinite(f.doc).all() and np.isfinite(f.resp).all()


def test_row_features_reject_empty_rows():
    v = _unit([[1, 0]])
    with pytest.raises(ValueError, match="no document sentences"):
        F.row_features("q", [[]], ["a"], v[0], np.zeros((0, 2)), v)
    with pytest.raises(ValueError, match="no response sentences"):
        F.row_features("q", [["x"]], [], v[0], v, np.zeros((0, 2)))
    with pytest.raises(ValueError, match="do not match"):
        F.row_features("q", [["x", "y"]], ["a"], v[0], v, v)


def test_lexical_novelty_is_the_share_of_content_words_no_document_has():
    from rag_eval.judges.features import lexical_novelty

    docs = ["The Eiffel Tower is in Paris.", "It opened in 1889."]
    assert lexical_novelty(["The Eiffel Tower opened in 1889."], docs) == 0.0
    # content words: eiffel, tower, stands, berlin -> two of four are in no document
    assert lexical_novelty(["The Eiffel Tower stands in Berlin."], docs) == pytest.approx(0.5, abs=0.01)
    assert lexical_novelty(["It is."], docs) == 0.0  # no content word: nothing to contradict


def test_remembered_tokens_are_fresh_lists_and_equal_the_computed_ones():
    """Token lists come from a bounded memo of each sentence; a caller that changes its
    list must not change what the next row gets."""
    from rag_eval.judges.features import content_tokens

    text = "The Viruses spread in 2020 through droplets, says Dr. Smith."
    first = content_tokens(text)
    first.append("mutated")
    assert content_tokens(text) == ["virus", "spread", "2020", "through", "droplet", "say", "dr", "smith"]


def _dates_reference(text: str) -> set[str]:
    """dates() before its pre-checks: both patterns on every text."""
    from rag_eval.judges.features import _MONTH, _YEAR

    return {m.group(1) for m in _YEAR.finditer(text)} | {m.group(1).lower()[:3] for m in _MONTH.finditer(text)}


def test_dates_pre_checks_find_what_the_patterns_find():
    """dates() skips a pattern when the text cannot match it; the sets are the same,
    including the non-ASCII letters Python's case-insensitive matching folds to ASCII."""
    from rag_eval.judges.features import dates

    texts = ["Founded in 1990s, renamed in Sept. 2001.", "no dates here", "in 1499 and 2100 and 15000",
             "MARCH 3rd, 2020", "Auguſt 1914", "SEPTEMBER", "octobre 2.2019", "Ünïcödé dec 1,999", "",
             "the 1980s and '90s", "Jan-Feb 2023", "page 12, item 2"]
    for text in texts:
        assert dates(text) == _dates_reference(text), text


def test_pairwise_and_neighbour_features_follow_their_definitions():
    """The features computed from shared tables (one sort, one intersection per pair,
    shifted arrays for neighbours) equal their plain per-sentence definitions."""
    documents = [["Title: Paris", "Paris is the capital of France.", "The Seine flows through Paris."],
                 ["Lyon lies on the Rhone."], ["Berlin is in Germany.", "It has many museums."]]
    response = ["Paris is the capital of France.", "It is.", "The Rhone flows past Lyon museums."]
    flat = [s for doc in documents for s in doc]
    rng = np.random.default_rng(7)

    def unit(n):
        v = rng.normal(size=(n, 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    q_vec, doc_vecs, resp_vecs = unit(1)[0], unit(len(flat)), unit(len(response))
    feats = F.row_features("What is the capital of France?", documents, response, q_vec, doc_vecs, resp_vecs)
    dcol = {name: i for i, name in enumerate(F.DOC_FEATURES)}
    rcol = {name: i for i, name in enumerate(F.RESP_FEATURES)}
    d_sets = [set(F.content_tokens(s)) for s in flat]
    r_sets = [set(F.content_tokens(s)) for s in response]
    assert not r_sets[1]  # "It is." has no content word
    doc_of = [d for d, doc in enumerate(documents) for _ in doc]
    q_cos = doc_vecs @ q_vec
    r_cos = (resp_vecs @ doc_vecs.T).max(axis=0)
    for j, s_set in enumerate(d_sets):
        assert feats.doc[j, dcol["r_in_s"]] == np.float32(max(F.recall(r, s_set) if r else 0.0 for r in r_sets))
        same = [k for k in (j - 1, j + 1) if 0 <= k < len(flat) and doc_of[k] == doc_of[j]]
        assert feats.doc[j, dcol["neighbour_q_cos"]] == np.float32(max((q_cos[k] for k in same), default=q_cos[j]))
        assert feats.doc[j, dcol["neighbour_r_cos"]] == np.float32(max((r_cos[k] for k in same), default=r_cos[j]))
    for i, r in enumerate(r_sets):
        best = int(np.argmax(resp_vecs[i] @ doc_vecs.T))
        assert feats.resp[i, rcol["recall_best"]] == np.float32(F.recall(r, d_sets[best]))
        expected = max(F.recall(r, d) for d in d_sets) if r else 1.0
        assert feats.resp[i, rcol["best_sentence_recall"]] == np.float32(expected)
