"""PDF: text with pypdfium2 (PDFium's own text layer), re-flowed into paragraphs.

- Lines are joined into paragraphs: a paragraph ends after a line clearly shorter than
  the page's full lines, before a bullet, and around a numbered heading (``2.1. Directory
  layout``), which also sets the heading path.
- End-of-line hyphenation is undone (``inter-`` + ``operability`` -> ``interoperability``)
  when the next line starts in lower case.
- Running headers and footers (a line in the first or last two of a page that recurs,
  digits aside, on at least half the pages) and page numbers are dropped.
- Each block keeps the 1-based page it starts on; a paragraph broken across pages
  continues there.
"""

from __future__ import annotations

import re
from collections import Counter

from rag_eval.rag.extract import Block, Extracted, HeadingTrail, collapse

_BULLET = re.compile(r"^[•◦▪‣∙·\-–*]\s+")
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+[A-Z\"'“‘(\[]\S*")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_SENTENCE_END = re.compile(r"[.!?:;)\]\"'”’]$")
_EDGE = 2  # lines at the top and bottom of a page that may be running headers/footers
FULL_LINE = 0.8  # a line at least this fraction of the page's widest lines is "full"


def _page_lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def _running(pages: list[list[str]]) -> set[str]:
    """Digit-normalised lines that recur at the top or bottom of many pages."""
    if len(pages) < 3:
        return set()
    counts: Counter[str] = Counter()
    for lines in pages:
        content = [line for line in lines if line]
        edges = set(content[:_EDGE] + content[-_EDGE:])
        counts.update(_DIGITS.sub("#", line) for line in edges)
    return {line for line, n in counts.items() if n >= max(3, len(pages) // 2)}


def _clean(lines: list[str], running: set[str]) -> list[str]:
    content = [line for line in lines if line]
    keep = []
    for i, line in enumerate(content):
        at_edge = i < _EDGE or i >= len(content) - _EDGE
        if at_edge and (_DIGITS.sub("#", line) in running or _PAGE_NUMBER.match(line)):
            continue
        keep.append(line)
    return keep


def _heading_level(line: str) -> int | None:
    m = _NUMBERED_HEADING.match(line)
    if not m or len(line) > 90 or line.endswith((".", ",", ";")):
        return None
    return m.group(1).count(".") + 1


def _join(previous: str, line: str) -> str:
    """Two lines of one paragraph: a hyphen split at a line end is undone."""
    if previous.endswith("-") and len(previous) > 1 and previous[-2].isalpha() and line[:1].islower():
        return previous[:-1] + line
    return previous + " " + line


def extract_pdf_pages(pages: list[str], title: str = "") -> Extracted:
    """Blocks from each page's raw text (one string per page, lines as the PDF has them)."""
    raw = [_page_lines(p) for p in pages]
    running = _running(raw)
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

    for page_no, lines in enumerate(raw, start=1):
        lines = _clean(lines, running)
        widths = sorted(len(line) for line in lines)
        full = widths[int(len(widths) * 0.9)] * FULL_LINE if widths else 0
        for line in lines:
            level = _heading_level(line)
            if level is not None:
                flush()
                blocks.append(Block("heading", collapse(line), trail.enter(level, collapse(line)), page_no))
                continue
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
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range())
            textpage.close()
            page.close()
        title = str(pdf.get_metadata_dict().get("Title") or "")
    finally:
        pdf.close()
    extracted = extract_pdf_pages(pages, title)
    if not extracted.title:  # the first line of the first page (often also the running header)
        first = next((line for line in _page_lines(pages[0] if pages else "") if line), "")
        extracted.title = first[:120]
    if extracted.title:  # the document's title heads every heading path, as an HTML page's h1 does
        extracted.blocks = [Block(b.kind, b.text, (extracted.title, *b.heading_path), b.page)
                            for b in extracted.blocks]
    return extracted
