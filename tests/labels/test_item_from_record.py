"""One rebuild of a stored record's judged item (issue 42, item 9): the support map, a
review and the judge-vs-human join (``labels.store.judgements_for``) all key a row by
``labels.store.item_from_record``; the copy that dropped the extractive answer's own
sentences (so a reviewed row's hash never matched its judged row) is gone."""

from __future__ import annotations

import rag_eval.display.views as views
from rag_eval.labels.review import item_hash
from rag_eval.labels.store import item_from_record


def _pipeline_record() -> dict:
    """A pipeline record stored before records kept the keyed item: rebuilt from its chunks
    and answer. The extractive generator chose one unit that a sentence splitter cuts in two."""
    chunk = {"id": "c0", "text": "Open Settings. Press OK. Then wait.", "score": 0.9, "doc_id": "d0",
             "source": "manual.md", "chunk_index": 0}
    chosen = "Open Settings. Press OK."
    return {"id": "q1", "question": "How do I confirm?", "answer": chosen, "chunks": [chunk],
            "generator": {"kind": "extractive", "sentences": [chosen]}, "status": "ok"}


def test_a_pipeline_record_keeps_the_generators_sentences_everywhere():
    record = _pipeline_record()
    item = item_from_record(record)
    assert [s.text for s in item.response_sentences] == ["Open Settings. Press OK."]  # not split in two
    assert not hasattr(views, "item_from_record")  # one copy, in the lower layer
    shown = views.view_from_record(record, "k5").item  # what the support map (and a review) keys
    assert item_hash(shown) == item_hash(item)
    assert [s.key for s in shown.response_sentences] == [s.key for s in item.response_sentences]
