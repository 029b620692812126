"""Extraction: a file's readable text as blocks (headings, paragraphs, list items,
table rows, code blocks), each with the heading path it sits under and, for PDFs, its
page.

One module per format (:mod:`.html` with trafilatura, :mod:`.pdf` with pypdfium2,
:mod:`.markdown` with markdown-it-py); all return :class:`Extracted`, whose
:meth:`~Extracted.assemble` lays the blocks out as one text (blocks separated by a blank
line) and records where each block lies in it. Chunks are slices of that text, so what
a user, a generator or a judge reads is the extracted text itself, never rebuilt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")


def collapse(text: str) -> str:
    """White space as a browser shows prose: runs become one space, ends trimmed."""
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # heading, paragraph, list_item, table or code
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None  # 1-based, PDFs only


@dataclass(frozen=True, slots=True)
class BlockSpan:
    """Where a block lies in the assembled text."""

    start: int
    end: int
    kind: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None


@dataclass(slots=True)
class Extracted:
    title: str
    blocks: list[Block] = field(default_factory=list)
    metadata: dict[str, object] = field(default_factory=dict)

    def assemble(self) -> tuple[str, list[BlockSpan]]:
        """The document text (blocks joined by blank lines) and each block's span."""
        parts: list[str] = []
        spans: list[BlockSpan] = []
        pos = 0
        for block in self.blocks:
            text = block.text.strip("\n")
            if not text.strip():
                continue
            if parts:
                parts.append("\n\n")
                pos += 2
            parts.append(text)
            spans.append(BlockSpan(pos, pos + len(text), block.kind, block.heading_path, block.page))
            pos += len(text)
        return "".join(parts), spans


class HeadingTrail:
    """The headings above the current position, by level (1 = top)."""

    def __init__(self) -> None:
        self._trail: list[tuple[int, str]] = []

    def enter(self, level: int, text: str) -> tuple[str, ...]:
        self._trail = [(lv, t) for lv, t in self._trail if lv < level] + [(level, text)]
        return self.path

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self._trail)
