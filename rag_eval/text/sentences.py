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

Every text is split in its language: the one the caller names (``language=``, ISO 639-1:
a row's ``language``, the configuration's, ingest's per document), else the one
:func:`rag_eval.text.language.detect_language` reads from the text, once. sentencex takes
the code (its abbreviations and sentence ends); on top of it, a full stop with no white
space after it is an end in Chinese and Japanese (``。``) but not inside a Latin name
(``window.__x``), and Thai and Lao, which end sentences with a space, are cut there
(``bench/bench_sentence_split.py --languages`` measures it per language).

Extracted documents know their blocks' kinds (:mod:`rag_eval.rag.extract`); they call
:func:`split_blocks` with them instead of relying on the heuristics above. Rows that
already carry RAGBench's ``documents_sentences`` / ``response_sentences`` are used as
they are, so scores stay comparable with the dataset's own labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import regex
import sentencex

from rag_eval.schema import EvalItem, Sentence, _as_list
from rag_eval.text.keys import document_key, response_key
from rag_eval.text.language import detect_language, language_of, normalize_language

Span = tuple[str, int, int]

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•‣◦]|\d{1,3}[.)])\s+\S")
_PROMPT = re.compile(r"^\s*(?:\$ |>>> |\.\.\. |# |% |C:\\>)")
_TABLE_ROW = re.compile(r"\S\s*\|\s*\S")
_SPACELESS_START = regex.compile(r"[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}"
                                 r"\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}「『（“]")
_QUOTED_MARK_END = regex.compile(r"[?!？！][」』）”’)]*$|。[」』）”’)]+$")
_CJK_END = regex.compile(r"[。！？]([」』）”’]*)(?=[^\s」』）”’。！？、，])")
_HIRAGANA = regex.compile(r"\p{Script=Hiragana}")
_SPACED_SCRIPT_BREAK = regex.compile(r"(?<=[\p{Script=Thai}\p{Script=Lao}])[ \t\r\n]+(?=[\p{Script=Thai}\p{Script=Lao}])")
#: Characters (code points) below which a Thai or Lao piece between spaces is a phrase, not a sentence.
_MIN_SPACED_SENTENCE = 40


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
            return _spaced_script_sentences(text, [(start, end)])
        a, b = _trimmed(text, start + found, start + found + len(piece))
        if b > a:
            if out and a == out[-1][1] and _not_a_sentence_end(text, a):  # "window.__x": not a sentence end
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
        pos = found + len(piece)
    return _spaced_script_sentences(text, _full_stop_sentences(text, out))


def _full_stop_sentences(text: str, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``units`` cut again after every Chinese and Japanese full stop, question and
    exclamation mark (``。！？``, with the closing brackets after it) that text follows:
    sentencex leaves them when a digit, a Latin letter or an unclosed bracket comes next
    (``…開工。2010年…``). Not after a quotation closed before Hiragana (``「…？」と聞いた``)."""
    if not _CJK_END.search(text, units[0][0] if units else 0, units[-1][1] if units else 0):
        return units
    out: list[tuple[int, int]] = []
    for a, b in units:
        pos = a
        for m in _CJK_END.finditer(text, a, b):
            if m.group(1) or m.group(0)[0] in "？！":
                if _HIRAGANA.match(text, m.end()):
                    continue
            out.append((pos, m.end()))
            pos = m.end()
        out.append((pos, b))
    return out


def _not_a_sentence_end(text: str, cut: int) -> bool:
    """A cut with no white space after it is a sentence end only after a full stop of a
    script that writes none between sentences (``。``, ``！``, ``।``, ``።``, ...). Not:
    after an ASCII one before a letter of a script written with spaces (inside a name:
    ``window.__x``, ``example.com``), nor after a question or exclamation mark (in quotes
    or not) or a full stop in quotes followed by Hiragana (``「本当？」と聞いた。`` and
    ``「行きます。」と言った。`` are one Japanese sentence each)."""
    if text[cut - 1].isascii() and not _SPACELESS_START.match(text, cut):
        return True
    return bool(_QUOTED_MARK_END.search(text, max(0, cut - 8), cut)) and bool(_HIRAGANA.match(text, cut))


def _spaced_script_sentences(text: str, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Thai and Lao end a sentence with a space, not a full stop: ``units`` cut again at
    white space between two letters of those scripts, a piece shorter than
    :data:`_MIN_SPACED_SENTENCE` characters kept with the one before it (spaces also set
    off short phrases, names and numbers)."""
    if not _SPACED_SCRIPT_BREAK.search(text, units[0][0] if units else 0, units[-1][1] if units else 0):
        return units
    out: list[tuple[int, int]] = []
    for a, b in units:
        pieces, pos = [], a
        for m in _SPACED_SCRIPT_BREAK.finditer(text, a, b):
            pieces.append((pos, m.start()))
            pos = m.end()
        pieces.append((pos, b))
        merged: list[tuple[int, int]] = []
        for p in pieces:
            if merged and (p[1] - p[0] < _MIN_SPACED_SENTENCE or merged[-1][1] - merged[-1][0] < _MIN_SPACED_SENTENCE):
                merged[-1] = (merged[-1][0], p[1])
            else:
                merged.append(p)
        out.extend(merged)
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


def _language_for(text: str, language: str | None) -> str:
    """``language`` as given (normalized), else ``text``'s detected language."""
    return normalize_language(language) or detect_language(text)


def split_sentences(text: str, language: str | None = None) -> list[Span]:
    """Sentences and units of ``text`` as (sentence, start, end) with ``text[start:end]``
    being the sentence without its surrounding white space. Empty text gives [].

    ``language`` (ISO 639-1) chooses sentencex's rules (abbreviations, sentence ends);
    None reads it from ``text`` (:func:`rag_eval.text.language.detect_language`)."""
    if not text or not text.strip():
        return []
    language = _language_for(text, language)
    spans: list[Span] = []
    for a, b in _blocks(text):
        for s, e in _units_of_block(text, a, b, _kind_of(text, a, b), language):
            spans.append((text[s:e], s, e))
    return spans


def split_blocks(text: str, blocks: Sequence[tuple[int, int, str]], language: str | None = None) -> list[Span]:
    """Units of a document whose blocks are known (``(start, end, kind)``, e.g. from an
    extractor): code, table rows, list items and headings whole, prose split into
    sentences. Text outside every block is split with :func:`split_sentences`' rules.
    ``language`` as for :func:`split_sentences` (None: read once from ``text``)."""
    language = _language_for(text, language)
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


def key_document(text: str, doc_index: int, units: Sequence[Sequence[int]] | None = None,
                 language: str | None = None) -> list[Sentence]:
    """Keyed sentences of one document: ``units`` (``[start, end]`` pairs into ``text``)
    when the caller knows them (an ingested chunk does), else :func:`split_sentences`
    in ``language`` (None: the document's own)."""
    if units:
        spans = []
        for unit in units:
            a, b = _trimmed(text, int(unit[0]), int(unit[1]))
            if b > a:
                spans.append((text[a:b], a, b))
    else:
        spans = split_sentences(text, language)
    return [Sentence(document_key(doc_index, i), s, a, b) for i, (s, a, b) in enumerate(spans)]


def key_response(text: str, language: str | None = None) -> list[Sentence]:
    """Keyed sentences of a response, split in ``language`` (None: the response's own)."""
    return [Sentence(response_key(i), s, a, b) for i, (s, a, b) in enumerate(split_sentences(text, language))]


def _pairs(value: Any) -> list[Sentence]:
    out = []
    for pair in _as_list(value):
        pair = _as_list(pair)
        if len(pair) >= 2:
            out.append(Sentence(str(pair[0]), str(pair[1])))
    return out


def item_from_texts(item_id: str, question: str, documents: Sequence[str], response: str, metadata: dict | None = None,
                    units: Sequence[Sequence[Sequence[int]] | None] | None = None,
                    response_sentences: Sequence[str] | None = None, language: str | None = None) -> EvalItem:
    """An :class:`EvalItem` from raw question / document texts / response text.

    ``units`` gives, per document, its sentences as ``[start, end]`` pairs when they are
    known (ingested chunks carry them); ``response_sentences`` the response's sentences
    when the generator chose them (the extractive generator answers with whole units).
    ``language`` (ISO 639-1) is the item's when the row, configuration or caller names
    it: every text is split in it. None: each text is split in its own detected
    language and the item's is the response's, else the question's."""
    docs = [str(d) for d in documents]
    doc_units = list(units or [])
    given = normalize_language(language) or None
    keyed = [key_document(d, i, doc_units[i] if i < len(doc_units) else None, given) for i, d in enumerate(docs)]
    if response_sentences:
        responses = [Sentence(response_key(i), s) for i, s in enumerate(response_sentences)]
    else:
        responses = key_response(str(response or ""), given)
    return EvalItem(id=str(item_id), question=str(question), documents=keyed, response_sentences=responses,
                    response=str(response or ""), document_texts=docs, metadata=dict(metadata or {}),
                    language=language_of(str(response or ""), str(question), given=given))


def item_from_row(row: dict[str, Any], default_id: str = "", language: str | None = None) -> EvalItem:
    """An :class:`EvalItem` from a RAGBench-format row. Pre-split sentences are used
    as given; otherwise ``documents`` and ``response`` are split here. The item's
    language is the row's ``language`` field, else ``language`` (the configuration's or
    caller's), else detected as in :func:`item_from_texts`."""
    item_id = str(row.get("id") if row.get("id") is not None else default_id)
    question = str(row.get("question") or "")
    response = str(row.get("response") or "")
    given = normalize_language(str(row.get("language") or "")) or normalize_language(language) or None
    doc_texts = [str(d) for d in _as_list(row.get("documents"))]
    if row.get("documents_sentences") is not None:
        documents = [_pairs(doc) for doc in _as_list(row["documents_sentences"])]
    else:
        documents = [key_document(d, i, language=given) for i, d in enumerate(doc_texts)]
    if row.get("response_sentences") is not None:
        response_sentences = _pairs(row["response_sentences"])
    else:
        response_sentences = key_response(response, given)
    if not doc_texts:
        doc_texts = [" ".join(s.text for s in doc) for doc in documents]
    if not response and response_sentences:
        response = " ".join(s.text for s in response_sentences)
    return EvalItem(id=item_id, question=question, documents=documents, response_sentences=response_sentences,
                    response=response, document_texts=doc_texts,
                    metadata={k: row[k] for k in ("dataset_name", "_subset") if k in row},
                    language=language_of(response, question, given=given))


