"""Reading documents from files: ``.txt``, ``.md``, ``.pdf``, ``.html``/``.htm`` and
BEIR-style ``corpus.jsonl`` (rows with ``_id``/``id`` and ``text``, optional ``title``).

A file that cannot be used (unreadable PDF, empty, binary, not UTF-8) raises
:class:`LoaderError` with a message that names the file and says why, so ingestion can
report it and carry on with the other files. A bad row of a corpus file is reported
with its line number while the good rows still load.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from rag_eval.io.rows import json_problem

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
CORPUS_SUFFIXES = (".jsonl",)
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + HTML_SUFFIXES + PDF_SUFFIXES + CORPUS_SUFFIXES
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

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(f"{self.title}\x00{self.text}".encode("utf-8")).hexdigest()


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


def load_text(path: Path) -> Document:
    text = _non_empty(path, _decode_text(path, _read_bytes(path)))
    return Document(doc_id=str(path.resolve()), text=text, source=str(path), title=path.stem)


def load_html(path: Path) -> Document:
    """Visible text of an HTML page (BeautifulSoup; scripts, styles and templates dropped)."""
    from bs4 import BeautifulSoup

    raw = _decode_text(path, _read_bytes(path))
    soup = BeautifulSoup(raw, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(strip=True) if soup.title else ""
    body = soup.body or soup
    lines = (line.strip() for line in body.get_text("\n").splitlines())
    text = "\n".join(line for line in lines if line)
    return Document(doc_id=str(path.resolve()), text=_non_empty(path, text), source=str(path), title=title or path.stem)


def load_pdf(path: Path) -> Document:
    """Text of every page (pypdf). Encrypted, corrupt and image-only PDFs are errors."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    data = _read_bytes(path)
    if not data.lstrip().startswith(b"%PDF"):
        raise LoaderError(f"{path}: not a readable PDF (no PDF header)")
    try:
        import io

        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise LoaderError(f"{path}: the PDF is encrypted; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
    except LoaderError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as err:
        raise LoaderError(f"{path}: not a readable PDF ({type(err).__name__}: {err})") from err
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    title = ""
    try:
        title = (reader.metadata.title if reader.metadata else "") or ""
    except Exception:  # pypdf metadata access can fail on odd files; the title is optional
        title = ""
    return Document(
        doc_id=str(path.resolve()), text=_non_empty(path, text, "extractable text (a scanned PDF needs OCR first)"),
        source=str(path), title=title or path.stem, metadata={"pages": len(pages)},
    )


def iter_corpus(path: Path) -> Iterator[Document | RowProblem]:
    """Documents of a BEIR ``corpus.jsonl``; a bad row yields a :class:`RowProblem`."""
    text = _decode_text(path, _read_bytes(path))
    source = str(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            yield RowProblem(source, lineno, json_problem(err))
            continue
        if not isinstance(row, dict):
            yield RowProblem(source, lineno, f"expected a JSON object, got {type(row).__name__}")
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
    elif suffix in TEXT_SUFFIXES:
        yield load_text(path)
    elif suffix in HTML_SUFFIXES:
        yield load_html(path)
    elif suffix in PDF_SUFFIXES:
        yield load_pdf(path)
    else:
        raise LoaderError(f"{path}: unsupported file type '{suffix or '(none)'}' (use {', '.join(SUPPORTED_SUFFIXES)})")
