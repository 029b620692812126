

def test_a_period_without_white_space_after_it_ends_no_sentence():
    from rag_eval.text.sentences import split_sentences

    text = "The page says hello. Call window.__init__ first. Then go on."
    assert [s for s, _, _ in split_sentences(text)] == ["The page says hello.", "Call window.__init__ first.",
                                                         "Then go on."]
