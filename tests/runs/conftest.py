"""A small, real, deterministic judge for runner tests (the end-to-end test uses the
real local judge), and an ingested demo collection."""

import pytest

from rag_eval.schema import JudgeResult, JudgeStatus, Labels


class OverlapJudge:
    """Relevant: document sentences sharing a content word with the question. Utilized:
    document sentences that appear in the response. Unsupported: response sentences
    found in no document. Records every item it sees."""

    name = "overlap:test"

    def __init__(self):
        self.seen: list[str] = []

    def judge(self, items, progress=None, cancel=None):
        out = []
        for item in items:
            self.seen.append(item.id)
            if cancel is not None and cancel.is_set():
                out.append(JudgeResult(item.id, JudgeStatus.CANCELLED, judge=self.name))
                continue
            words = {w.lower().strip("?.,") for w in item.question.split() if len(w) > 3}
            doc = [s for d in item.documents for s in d]
            relevant = [s.key for s in doc if words & {w.lower().strip("?.,") for w in s.text.split()}]
            utilized = [s.key for s in doc if s.text in item.response]
            texts = {s.text for s in doc}
            unsupported = [s.key for s in item.response_sentences if s.text not in texts]
            labels = Labels(all_relevant_sentence_keys=relevant, all_utilized_sentence_keys=utilized,
                            unsupported_response_sentence_keys=unsupported, overall_supported=not unsupported)
            out.append(JudgeResult(item.id, JudgeStatus.OK, labels=labels, judge=self.name, tokens={"total": 10},
                                   cost_usd=0.0))
        return out


@pytest.fixture
def overlap_judge():
    return OverlapJudge()


@pytest.fixture
def demo_collection():
    from rag_eval.demo import ensure_demo_collection

    report = ensure_demo_collection()
    assert report.documents_added + report.documents_unchanged == 40
    return "demo"


@pytest.fixture
def demo_questions():
    from rag_eval.demo import load_demo

    return load_demo()[1]
