"""The support map links an imported trace's row to the trace in Phoenix (when its address is
known), and only with an http(s) address: a ``javascript:`` URL in a record is no link."""

from __future__ import annotations

import pytest

from rag_eval.traces.phoenix import trace_url
from rag_eval.ui.views import view_from_record

RECORD = {"item_id": "t1", "question": "Q?", "answer": "A.", "status": "ok",
          "item": {"documents_sentences": [[["0a", "A."]]], "response_sentences": [["a", "A."]]}}


@pytest.mark.parametrize(("url", "link"), [
    (trace_url("http://127.0.0.1:6006/", "abc"), "http://127.0.0.1:6006/redirects/traces/abc"),
    ("javascript:alert(1)", None),
    (None, None),
])
def test_view_of_a_record_carries_the_phoenix_link(url, link):
    record = {**RECORD, "metadata": {"trace": {"trace_id": "abc", "url": url}}}
    assert view_from_record(record).extra.get("trace_url") == link


def test_records_without_trace_metadata_have_no_link():
    assert view_from_record(RECORD).extra.get("trace_url") is None
