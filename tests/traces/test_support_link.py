"""The support map links an imported trace's row to the trace in Phoenix (when its address is
known), and only with an http(s) address: a ``javascript:`` URL in a record is no link."""

from __future__ import annotations

import pytest

from rag_eval.display.views import view_from_record
from rag_eval.traces.phoenix import trace_url

RECORD = {"id": "t1", "question": "Q?", "answer": "A.", "status": "ok",
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


def test_html_and_markdown_from_a_span_are_escaped_in_the_support_map():
    """A trace whose question, answer and documents hold markup: the row keeps it as text and
    the support map shows it escaped (no tag of the span's reaches the page)."""
    from datetime import UTC, datetime

    from rag_eval.display.support_map import support_map_html
    from rag_eval.runs.prepare import prepare_row
    from rag_eval.traces.mapping import map_trace
    from rag_eval.traces.spans import Span

    markup = "<script>alert(1)</script> <img src=x onerror=alert(2)> **bold** [x](javascript:alert(3))."
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    spans = [Span("ab" * 16, "a" * 16, None, start=t0, end=t0, attributes={
                 "openinference.span.kind": "CHAIN", "input.value": markup, "output.value": markup}),
             Span("ab" * 16, "b" * 16, "a" * 16, start=t0, end=t0, attributes={
                 "openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": markup})]
    row = map_trace(spans).row
    assert row["question"] == row["response"] == row["documents"][0] == markup
    item = prepare_row(row, 1).item
    assert item is not None
    page = support_map_html(item, None)
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page
