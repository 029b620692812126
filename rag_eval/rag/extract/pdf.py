"""PDF: text with pypdfium2 (PDFium's own text layer), re-flowed into paragraphs a reader
would recognise.

- Line-end hyphenation leaves no trace. PDFium marks a hyphen it recognises as a line
  break with U+FFFE (or U+0002; some producers write a soft hyphen, U+00AD) and already
  joins the two halves (``manip\\ufffeulation``): the marker is removed. A plain ``-`` at
  a line end is undone when the next line starts in lower case (``inter-`` +
  ``operability`` -> ``interoperability``).
- Running headers and footers are dropped: a line at the top or bottom of a page that
  recurs, digits aside, on at least three pages close together (a chapter's pages) or on
  half of all pages; a line there, found on two pages or more, that starts or ends with
  the page's printed number (``Chapter 3: Utilities 6``, learnt from how printed numbers
  follow the PDF's pages);
  and bare page numbers.
- Tables of contents and indexes are dropped: lines with dot leaders (``2.1 ASN.1
  syntax . . . . . 2``) a few lines apart form one list, which goes from its title
  (``Table of Contents``) to its last leader line, wrapped entries included.
- Headings come only from the PDF's outline (its bookmarks: each entry's title found on
  the page it points to, at the entry's depth) or, when there is none, from heading
  typography: a short line set clearly larger than the body text, its level by size
  (not on a title page: the first of a longer document).
  A body sentence that merely starts with a number (``0. With this instruction…``) is
  never a heading.
- Lines are joined into paragraphs: a paragraph ends after a line clearly shorter than
  the page's full lines and before a bullet. Each block keeps the 1-based page it starts
  on; a paragraph broken across pages continues there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval.rag.extract import Block, Extracted, HeadingTrail, collapse

_BULLET = re.compile(r"^[•◦▪‣∙·\-–*]\s+")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_SENTENCE_END = re.compile(r"[.!?:;)\]\"'”’]$")
_HYPHEN_MARKS = "\ufffe\u0002\u00ad"  # PDFium's line-break hyphen, and the soft hyphen
_LEADER = re.compile(r"(?:\.\s?){4,}\s*[\divxlcdm]+\s*$", re.IGNORECASE)  # "Naming . . . . . 3"
_CONTENTS_TITLE = re.compile(r"^(?:table of )?contents$", re.IGNORECASE)
_EDGE = 2  # lines at the top and bottom of a page that may be running headers/footers
_RUN_WINDOW = 3  # running-header occurrences at most this many pages apart count as one run
FULL_LINE = 0.8  # a line at least this fraction of the page's widest lines is "full"
HEADING_SIZE = 1.15  # a heading's type is at least this many times the body text's size


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a page as PDFium reads it, with its type size (0 when unknown)."""

    text: str
    size: float = 0.0


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A bookmark: its title, its depth (0 = top) and the 0-based page it points to."""

    title: str
    level: int
    page: int


def _split_lines(text: str, sizes: Sequence[float] | None = None) -> list[Line]:
    """A page's lines with their dominant type size, hyphenation markers resolved: a marker
    at a line's end joins the next line to it, one inside a line (PDFium already joined
    the halves) is removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n") if sizes is None else text
    lines: list[Line] = []
    pos = 0
    joining = False
    for raw in re.split(r"\r\n|\n|\r", text):
        size = 0.0
        if sizes is not None:
            counts: Counter[float] = Counter(round(sizes[k], 1) for k in range(pos, min(pos + len(raw), len(sizes)))
                                             if not text[k].isspace())
            size = counts.most_common(1)[0][0] if counts else 0.0
        pos += len(raw) + (2 if text[pos + len(raw):pos + len(raw) + 2] == "\r\n" else 1)
        stripped = raw.strip()
        ends_hyphenated = stripped[-1:] in _HYPHEN_MARKS if stripped else False
        clean = "".join(ch for ch in stripped if ch not in _HYPHEN_MARKS)
        if joining and lines:
            lines[-1] = Line(lines[-1].text + clean, lines[-1].size)
        else:
            lines.append(Line(clean, size))
        joining = ends_hyphenated
    return lines


def _runs(pages: Sequence[int]) -> int:
    """The most occurrences close together (each within ``_RUN_WINDOW`` pages of the last)."""
    best = run = 0
    previous = None
    for page in sorted(pages):
        run = run + 1 if previous is not None and page - previous <= _RUN_WINDOW else 1
        best, previous = max(best, run), page
    return best


def _edge_lines(pages: list[list[Line]]) -> dict[str, list[int]]:
    """Digit-normalised lines at the top or bottom of pages, and the pages they are on."""
    where: dict[str, list[int]] = {}
    for page_no, lines in enumerate(pages):
        content = [line.text for line in lines if line.text]
        for line in set(content[:_EDGE] + content[-_EDGE:]):
            where.setdefault(_DIGITS.sub("#", line), []).append(page_no)
    return where


def _running(where: dict[str, list[int]], pages: int) -> set[str]:
    """Edge lines that recur on pages close together (a chapter's running header) or on
    half of all pages."""
    if pages < 3:
        return set()
    return {line for line, found in where.items()
            if len(found) >= 3 and (_runs(found) >= 3 or len(found) >= pages // 2)}


def _without_contents(lines: list[Line]) -> list[Line]:
    """The page without its table of contents or index (module docstring)."""
    leaders = [i for i, line in enumerate(lines) if _LEADER.search(line.text)]
    if not leaders:
        return lines
    groups: list[list[int]] = []  # leader lines a few lines apart (an entry may wrap) form one list
    for i in leaders:
        if groups and i - groups[-1][-1] <= 3:
            groups[-1].append(i)
        else:
            groups.append([i])
    drop: set[int] = set()
    for group in groups:
        start = group[0]
        for j in range(max(0, start - 3), start):  # the list's own title just above it
            if _CONTENTS_TITLE.match(lines[j].text.strip()):
                start = j
        if len(group) >= 2 or start < group[0]:
            drop.update(range(start, group[-1] + 1))
    return [line for i, line in enumerate(lines) if i not in drop]


_END_NUMBERS = re.compile(r"^(\d+)\s|\s(\d+)$|^(\d+)$")


def _end_number(text: str) -> int | None:
    """The number a line starts or ends with (a printed page number, perhaps)."""
    m = _END_NUMBERS.search(text)
    return int(next(g for g in m.groups() if g)) if m else None


def _edge_numbers(lines: list[Line]) -> set[int]:
    content = [line.text for line in lines if line.text]
    return {n for text in content[:_EDGE] + content[-_EDGE:] if (n := _end_number(text)) is not None}


def _page_offset(pages: list[list[Line]]) -> int | None:
    """How printed page numbers follow the PDF's pages (PDF page - printed number), when at
    least three pages agree (front matter makes it other than 0)."""
    offsets: Counter[int] = Counter()
    for page_no, lines in enumerate(pages, start=1):
        offsets.update({page_no - n for n in _edge_numbers(lines)})
    if not offsets:
        return None
    offset, count = offsets.most_common(1)[0]
    return offset if count >= 3 else None


def _clean(lines: list[Line], running: set[str], printed: int | None = None,
           recurring: frozenset[str] = frozenset()) -> list[Line]:
    """The page without running headers/footers, page numbers and contents lists
    (``printed``: the page's printed number, when known; ``recurring``: edge lines,
    digits aside, found on more than one page)."""
    content = [line for line in lines if line.text]
    keep = []
    for i, line in enumerate(content):
        at_edge = i < _EDGE or i >= len(content) - _EDGE
        if at_edge and (_DIGITS.sub("#", line.text) in running or _PAGE_NUMBER.match(line.text)):
            continue
        normal = _DIGITS.sub("#", line.text)
        if at_edge and printed is not None and normal in recurring and _end_number(line.text) == printed:
            continue
        keep.append(line)
    return _without_contents(keep)


def _join(previous: str, line: str) -> str:
    """Two lines of one paragraph: a hyphen split at a line end is undone."""
    if previous.endswith("-") and len(previous) > 1 and previous[-2].isalpha() and line[:1].islower():
        return previous[:-1] + line
    return previous + " " + line


def _same(a: str, b: str) -> bool:
    return collapse(a).casefold() == collapse(b).casefold()


class _Headings:
    """Which lines are headings: the outline's entries on their pages, or else the lines
    set in heading type (module docstring)."""

    def __init__(self, pages: list[list[Line]], outline: Sequence[OutlineEntry]) -> None:
        self.by_page: dict[int, list[OutlineEntry]] = {}
        for entry in outline:
            self.by_page.setdefault(entry.page, []).append(entry)
        self.outline = bool(outline)
        self.pages = len(pages)
        sizes: Counter[float] = Counter()
        for lines in pages:
            for line in lines:
                if line.size:
                    sizes[line.size] += len(line.text)
        self.body = sizes.most_common(1)[0][0] if sizes else 0.0
        larger = sorted({s for s in sizes if self.body and s >= self.body * HEADING_SIZE}, reverse=True)
        self.levels = {size: level for level, size in enumerate(larger, start=1)}

    def match(self, page: int, lines: list[Line], i: int) -> tuple[int, int, str] | None:
        """(level, lines used, text) when ``lines[i]`` starts a heading on ``page`` (0-based)."""
        line = lines[i].text
        if self.outline:
            for entry in self.by_page.get(page, []):
                for used in (1, 2):  # a long heading may wrap onto a second line
                    text = " ".join(x.text for x in lines[i:i + used])
                    number = text[:len(text) - len(entry.title)].strip() if len(text) > len(entry.title) else ""
                    if _same(text, entry.title) or (
                            _same(text[len(text) - len(entry.title):], entry.title)
                            and re.fullmatch(r"Appendix|(?:[\dA-Z]+\.)*[\dA-Z]+\.?", number)):
                        self.by_page[page].remove(entry)
                        return entry.level + 1, used, collapse(text)
            return None
        level = self.levels.get(lines[i].size)
        if page == 0 and self.pages > 2:
            return None  # a title page: its large lines are the title, author and date, not sections
        if level is None or len(line) > 120 or not any(ch.isalpha() for ch in line):
            return None
        used = 1
        while i + used < len(lines) and lines[i + used].size == lines[i].size and used < 3:
            used += 1  # a heading that wraps: its following lines in the same type
        return level, used, collapse(" ".join(x.text for x in lines[i:i + used]))


def extract_pdf_pages(pages: Sequence[str | list[Line]], title: str = "",
                      outline: Sequence[OutlineEntry] = ()) -> Extracted:
    """Blocks from each page's text (a string with the PDF's line breaks, or its
    :class:`Line` list with type sizes), headings from ``outline`` when given."""
    raw = [p if isinstance(p, list) else _split_lines(p) for p in pages]
    where = _edge_lines(raw)
    running = _running(where, len(raw))
    recurring = frozenset(line for line, found in where.items() if len(found) >= 2)
    offset = _page_offset(raw)
    cleaned = [_clean(lines, running, None if offset is None else page_no - offset, recurring)
               for page_no, lines in enumerate(raw, start=1)]
    headings = _Headings(cleaned, outline)
    trail = HeadingTrail()
    blocks: list[Block] = []
    current: list[str] = []  # the paragraph being built
    current_kind, current_page, open_paragraph = "paragraph", 1, False

    def flush() -> None:
        nonlocal current, open_paragraph
        if current:
            text = collapse(current[0])
            if text:
                blocks.append(Block(current_kind, text, trail.path, current_page))
        current, open_paragraph = [], False

    for page_no, lines in enumerate(cleaned, start=1):
        texts = [line.text for line in lines]
        widths = sorted(len(text) for text in texts)
        full = widths[int(len(widths) * 0.9)] * FULL_LINE if widths else 0
        i = 0
        while i < len(lines):
            found = headings.match(page_no - 1, lines, i)
            if found is not None:
                level, used, text = found
                flush()
                blocks.append(Block("heading", text, trail.enter(level, text), page_no))
                i += used
                continue
            line = texts[i]
            i += 1
            bullet = bool(_BULLET.match(line))
            unfinished = bool(current) and not _SENTENCE_END.search(current[0])
            continues = bool(current) and not bullet and (open_paragraph or unfinished) and (
                page_no == current_page or line[:1].islower() or unfinished)
            if continues:
                current[0] = _join(current[0], line)
            else:
                flush()
                current, current_kind, current_page = [line], "list_item" if bullet else "paragraph", page_no
            open_paragraph = len(line) >= full
        if current and not open_paragraph and _SENTENCE_END.search(current[0]):
            flush()
    flush()
    return Extracted(title=title, blocks=blocks, metadata={"pages": len(pages)})


def _outline(pdf) -> list[OutlineEntry]:
    entries = []
    for item in pdf.get_toc():
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        title = collapse(item.get_title() or "")
        if index is not None and title:
            entries.append(OutlineEntry(title, item.level, index))
    return entries


def _page_lines(page) -> list[Line]:
    """A page's lines with each character's type size (PDFium's text page API)."""
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        count = textpage.count_chars()
        sizes = [pdfium_c.FPDFText_GetFontSize(textpage.raw, k) for k in range(count)] if count == len(text) else None
        return _split_lines(text, sizes)  # sizes only where characters and text line up one to one
    finally:
        textpage.close()


def extract_pdf(data: bytes) -> Extracted:
    """Blocks of a PDF given as bytes. Raises ``ValueError`` for an unreadable or
    encrypted file (the loader turns it into a message that names the file)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        raise ValueError(str(err)) from None
    try:
        pages = []
        for page in pdf:
            pages.append(_page_lines(page))
            page.close()
        title = collapse(str(pdf.get_metadata_dict().get("Title") or ""))
        outline = _outline(pdf)
    finally:
        pdf.close()
    extracted = extract_pdf_pages(pages, title, outline)
    if not extracted.title:  # the first line of the first page (often also the running header)
        first = next((line.text for line in (pages[0] if pages else []) if line.text), "")
        extracted.title = first[:120]
    if extracted.title:  # the document's title heads every heading path, as an HTML page's h1 does
        extracted.blocks = [Block(b.kind, b.text, (extracted.title, *b.heading_path), b.page)
                            for b in extracted.blocks]
    return extracted
