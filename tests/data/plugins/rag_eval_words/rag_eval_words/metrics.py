"""The minimal plugin metric of issue 34: answer length in words (lower is better)."""

import rag_eval


@rag_eval.metric(name="answer_words", higher_is_better=False, label="Answer length (words)")
def answer_words(item) -> float:
    """Words in the response."""
    if "FAIL_ME" in item.response:
        raise ValueError("asked to fail")
    return len(item.response.split())
