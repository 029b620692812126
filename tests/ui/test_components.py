"""The support map renderer and its colour logic, without a running app."""

from __future__ import annotations

import html

import pytest

from rag_eval.display.style import COLOURS, LEGEND
from rag_eval.display.support_map import (
    document_sentence_class,
    legend_html,
    response_sentence_class,
    support_map_html,
    supporting_document_keys,
)
from rag_eval.display.views import load_labelled_sample, view_from_ragbench_row
from rag_eval.schema import Labels, SentenceSupport
from rag_eval.text.sentences import item_from_texts

SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'


@pytest.fixture
def hostile_item():
    return item_from_texts(
        "h1",
        f"What does {IMG} do?",
        [f"Plain first sentence. A {SCRIPT} here.", f"Second doc with {IMG} inside."],
        f"It runs {SCRIPT}. Then {IMG} fires.",
    )


@pytest.fixture
def labels():
    return Labels(
        all_relevant_sentence_keys=["0a", "0b"],
        all_utilized_sentence_keys=["0b", "1a"],
        sentence_support_information=[
            SentenceSupport("a", ["0b"], True, "Sentence 0b says so <b>bold</b>."),
            SentenceSupport("b", ["1a"], False, "Only partly."),
        ],
        unsupported_response_sentence_keys=["b"],
        overall_supported=False,
    )


@pytest.mark.parametrize("selected", [None, "a", "b"])
def test_hostile_text_is_escaped_everywhere(hostile_item, labels, selected):
    out = support_map_html(hostile_item, labels, selected)
    assert "<script" not in out.lower()
    assert "<img" not in out.lower()
    assert html.escape(SCRIPT) in out
    assert html.escape(IMG) in out or html.escape(IMG, quote=False) in out


def test_explanation_is_escaped(hostile_item, labels):
    out = support_map_html(hostile_item, labels, "a")
    assert "<b>bold</b>" not in out
    assert "&lt;b&gt;bold&lt;/b&gt;" in out


def test_unlabelled_item_renders_escaped_and_uncoloured(hostile_item):
    out = support_map_html(hostile_item, None)
    assert "<script" not in out and "sm-unlabelled" in out and "sm-neither" in out


@pytest.mark.parametrize(
    ("key", "expected"),
    [("0a", "relevant"), ("0b", "both"), ("1a", "utilized"), ("0c", "neither"), (" 0B. ", "both")],
)
def test_document_classes(labels, key, expected):
    assert document_sentence_class(key, labels) == expected


def test_response_classes(labels):
    assert response_sentence_class("a", labels) == "supported"
    assert response_sentence_class("b", labels) == "partial"  # flagged but cites a document sentence
    no_cite = Labels(unsupported_response_sentence_keys=["c"])
    assert response_sentence_class("c", no_cite) == "unsupported"
    assert response_sentence_class("a", None) == "unlabelled"
    special = Labels(sentence_support_information=[SentenceSupport("a", ["general"], False)])
    assert response_sentence_class("a", special) == "unsupported"  # special tokens are no document support


def test_selection_outlines_supporting_sentences(hostile_item, labels):
    assert supporting_document_keys("b", labels) == {"1a"}
    out = support_map_html(hostile_item, labels, "b")
    outlined = [seg for seg in out.split("<span") if "outline:" in seg]
    keys = sorted(seg.split('data-key="')[1].split('"')[0] for seg in outlined)
    assert keys == ["1a", "b"]  # the supporting document sentence and the selected one
    assert "Only partly." in out


def test_legend_lists_every_class_with_its_colour():
    out = legend_html()
    for cls in LEGEND:
        assert cls in out and COLOURS[cls] in out


def test_labelled_sample_shows_real_labels():
    rows = load_labelled_sample()
    assert len(rows) == 14
    view = view_from_ragbench_row(rows[1])  # a non-adherent covidqa row
    classes = {response_sentence_class(k, view.labels) for k in view.item.response_keys}
    assert view.scores is not None and view.scores.adherence is False
    assert classes & {"partial", "unsupported"}
    assert view.judge.startswith("ragbench:gpt-4")


def test_showcase_row_uses_every_colour_class():
    from rag_eval.display.views import showcase_index

    rows = load_labelled_sample()
    view = view_from_ragbench_row(rows[showcase_index(rows)])
    doc = {document_sentence_class(k, view.labels) for k in view.item.document_keys}
    resp = {response_sentence_class(k, view.labels) for k in view.item.response_keys}
    assert doc == {"relevant", "utilized", "both", "neither"}
    assert {"supported", "unsupported"} <= resp
