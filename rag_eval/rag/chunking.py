"""Cutting a document's text into chunks that keep their character offsets.

Every chunk's text is exactly ``text[start:end]`` of the document, so the dashboard can
highlight a retrieved chunk in its source and two ingestions of the same text give the
same chunks (which makes point ids deterministic). Pure functions; the strategy and its
parameters come from :class:`~rag_eval.rag.config.ChunkingConfig`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval.rag.config import ChunkingConfig
from rag_eval.text.sentences import split_sentences

_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    text: str
    start: int
    end: int


def _spans_to_chunks(text: str, spans: list[tuple[int, int]]) -> list[Chunk]:
    return [Chunk(i, text[a:b], a, b) for i, (a, b) in enumerate(spans)]


def _token_windows(tokens: list[tuple[int, int]], size: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans of windows of ``size`` tokens advancing by ``size - overlap``."""
    if not tokens:
        return []
    step = size - overlap
    spans = []
    for first in range(0, len(tokens), step):
        window = tokens[first:first + size]
        spans.append((window[0][0], window[-1][1]))
        if first + size >= len(tokens):
            break
    return spans


def chunk_tokens(text: str, size: int, overlap: int) -> list[Chunk]:
    """Windows of ``size`` whitespace-separated tokens overlapping by ``overlap`` tokens.
    Tokens are counted, but a window is cut at the character offsets of its first and
    last token in the original text: nothing is re-joined from tokens."""
    if overlap >= size:
        raise ValueError(f"overlap ({overlap}) must be smaller than size ({size})")
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    return _spans_to_chunks(text, _token_windows(tokens, size, overlap))


def _split_long(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """A sentence longer than ``size`` characters, cut at whitespace into pieces <= size
    (a single longer word stays whole)."""
    pieces: list[tuple[int, int]] = []
    piece_start: int | None = None
    piece_end = 0
    for m in _TOKEN.finditer(text, start, end):
        if piece_start is None:
            piece_start, piece_end = m.start(), m.end()
        elif m.end() - piece_start <= size:
            piece_end = m.end()
        else:
            pieces.append((piece_start, piece_end))
            piece_start, piece_end = m.start(), m.end()
    if piece_start is not None:
        pieces.append((piece_start, piece_end))
    return pieces


def chunk_sentences(
    text: str, size: int, overlap: int, units: Sequence[tuple[int, int]] | None = None,
    sections: Sequence[int] = (),
) -> list[Chunk]:
    """Whole sentences packed greedily up to ``size`` characters; each new chunk starts
    with the previous chunk's trailing sentences totalling at most ``overlap`` characters
    (never the whole previous chunk, so chunking always advances). ``units`` are the
    document's sentences when known (an extracted document's, see
    :func:`rag_eval.text.sentences.split_blocks`); else the text is split here.

    ``sections`` are the offsets where a section starts (its heading): a chunk never runs
    on into the next section, so its heading path is where all of its text comes from
    (a citation can say ``VACUUM › Examples``). A heading directly followed by another
    stays with it, so no chunk is a heading alone."""
    if overlap >= size:
        raise ValueError(f"overlap ({overlap}) must be smaller than size ({size})")
    if len(text.strip()) <= size:  # fits whole: the same single chunk, without the sentence splitter's cost
        return chunk_document(text)
    pieces: list[tuple[int, int]] = []
    for a, b in units if units is not None else [(a, b) for _, a, b in split_sentences(text)]:
        pieces.extend(_split_long(text, a, b, size) if b - a > size else [(a, b)])
    spans: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    starts = set(sections)
    for unit in pieces:
        if current and unit[0] in starts and not all(u[0] in starts for u in current):
            spans.append((current[0][0], current[-1][1]))  # a new section: no overlap carried into it
            current = []
        if current and unit[1] - current[0][0] > size:
            spans.append((current[0][0], current[-1][1]))
            carried: list[tuple[int, int]] = []
            for prev in reversed(current[1:]):
                if current[-1][1] - prev[0] > overlap or unit[1] - prev[0] > size:
                    break
                carried.insert(0, prev)
            current = carried
        current.append(unit)
    if current:
        spans.append((current[0][0], current[-1][1]))
    return _spans_to_chunks(text, spans)


def chunk_document(text: str) -> list[Chunk]:
    """The whole text (stripped of surrounding white space) as one chunk; [] if blank."""
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    return [Chunk(0, text[start:end], start, end)] if end > start else []


def chunk_text(text: str, config: ChunkingConfig, units: Sequence[tuple[int, int]] | None = None,
               sections: Sequence[int] = ()) -> list[Chunk]:
    """Chunks of ``text`` by ``config.strategy`` (``units``, ``sections``: see :func:`chunk_sentences`)."""
    if config.strategy == "document":
        return chunk_document(text)
    if config.strategy == "tokens":
        return chunk_tokens(text, config.size, config.overlap)
    if config.strategy == "sentence":
        return chunk_sentences(text, config.size, config.overlap, units, sections)
    raise ValueError(f"unknown chunking strategy {config.strategy!r} (use sentence, tokens, document)")
