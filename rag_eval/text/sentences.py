"""Splitting text into keyed sentences with character offsets.

Prose is split into sentences with sentencex (chosen over pysbd, blingfire and nupunkt:
``bench/bench_sentence_split.py``); every sentence is ``text[start:end]`` of the text it
came from, never rebuilt. Text is first cut into units:

- blocks are separated by blank lines;
- a code block (a block with an indented line, or a shell / Python prompt), a table row
  (a line with ``|`` cells), a list item (a line starting with ``-``, ``*``, ``•`` or
  ``1.``) and a heading are one unit each, never split into sentences;
- a line break inside a prose paragraph is not a boundary (hard-wrapped text reads as
  the paragraph it is).

Extracted documents know their blocks' kinds (:mod:`rag_eval.rag.extract`); they call
:func:`split_blocks` with them instead of relying on the heuristics above. Rows that
already carry RAGBench's ``documents_sentences`` / ``response_sentences`` are used as
they are, so scores stay comparable with the dataset's own labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sentencex

from rag_eval.schema import EvalItem, Sentence, _as_list
from rag_eval.text.keys import document_key, response_key

Span = tuple[str, int, int]

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•‣◦]|\d{1,3}[.)])\s+\S")
_PROMPT = re.compile(r"^\s*(?:\$ |>>> |\.\.\. |# |% |C:\\>)")
_TABLE_ROW = re.compile(r"\S\s*\|\s*\S")


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _blocks(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Blank-line separated blocks of ``text[start:end]``, trimmed."""
    end = len(text) if end is None else end
    out, pos = [], start
    for m in _BLANK_LINES.finditer(text, start, end):
        out.append(_trimmed(text, pos, m.start()))
        pos = m.end()
    out.append(_trimmed(text, pos, end))
    return [(a, b) for a, b in out if b > a]


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out, pos = [], start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        a, b = _trimmed(text, pos, stop)
        if b > a:
            out.append((a, b))
        pos = stop + 1
    return out


def _prose(text: str, start: int, end: int, language: str) -> list[tuple[int, int]]:
    """Sentences of a prose paragraph; its line breaks are read as spaces (the same
    length, so offsets hold)."""
    paragraph = text[start:end].replace("\n", " ").replace("\r", " ")
    out: list[tuple[int, int]] = []
    pos = 0
    for piece in sentencex.segment(language, paragraph):
        found = paragraph.find(piece, pos)
        if found < 0:  # a splitter that altered its text: fall back to the whole paragraph
            return [(start, end)]
        a, b = _trimmed(text, start + found, start + found + len(piece))
        if b > a:
            if out and a == out[-1][1]:  # no white space at the cut ("window.__x"): not a sentence end
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
        pos = found + len(piece)
    return out


def _kind_of(text: str, start: int, end: int) -> str:
    """The kind of an unlabelled block, from its shape."""
    lines = text[start:end].split("\n")
    if any(_PROMPT.match(line) for line in lines) or any(
        line[:1] in (" ", "\t") and line.strip() for line in lines[1:]
    ):
        return "code"
    if len(lines) > 1 and all(_TABLE_ROW.search(line) for line in lines if line.strip()):
        return "table"
    if _LIST_ITEM.match(lines[0]):
        return "list"
    return "paragraph"


def _units_of_block(text: str, start: int, end: int, kind: str, language: str) -> list[tuple[int, int]]:
    if kind in ("code", "heading"):
        return [(start, end)]
    if kind == "table":
        return _lines(text, start, end)
    if kind == "list":  # an item runs until the next line that starts an item
        items: list[tuple[int, int]] = []
        for a, b in _lines(text, start, end):
            if items and not _LIST_ITEM.match(text[a:b]):
                items[-1] = (items[-1][0], b)
            else:
                items.append((a, b))
        return items
    if kind == "list_item":
        return [(start, end)]
    return _prose(text, start, end, language)


def split_sentences(text: str, language: str = "en") -> list[Span]:
    """Sentences and units of ``text`` as (sentence, start, end) with ``text[start:end]``
    being the sentence without its surrounding white space. Empty text gives []."""
    if not text or not text.strip():
        return []
    spans: list[Span] = []
    for a, b in _blocks(text):
        for s, e in _units_of_block(text, a, b, _kind_of(text, a, b), language):
            spans.append((text[s:e], s, e))
    return spans


def split_blocks(text: str, blocks: Sequence[tuple[int, int, str]], language: str = "en") -> list[Span]:
    """Units of a document whose blocks are known (``(start, end, kind)``, e.g. from an
    extractor): code, table rows, list items and headings whole, prose split into
    sentences. Text outside every block is split with :func:`split_sentences`' rules."""
    spans: list[Span] = []
    pos = 0
    for start, end, kind in sorted(blocks):
        if start > pos:
            spans.extend((s, a + pos, b + pos) for s, a, b in split_sentences(text[pos:start], language))
        a, b = _trimmed(text, max(start, pos), end)
        if b > a:
            unit_kind = "list_item" if kind == "list_item" else kind
            spans.extend((text[s:e], s, e) for s, e in _units_of_block(text, a, b, unit_kind, language))
        pos = max(pos, end)
    if pos < len(text):
        spans.extend((s, a + pos, b + pos) for s, a, b in split_sentences(text[pos:], language))
    return spans


def clip_units(units: Sequence[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """The units overlapping ``[start, end)``, clipped to it and made relative to ``start``
    (a chunk's sentences from its document's)."""
    return [(max(a, start) - start, min(b, end) - start) for a, b in units if a < end and b > start]


def key_document(text: str, doc_index: int, units: Sequence[Sequence[int]] | None = None) -> list[Sentence]:
    """Keyed sentences of one document: ``units`` (``[start, end]`` pairs into ``text``)
    when the caller knows them (an ingested chunk does), else :func:`split_sentences`."""
    if units:
        spans = []
        for unit in units:
            a, b = _trimmed(text, int(unit[0]), int(unit[1]))
            if b > a:
                spans.append((text[a:b], a, b))
    else:
        spans = split_sentences(text)
    return [Sentence(document_key(doc_index, i), s, a, b) for i, (s, a, b) in enumerate(spans)]


def key_response(text: str) -> list[Sentence]:
    return [Sentence(response_key(i), s, a, b) for i, (s, a, b) in enumerate(split_sentences(text))]


def _pairs(value: Any) -> list[Sentence]:
    out = []
    for pair in _as_list(value):
        pair = _as_list(pair)
        if len(pair) >= 2:
            out.append(Sentence(str(pair[0]), str(pair[1])))
    return out


def item_from_texts(item_id: str, question: str, documents: Sequence[str], response: str, metadata: dict | None = None,
                    units: Sequence[Sequence[Sequence[int]] | None] | None = None,
                    response_sentences: Sequence[str] | None = None) -> EvalItem:
    """An :class:`EvalItem` from raw question / document texts / response text.

    ``units`` gives, per document, its sentences as ``[start, end]`` pairs when they are
    known (ingested chunks carry them); ``response_sentences`` the response's sentences
    when the generator chose them (the extractive generator answers with whole units)."""
    docs = [str(d) for d in documents]
    doc_units = list(units or [])
    keyed = [key_document(d, i, doc_units[i] if i < len(doc_units) else None) for i, d in enumerate(docs)]
    if response_sentences:
        responses = [Sentence(response_key(i), s) for i, s in enumerate(response_sentences)]
    else:
        responses = key_response(str(response or ""))
    return EvalItem(id=str(item_id), question=str(question), documents=keyed, response_sentences=responses,
                    response=str(response or ""), document_texts=docs, metadata=dict(metadata or {}))


def item_from_row(row: dict[str, Any], default_id: str = "") -> EvalItem:
    """An :class:`EvalItem` from a RAGBench-format row. Pre-split sentences are used
    as given; otherwise ``documents`` and ``response`` are split here."""
    item_id = str(row.get("id") if row.get("id") is not None else default_id)
    question = str(row.get("question") or "")
    response = str(row.get("response") or "")
    doc_texts = [str(d) for d in _as_list(row.get("documents"))]
    if row.get("documents_sentences") is not None:
        documents = [_pairs(doc) for doc in _as_list(row["documents_sentences"])]
    else:
        documents = [key_document(d, i) for i, d in enumerate(doc_texts)]
    if row.get("response_sentences") is not None:
        response_sentences = _pairs(row["response_sentences"])
    else:
        response_sentences = key_response(response)
    if not doc_texts:
        doc_texts = [" ".join(s.text for s in doc) for doc in documents]
    if not response and response_sentences:
        response = " ".join(s.text for s in response_sentences)
    return EvalItem(id=item_id, question=question, documents=documents, response_sentences=response_sentences,
                    response=response, document_texts=doc_texts,
                    metadata={k: row[k] for k in ("dataset_name", "_subset") if k in row})


