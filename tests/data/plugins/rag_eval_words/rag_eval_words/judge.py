"""A judge kind from a plugin: a response sentence is supported when enough of its words
appear in one document sentence; those document sentences are relevant and utilized."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from pydantic import BaseModel, Field

from rag_eval.judges.kinds import JudgeKind
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, SentenceSupport

_WORD = re.compile(r"\w+")


class OverlapOptions(BaseModel):
    """Options of the overlap judge (``--judge-option threshold=0.6``)."""

    threshold: float = Field(0.5, ge=0.0, le=1.0)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class OverlapJudge:
    """Satisfies ``rag_eval.judges.base.Judge``."""

    def __init__(self, options: OverlapOptions) -> None:
        self.options = options
        self.name = f"overlap:{options.threshold:g}"

    def judge(self, items: Sequence[EvalItem], progress=None, cancel: threading.Event | None = None
              ) -> list[JudgeResult]:
        out = []
        for done, item in enumerate(items, start=1):
            if cancel is not None and cancel.is_set():
                out.append(JudgeResult(item.id, JudgeStatus.CANCELLED, error="cancelled", judge=self.name))
                continue
            support, used, unsupported = [], set(), []
            for sentence in item.response_sentences:
                words = _words(sentence.text)
                best = [d.key for doc in item.documents for d in doc
                        if words and len(words & _words(d.text)) / len(words) >= self.options.threshold]
                used.update(best)
                support.append(SentenceSupport(sentence.key, best, bool(best)))
                if not best:
                    unsupported.append(sentence.key)
            labels = Labels(all_relevant_sentence_keys=sorted(used), all_utilized_sentence_keys=sorted(used),
                            sentence_support_information=support, unsupported_response_sentence_keys=unsupported,
                            overall_supported=not unsupported)
            out.append(JudgeResult(item.id, JudgeStatus.OK, labels=labels, judge=self.name))
            if progress is not None:
                progress(done, len(items))
        return out


overlap = JudgeKind(name="overlap", factory=OverlapJudge, options=OverlapOptions,
                    help="Word overlap between response and document sentences (example plugin).")
