"""The minimal plugin metric of issue 34: answer length in words (lower is better)."""

try:  # the package root re-exports the decorator once the Python API lands
    from rag_eval import metric
except ImportError:
    from rag_eval.metrics.registry import metric


@metric(name="answer_words", higher_is_better=False, label="Answer length (words)")
def answer_words(item) -> float:
    """Words in the response."""
    if "FAIL_ME" in item.response:
        raise ValueError("asked to fail")
    return len(item.response.split())
