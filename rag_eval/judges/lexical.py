"""The lexical reference judge (kind ``lexical``): word overlap, the floor a judge must beat.

A response sentence is supported when its content words (lower-cased, stop words
dropped, plurals stripped) are found in the documents: its lexical novelty, the share of
them found in no document sentence (:func:`rag_eval.judges.features.lexical_novelty`, the
baseline the local judge is measured against in ``bench/bench_local_judge.py``), is at
most ``max_novel``. The row's novelty is its continuous adherence (``1 - novelty``), so a
hallucination AUROC reads the same one-line baseline. A document sentence is relevant
when it shares a content word with the question, and utilized when it is the closest
match (most shared content words) of a supported response sentence.

No parameters are fitted and nothing is called: it costs nothing, runs anywhere, and its
error against a team's reviewed rows is what ``rag-eval agreement --by-judge`` and the
Judges page show beside every judge, so a judge that does not beat it is seen not to.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from rag_eval.judges.base import ProgressCallback, item_language, unreadable
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, SentenceSupport

VERSION = "2"  # 2: words of every language (rag_eval.text.words); unreadable text is unsupported_language


class LexicalOptions(BaseModel):
    """The lexical judge's one option."""

    model_config = ConfigDict(extra="forbid")

    max_novel: float = Field(0.5, ge=0.0, le=1.0, description=(
        "a response sentence is supported when at most this share of its content words is found in no document"))


class LexicalJudge:
    """Word overlap as labels in RAGBench's schema (see the module docstring)."""

    name = f"lexical:{VERSION}"
    #: Languages it reads: every one whose words ``rag_eval.text.words`` counts (None); an
    #: item with no such word ends ``unsupported_language``.
    languages: frozenset[str] | None = None

    def __init__(self, options: LexicalOptions | None = None) -> None:
        self.options = options or LexicalOptions()

    def judge(self, items: Sequence[EvalItem], progress: ProgressCallback | None = None,
              cancel: threading.Event | None = None) -> list[JudgeResult]:
        out = []
        for done, item in enumerate(items, start=1):
            if cancel is not None and cancel.is_set():
                out.append(self._result(item, JudgeStatus.CANCELLED))
            elif not any(item.documents):
                out.append(self._result(item, JudgeStatus.INVALID_INPUT, error="the item has no document sentences"))
            elif not item.response_sentences:
                out.append(self._result(item, JudgeStatus.INVALID_INPUT, error="the item has no response sentences"))
            elif (reason := unreadable(item, language := item_language(item), self.languages)) is not None:
                out.append(self._result(item, JudgeStatus.UNSUPPORTED_LANGUAGE, error=reason))
            else:
                out.append(self._result(item, JudgeStatus.OK,
                                        labels=lexical_labels(item, self.options.max_novel, language)))
            if progress is not None:
                progress(done, len(items))
        return out

    def _result(self, item: EvalItem, status: JudgeStatus, labels: Labels | None = None,
                error: str | None = None) -> JudgeResult:
        return JudgeResult(id=item.id, status=status, labels=labels, error=error, judge=self.name,
                           cost_usd=0.0 if status is JudgeStatus.OK else None, extra={"judge_kind": "lexical"})


def lexical_labels(item: EvalItem, max_novel: float = 0.5, language: str | None = None) -> Labels:
    """The item's labels by word overlap alone (see the module docstring); ``language``
    (default: the item's) chooses the stop words."""
    from rag_eval.judges.features import content_tokens, lexical_novelty

    language = language or item.language or None
    sentences = [s for doc in item.documents for s in doc]
    texts = [s.text for s in sentences]
    words = [set(content_tokens(t, language)) for t in texts]
    question = set(content_tokens(item.question, language))
    relevant = [s.key for s, w in zip(sentences, words) if w & question]
    support, unsupported, utilized = [], [], {}
    for r in item.response_sentences:
        novel = lexical_novelty([r.text], texts, language)
        mine = set(content_tokens(r.text, language))
        shared = [len(mine & w) for w in words]
        best = max(shared, default=0)
        closest = [s.key for s, n in zip(sentences, shared) if best and n == best]
        supported = novel <= max_novel
        support.append(SentenceSupport(r.key, closest if supported else [], supported,
                                       f"{novel:.0%} of its content words are in no document", 1.0 - novel))
        if supported:
            utilized.update(dict.fromkeys(closest))
        else:
            unsupported.append(r.key)
    novelty = lexical_novelty([r.text for r in item.response_sentences], texts, language)
    return Labels(all_relevant_sentence_keys=relevant, all_utilized_sentence_keys=list(utilized),
                  sentence_support_information=support, unsupported_response_sentence_keys=unsupported,
                  overall_supported=not unsupported,
                  relevance_explanation="document sentences sharing a content word with the question",
                  overall_supported_explanation=f"{novelty:.0%} of the response's content words are in no document",
                  adherence_probability=1.0 - novelty)
