"""Reading documents from files: ``.txt``, ``.md``, ``.pdf``, ``.html``/``.htm`` and
BEIR-style ``corpus.jsonl`` (rows with ``_id``/``id`` and ``text``, optional ``title``).

HTML, PDF and Markdown go through :mod:`rag_eval.rag.extract`: the document's text is
the extracted main content, and :attr:`Document.blocks` says where each heading,
paragraph, list item, table and code block lies in it (with heading path and page).

A file that cannot be used (unreadable PDF, empty, binary, not UTF-8) raises
:class:`LoaderError` with a message that names the file and says why, so ingestion can
report it and carry on with the other files. A bad row of a corpus file is reported
with its line number while the good rows still load.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_eval.io.rows import RowError, jsonl_row
from rag_eval.rag.extract import BlockSpan, Extracted

TEXT_SUFFIXES = (".txt",)
MARKDOWN_SUFFIXES = (".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
CORPUS_SUFFIXES = (".jsonl",)
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + MARKDOWN_SUFFIXES + HTML_SUFFIXES + PDF_SUFFIXES + CORPUS_SUFFIXES
_BINARY_SNIFF_BYTES = 8192


class LoaderError(ValueError):
    """A whole file cannot be loaded; the message names the file and the reason."""


@dataclass(frozen=True, slots=True)
class Document:
    """One document to chunk. ``doc_id`` is stable across re-ingestion (the resolved
    file path, or the corpus row's ``_id``); ``content_hash`` changes when the text does."""

    doc_id: str
    text: str
    source: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    blocks: tuple[BlockSpan, ...] = ()  # where headings, paragraphs, list items, tables, code lie in text

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(f"{self.title}\x00{self.text}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class RowProblem:
    """A corpus row that was skipped (``line`` is 1-based)."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}: line {self.line}: {self.message}"


def discover_files(paths: list[str | Path]) -> tuple[list[Path], list[str]]:
    """Files to load from ``paths`` (folders are walked recursively, keeping only
    supported suffixes, in sorted order) and messages for paths that do not exist."""
    files: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
            )
        elif path.is_file():
            files.append(path)
        else:
            missing.append(f"{path}: no such file or folder")
    return list(dict.fromkeys(files)), missing


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise LoaderError(f"{path}: cannot read the file ({err.strerror or err})") from err
    if not data.strip():
        raise LoaderError(f"{path}: the file is empty")
    return data


def _decode_text(path: Path, data: bytes) -> str:
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise LoaderError(f"{path}: looks like a binary file, not text (supported: {', '.join(SUPPORTED_SUFFIXES)})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise LoaderError(f"{path}: line {line}: not valid UTF-8 text (byte {err.start}); save it as UTF-8") from err


def _non_empty(path: Path, text: str, what: str = "text") -> str:
    if not text.strip():
        raise LoaderError(f"{path}: no {what} found in the file")
    return text


def _from_extracted(path: Path, extracted: Extracted, what: str = "text") -> Document:
    text, spans = extracted.assemble()
    return Document(
        doc_id=str(path.resolve()), text=_non_empty(path, text, what), source=str(path),
        title=extracted.title or path.stem, metadata=dict(extracted.metadata), blocks=tuple(spans),
    )


def load_text(path: Path) -> Document:
    text = _non_empty(path, _decode_text(path, _read_bytes(path)))
    return Document(doc_id=str(path.resolve()), text=text, source=str(path), title=path.stem)


def load_markdown(path: Path) -> Document:
    """Markdown parsed into blocks (:mod:`rag_eval.rag.extract.markdown`)."""
    from rag_eval.rag.extract.markdown import extract_markdown

    source = _non_empty(path, _decode_text(path, _read_bytes(path)))
    return _from_extracted(path, extract_markdown(source, path.stem))


def load_html(path: Path) -> Document:
    """The page's main content (trafilatura; navigation and page chrome dropped)."""
    from rag_eval.rag.extract.html import extract_html

    raw = _decode_text(path, _read_bytes(path))
    return _from_extracted(path, extract_html(raw), "readable main content")


def load_pdf(path: Path) -> Document:
    """Re-flowed text of every page (pypdfium2). Encrypted, corrupt and image-only PDFs are errors."""
    from rag_eval.rag.extract.pdf import extract_pdf

    data = _read_bytes(path)
    if not data.lstrip().startswith(b"%PDF"):
        raise LoaderError(f"{path}: not a readable PDF (no PDF header)")
    try:
        extracted = extract_pdf(data)
    except ValueError as err:
        reason = str(err)
        if "password" in reason.lower() or "security" in reason.lower():
            raise LoaderError(f"{path}: the PDF is encrypted; decrypt it first") from None
        cause = reason.rsplit("(PDFium: ", 1)[-1].rstrip(").") if "(PDFium: " in reason else reason
        raise LoaderError(f"{path}: not a readable PDF: the file is damaged or incomplete (a download cut short?); "
                          f"PDFium says: {cause}") from None
    return _from_extracted(path, extracted, "extractable text (a scanned PDF needs OCR first)")


def iter_corpus(path: Path) -> Iterator[Document | RowProblem]:
    """Documents of a BEIR ``corpus.jsonl``; a bad row yields a :class:`RowProblem`."""
    text = _decode_text(path, _read_bytes(path))
    source = str(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = jsonl_row(source, lineno, line)
        if isinstance(row, RowError):
            yield RowProblem(source, lineno, row.message)
            continue
        doc_id = row.get("_id", row.get("id"))
        body = row.get("text")
        if doc_id in (None, ""):
            yield RowProblem(source, lineno, "field '_id': missing")
        elif not isinstance(body, str) or not body.strip():
            yield RowProblem(source, lineno, "field 'text': missing or empty")
        else:
            extra = {k: v for k, v in row.items() if k not in ("_id", "id", "text", "title")}
            yield Document(doc_id=str(doc_id), text=body, source=source, title=str(row.get("title") or ""),
                           metadata=extra)


def load_file(path: str | Path) -> Iterator[Document | RowProblem]:
    """Documents of one file (one for txt/md/pdf/html, many for a corpus.jsonl).

    Raises :class:`LoaderError` when the file as a whole cannot be used."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in CORPUS_SUFFIXES:
        yield from iter_corpus(path)
        return
    loaders = ((TEXT_SUFFIXES, load_text), (MARKDOWN_SUFFIXES, load_markdown), (HTML_SUFFIXES, load_html),
               (PDF_SUFFIXES, load_pdf))
    load = next((loader for suffixes, loader in loaders if suffix in suffixes), None)
    if load is None:
        raise LoaderError(f"{path}: unsupported file type '{suffix or '(none)'}' (use {', '.join(SUPPORTED_SUFFIXES)})")
    yield load(path)
