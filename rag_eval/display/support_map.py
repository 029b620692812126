"""The sentence support map as HTML: a pure function of an item and its labels.

Why HTML built here rather than Streamlit widgets: one colored span per sentence is
the only way to show hundreds of keyed sentences readably, and keeping it a pure
function lets the tests check the escaping (documents are untrusted text: a
``<script>`` or ``<img onerror>`` in a document must render as text) and the colour
logic without a running app. Every piece of document, response, key and explanation
text goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
import textwrap

from rag_eval.display.style import (
    COLOURS,
    DOC_BOTH,
    DOC_NEITHER,
    DOC_RELEVANT,
    DOC_UTILIZED,
    HIGHLIGHT_OUTLINE,
    LEGEND,
    RESP_PARTIAL,
    RESP_SUPPORTED,
    RESP_UNKNOWN,
    RESP_UNSUPPORTED,
)
from rag_eval.schema import EvalItem, Labels, SentenceSupport
from rag_eval.text.direction import text_direction
from rag_eval.text.keys import normalize_key, parse_document_key


def _keys(values: list[str]) -> set[str]:
    return {normalize_key(v) for v in values}


def document_sentence_class(key: str, labels: Labels | None) -> str:
    """relevant / utilized / both / neither for one document sentence key."""
    if labels is None:
        return DOC_NEITHER
    k = normalize_key(key)
    relevant = k in _keys(labels.all_relevant_sentence_keys)
    utilized = k in _keys(labels.all_utilized_sentence_keys)
    if relevant and utilized:
        return DOC_BOTH
    if relevant:
        return DOC_RELEVANT
    if utilized:
        return DOC_UTILIZED
    return DOC_NEITHER


def support_for(key: str, labels: Labels | None) -> SentenceSupport | None:
    """The judge's support entry for a response sentence key, if it gave one."""
    if labels is None:
        return None
    k = normalize_key(key)
    for info in labels.sentence_support_information:
        if normalize_key(info.response_sentence_key) == k:
            return info
    return None


def supporting_document_keys(key: str, labels: Labels | None) -> set[str]:
    """Normalised document keys cited as support for a response sentence
    (special tokens such as ``general`` are not document sentences)."""
    info = support_for(key, labels)
    if info is None:
        return set()
    return {k for k in _keys(info.supporting_sentence_keys) if parse_document_key(k) is not None}


def response_sentence_class(key: str, labels: Labels | None) -> str:
    """supported / partial / unsupported / unlabelled for one response sentence.

    A sentence the judge lists as unsupported (or marks ``fully_supported: false``)
    is *partial* when it still cites document sentences and *unsupported* when it
    cites none; any other sentence of a labelled item is supported.
    """
    if labels is None:
        return RESP_UNKNOWN
    info = support_for(key, labels)
    flagged = normalize_key(key) in _keys(labels.unsupported_response_sentence_keys)
    if info is not None and info.fully_supported is False:
        flagged = True
    if not flagged:
        return RESP_SUPPORTED
    return RESP_PARTIAL if supporting_document_keys(key, labels) else RESP_UNSUPPORTED


def _dir(text: str) -> str:
    """The ``dir`` attribute of a block of ``text``: right-to-left text (Arabic, Hebrew, …)
    is laid out right-to-left, its phrases in order and its full stop on the left."""
    return f'dir="{text_direction(text)}"'


def _span(text: str, key: str, cls: str, title: str, outline: bool, clickable: bool = False) -> str:
    # Each sentence is isolated (its own direction, unicode-bidi: isolate) so a right-to-left
    # sentence among others keeps its order and its highlight in one piece; its key is an
    # isolated left-to-right run at the sentence's start (the right edge of an RTL sentence).
    style = (f"background:{COLOURS[cls]};border-radius:3px;padding:1px 2px;unicode-bidi:isolate;"
             + ("cursor:pointer;" if clickable else ""))
    if outline:
        style += f"outline:2px solid {HIGHLIGHT_OUTLINE};"
    return (f'<span class="sm-s sm-{cls}" {_dir(text)} data-key="{html.escape(key, quote=True)}" '
            f'title="{html.escape(title, quote=True)}" style="{style}">'
            f'<sup dir="ltr" style="color:#6c757d;font-size:0.7em;unicode-bidi:isolate">{html.escape(key)}</sup>'
            f"{html.escape(text)}</span>")


def _probability(labels: Labels | None, field: str, key: str) -> str:
    probs = getattr(labels, field, None) if labels is not None else None
    if not probs:
        return ""
    for k, v in probs.items():
        if normalize_key(k) == normalize_key(key) and v is not None:
            return f" · p={float(v):.2f}"
    return ""


def response_html(item: EvalItem, labels: Labels | None, selected: str | None = None) -> str:
    """The response, each sentence coloured by its support class."""
    parts = []
    for s in item.response_sentences:
        cls = response_sentence_class(s.key, labels)
        title = f"{s.key} · {cls}{_probability(labels, 'support_probabilities', s.key)}"
        is_selected = selected is not None and normalize_key(selected) == normalize_key(s.key)
        parts.append(_span(s.text, s.key, cls, title + " · click to select", is_selected, clickable=labels is not None))
    return (f'<div class="sm-response" {_dir(item.response or item.question)} style="line-height:1.9">'
            + " ".join(parts) + "</div>")


def documents_html(item: EvalItem, labels: Labels | None, selected: str | None = None) -> str:
    """Every document, each sentence keyed and coloured relevant/utilized/both/neither;
    the document sentences supporting ``selected`` (a response key) are outlined."""
    highlight = supporting_document_keys(selected, labels) if selected else set()
    blocks = []
    for d, doc in enumerate(item.documents):
        spans = []
        for s in doc:
            cls = document_sentence_class(s.key, labels)
            title = f"{s.key} · {cls}{_probability(labels, 'relevance_probabilities', s.key)}"
            spans.append(_span(s.text, s.key, cls, title, normalize_key(s.key) in highlight))
        blocks.append(f'<div class="sm-doc" {_dir(" ".join(s.text for s in doc[:3]))} '
                      'style="margin:0.4em 0 0.8em 0;line-height:1.9">'
                      f"<strong><bdi>Document {d}</bdi></strong><br>"
                      f"{' '.join(spans) or '<em>(no sentences)</em>'}</div>")
    return '<div class="sm-documents">' + "".join(blocks) + "</div>"


def explanation_html(item: EvalItem, labels: Labels | None, selected: str | None) -> str:
    """The judge's explanation and cited keys for the selected response sentence."""
    if not selected:
        return ""
    text = item.sentence_text().get(selected, "")
    info = support_for(selected, labels)
    cls = response_sentence_class(selected, labels)
    cited = ", ".join(info.supporting_sentence_keys) if info and info.supporting_sentence_keys else "none"
    explanation = info.explanation if info and info.explanation else "(the judge gave no explanation)"
    return ('<div class="sm-explanation" style="border-left:4px solid '
            f'{HIGHLIGHT_OUTLINE};padding:0.3em 0.8em;margin:0.5em 0">'
            f"<strong>{html.escape(selected)}</strong> ({html.escape(cls)}): <bdi>{html.escape(text)}</bdi><br>"
            f"<em>Supporting sentences:</em> {html.escape(cited)}<br>"
            f"<em>Explanation:</em> {html.escape(explanation)}</div>")


def legend_html() -> str:
    """A colour legend for both sentence kinds."""
    items = [f'<span style="background:{COLOURS[c]};border:1px solid #ced4da;border-radius:3px;'
             f'padding:0 6px;margin-right:4px">{html.escape(c)}</span>'
             f'<span style="margin-right:12px;color:#495057;font-size:0.85em">{html.escape(LEGEND[c])}</span>'
             for c in LEGEND]
    return '<div class="sm-legend" style="line-height:2">' + "".join(items) + "</div>"


def support_map_html(item: EvalItem, labels: Labels | None, selected: str | None = None, map_id: str = "") -> str:
    """The whole map: question, response, explanation of ``selected``, documents, legend.
    ``map_id`` names the map for a click on a response sentence (``components.draw_support_map``)."""
    return (f'<div class="support-map" data-map="{html.escape(map_id, quote=True)}">'
            f"<p><strong>Question:</strong> <bdi>{html.escape(item.question)}</bdi></p>"
            f"<p><strong>Response</strong></p>{response_html(item, labels, selected)}"
            f"{explanation_html(item, labels, selected)}"
            f"<p><strong>Documents</strong></p>{documents_html(item, labels, selected)}"
            f"{legend_html()}</div>")


# ---------------------------------------------------------------- as text (terminal, test failures)
TEXT_WIDTH = 100


def _short(text: str, width: int) -> str:
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder=" …")


def support_map_text(item: EvalItem, labels: Labels | None) -> str:
    """Each response sentence with its support status and supporting keys, then each
    document sentence marked R (relevant), U (utilized), RU (both) or '-'."""
    if labels is None:
        return "(no labels: the judgement failed)"
    unsupported = {normalize_key(k) for k in labels.unsupported_response_sentence_keys}
    support = {normalize_key(s.response_sentence_key): s for s in labels.sentence_support_information}
    relevant = {normalize_key(k) for k in labels.all_relevant_sentence_keys}
    utilized = {normalize_key(k) for k in labels.all_utilized_sentence_keys}
    lines = ["Response sentences:"]
    for s in item.response_sentences:
        info = support.get(s.key)
        mark = "✗ unsupported" if s.key in unsupported else "✓ supported"
        keys = f" by {', '.join(info.supporting_sentence_keys)}" if info and info.supporting_sentence_keys else ""
        lines.append(f"  [{s.key}] {mark}{keys}: {_short(s.text, TEXT_WIDTH - 30)}")
    lines.append("Document sentences (R relevant, U utilized):")
    for d, doc in enumerate(item.documents):
        lines.append(f"  document {d}:")
        for s in doc:
            tag = ("R" if s.key in relevant else "") + ("U" if s.key in utilized else "")
            lines.append(f"    {tag or '-':>2} [{s.key}] {_short(s.text, TEXT_WIDTH - 14)}")
    return "\n".join(lines)
