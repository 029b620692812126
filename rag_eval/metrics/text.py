"""Text-overlap metrics: thin wrappers over sacrebleu and rouge-score.

Neither is reimplemented here; the wrappers only fix the scale (0–1) and the
empty-input values so callers get plain floats:

- BLEU is sacrebleu's (13a tokenisation, exponential smoothing for sentence BLEU),
  divided by 100. An empty hypothesis or no references gives 0.0.
- ROUGE-1/2/L are rouge-score's precision/recall/F-measure (Porter stemming on by
  default). Empty text gives zeros, as rouge-score itself does.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


class RougeScore(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


def _references(references: str | Sequence[str]) -> list[str]:
    if isinstance(references, str):
        return [references]
    refs = list(references)
    if not all(isinstance(r, str) for r in refs):
        raise ValueError("references must be a string or a sequence of strings")
    return refs


def bleu(hypothesis: str, references: str | Sequence[str]) -> float:
    """Sentence BLEU of ``hypothesis`` against one or more references, in [0, 1]."""
    import sacrebleu

    if not isinstance(hypothesis, str):
        raise ValueError(f"hypothesis must be a string, got {type(hypothesis).__name__}")
    refs = _references(references)
    if not hypothesis.strip() or not any(r.strip() for r in refs):
        return 0.0
    return min(1.0, float(sacrebleu.sentence_bleu(hypothesis, refs).score) / 100.0)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (one reference per hypothesis), in [0, 1]; 0.0 for an empty corpus."""
    import sacrebleu

    hyps, refs = list(hypotheses), list(references)
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not hyps:
        return 0.0
    return min(1.0, float(sacrebleu.corpus_bleu(hyps, [refs]).score) / 100.0)


@lru_cache(maxsize=4)
def _scorer(use_stemmer: bool):
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)


def rouge(hypothesis: str, reference: str, *, use_stemmer: bool = True) -> dict[str, RougeScore]:
    """ROUGE-1, ROUGE-2 and ROUGE-L of ``hypothesis`` against ``reference``."""
    if not isinstance(hypothesis, str) or not isinstance(reference, str):
        raise ValueError("hypothesis and reference must be strings")
    scores = _scorer(bool(use_stemmer)).score(reference, hypothesis)  # rouge-score takes (target, prediction)
    return {name: RougeScore(float(s.precision), float(s.recall), float(s.fmeasure)) for name, s in scores.items()}
