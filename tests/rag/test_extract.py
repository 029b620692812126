"""Extraction of real documentation pages (tests/data/docs, see ATTRIBUTION.md there):
sentences a reader sees on each page survive verbatim as whole units, page chrome does
not, and blocks carry heading paths (and PDF pages)."""

from __future__ import annotations

import re
import statistics

import pytest

from harness.extract_pages import CHROME, DOCS, READER_SENTENCES
from rag_eval.rag.chunking import chunk_text
from rag_eval.rag.config import ChunkingConfig
from rag_eval.rag.extract.html import extract_html
from rag_eval.rag.extract.markdown import extract_markdown
from rag_eval.rag.extract.pdf import OutlineEntry, extract_pdf_pages
from rag_eval.rag.ingest import chunk_payload, document_units, section_starts
from rag_eval.rag.loaders import load_file


def _units(name: str) -> tuple[str, list[str]]:
    doc = next(load_file(DOCS / name))
    return doc.text, [doc.text[a:b] for a, b in document_units(doc)]


@pytest.mark.parametrize("name", sorted(READER_SENTENCES))
def test_reader_sentences_survive_as_whole_units(name):
    _, units = _units(name)
    for sentence in READER_SENTENCES[name]:
        assert sentence in units, f"{name}: {sentence!r} is not a whole unit"
    assert statistics.mean(len(u) for u in units) > 60  # whole sentences, not fragments
    assert not [u for u in units if u.strip() in ("¶", "|", "")]


@pytest.mark.parametrize("name", ["venv.html", "controlflow.html", "tutorial-transactions.html", "sql-vacuum.html"])
def test_no_page_chrome_survives(name):
    text, _ = _units(name)
    for chrome in CHROME:
        assert chrome not in text, f"{name}: page chrome {chrome!r} survived"
    assert "¶" not in text


def test_html_blocks_have_heading_paths_and_code_keeps_its_lines():
    doc = next(load_file(DOCS / "controlflow.html"))
    assert doc.title == "4. More Control Flow Tools"
    kinds = {b.kind for b in doc.blocks}
    assert {"heading", "paragraph", "code", "list_item"} <= kinds
    loop = next(b for b in doc.blocks if doc.text[b.start:b.end].startswith("Loop statements may have an else"))
    assert loop.heading_path == ("4. More Control Flow Tools",
                                 "4.4. break and continue Statements, and else Clauses on Loops")
    code = next(b for b in doc.blocks if b.kind == "code" and "for n in range(2, 10):" in doc.text[b.start:b.end])
    assert "\n...     for x in range(2, n):" in doc.text[code.start:code.end]


# The VACUUM reference page's <pre> blocks as a reader sees them (DocBook marks them only by class).
VACUUM_SYNOPSIS = """VACUUM [ ( option [, ...] ) ] [ table_and_columns [, ...] ]
VACUUM [ FULL ] [ FREEZE ] [ VERBOSE ] [ ANALYZE ] [ table_and_columns [, ...] ]

where option can be one of:

    FULL [ boolean ]
    FREEZE [ boolean ]"""


def test_html_pre_blocks_are_code_keeping_their_lines():
    doc = next(load_file(DOCS / "sql-vacuum.html"))
    blocks = [(b.kind, doc.text[b.start:b.end]) for b in doc.blocks]
    code = [text for kind, text in blocks if kind == "code"]
    assert "VACUUM (VERBOSE, ANALYZE) onek;" in code  # the Examples section's programlisting
    synopsis = next(text for text in code if text.startswith("VACUUM [ ("))
    assert synopsis.startswith(VACUUM_SYNOPSIS)
    assert synopsis.endswith("\n\nand table_and_columns is:\n\n    table_name [ ( column_name [, ...] ) ]")
    # the example follows the sentence that introduces it, and the chunker keeps it whole
    intro = next(i for i, (_, text) in enumerate(blocks) if text.startswith("To clean a single table onek"))
    assert blocks[intro + 1] == ("code", "VACUUM (VERBOSE, ANALYZE) onek;")
    units = [doc.text[a:b] for a, b in document_units(doc)]
    assert "VACUUM (VERBOSE, ANALYZE) onek;" in units
    chunks = chunk_text(doc.text, ChunkingConfig(strategy="sentence", size=800, overlap=0), document_units(doc))
    assert any("detailed vacuum activity report:\n\nVACUUM (VERBOSE, ANALYZE) onek;" in c.text for c in chunks)


@pytest.mark.parametrize("name", ["venv.html", "controlflow.html", "tutorial-transactions.html", "sql-vacuum.html"])
def test_every_html_pre_block_comes_out_as_one_code_block(name):
    from lxml import html as lxml_html

    raw = (DOCS / name).read_bytes()
    pres = [pre.text_content().strip("\n").rstrip() for pre in lxml_html.fromstring(raw).iter("pre")]
    code = [b.text for b in extract_html(raw.decode("utf-8")).blocks if b.kind == "code"]
    assert pres and all(pre in code for pre in pres)


def test_html_pre_in_list_items_and_quoted_prose():
    filler = "<p>" + "A sentence of prose long enough for the page to count as content. " * 4 + "</p>"
    html = ("<html><body><article><h1>Page</h1>" + filler
            + "<dl><dt>Term</dt><dd><p>Described here, with an example.</p>"
            + "<pre class='programlisting'>SELECT 1;\n  -- indented\nSELECT 2;</pre></dd></dl>"
            + "<ul><li><p>An item with a listing.</p><pre>one\n  two</pre></li></ul>"
            + "<blockquote>Quoted words with <code>inline</code> code, said by someone.</blockquote>"
            + filler + "</article></body></html>")
    blocks = [(b.kind, b.text) for b in extract_html(html).blocks]
    assert ("code", "SELECT 1;\n  -- indented\nSELECT 2;") in blocks
    assert ("code", "one\n  two") in blocks
    assert ("paragraph", "Quoted words with inline code, said by someone.") in blocks
    assert ("code", "inline") not in blocks


def test_pdf_pages_headings_and_running_headers():
    doc = next(load_file(DOCS / "shared-mime-info-spec.pdf"))
    assert doc.title == "Shared MIME-info Database" and doc.metadata["pages"] == 17
    assert doc.text.count("Shared MIME-info Database") <= 3  # the running header of all 17 pages is gone
    assert all(b.page is not None and 1 <= b.page <= 17 for b in doc.blocks)
    body = [doc.text[b.start:b.end] for b in doc.blocks]
    assert not [t for t in body if t.strip().isdigit()]  # page numbers dropped
    layout = next(b for b in doc.blocks if doc.text[b.start:b.end] == "2.1. Directory layout")
    assert layout.kind == "heading" and layout.page == 2
    assert layout.heading_path == ("Shared MIME-info Database", "2. Unified system", "2.1. Directory layout")


def test_pdf_reflow_hyphenation_headers_and_footers():
    pages = [
        f"Running Title\r\n{n}. Section {'ABCD'[n - 1]}\r\n"
        "This line is long enough to count as a full line of the page, and it goes on-\r\n"
        "ward to the next line without a break.\r\n"
        "A manip\ufffeulation joined by PDFium and a soft hy\u00ad\r\nphen split at a line end.\r\n"
        "Short closing line.\r\nAnother paragraph starts here.\r\n"
        "0. With this instruction a body line starts with a number and stays in its paragraph.\r\n"
        f"Page {n}\r\n"
        for n in range(1, 5)
    ]
    outline = [OutlineEntry(f"{n}. Section {'ABCD'[n - 1]}", 0, n - 1) for n in range(1, 5)]
    extracted = extract_pdf_pages(pages, outline=outline)
    text, spans = extracted.assemble()
    assert "Running Title" not in text and "Page 2" not in text
    assert "goes onward to the next line without a break." in text
    assert "A manipulation joined by PDFium and a soft hyphen split at a line end." in text
    assert not set("\ufffe\u00ad\u0002") & set(text)
    assert text.count("Short closing line.") == 4
    assert [s.page for s in spans if s.kind == "heading"] == [1, 2, 3, 4]  # from the outline only
    assert not [s for s in spans if s.kind == "heading" and text[s.start:s.end].startswith("0.")]
    assert extract_pdf_pages(pages).assemble()[1][0].kind != "heading"  # no outline, no sizes: no headings


def test_markdown_fences_are_code_and_directives_are_prose():
    extracted = extract_markdown((DOCS / "local-project-installs.md").read_text(encoding="utf-8"))
    text, spans = extracted.assemble()
    code = [text[s.start:s.end] for s in spans if s.kind == "code"]
    assert code == ["$ pip install path/to/SomeProject", "$ pip install -e path/to/SomeProject"]
    assert "It is possible to see behaviour differences between regular installs vs editable installs." in text
    assert "{caution}" not in text and "(editable-installs)=" not in text and "```" not in text
    heading = next(s for s in spans if text[s.start:s.end].startswith("Editable installs allow"))
    assert heading.heading_path == ("Local project installs", "Editable installs")


@pytest.mark.parametrize("strategy", ["sentence", "tokens"])
def test_chunks_are_slices_whose_sentences_are_the_documents(strategy):
    doc = next(load_file(DOCS / "venv.html"))
    units = document_units(doc)
    config = ChunkingConfig(strategy=strategy, size=120 if strategy == "tokens" else 800, overlap=20)
    chunks = chunk_text(doc.text, config, units)
    assert len(chunks) > 2
    for chunk in chunks:
        assert doc.text[chunk.start:chunk.end] == chunk.text
        payload = chunk_payload(doc, chunk, units)
        assert payload["source_name"] == "venv.html" and payload["heading_path"][0].startswith("12. Virtual")
        for a, b in payload["sentences"]:
            assert chunk.text[a:b].strip()
    if strategy == "sentence":  # whole units only: every chunk sentence is a document unit
        whole = {doc.text[a:b] for a, b in units}
        for chunk in chunks:
            payload = chunk_payload(doc, chunk, units)
            assert all(chunk.text[a:b] in whole for a, b in payload["sentences"])


def _chunk_paths(name: str, size: int = 600) -> list[tuple[list[str], str]]:
    """(heading path, text) of every chunk of a fixture, as ingest stores them."""
    doc = next(load_file(DOCS / name))
    units = document_units(doc)
    chunks = chunk_text(doc.text, ChunkingConfig(strategy="sentence", size=size, overlap=0), units, section_starts(doc))
    return [(chunk_payload(doc, c, units)["heading_path"], c.text) for c in chunks]


def test_docbook_section_headings_form_the_heading_path():
    """PostgreSQL's DocBook pages: ``div.refsect1 > h2`` and ``div.sect2 > h3`` are the
    sections a reader navigates by; every chunk says which one it comes from."""
    chunks = _chunk_paths("sql-vacuum.html")
    paths = {tuple(path) for path, _ in chunks}
    assert {("VACUUM", "Description"), ("VACUUM", "Parameters"), ("VACUUM", "Notes"), ("VACUUM", "Examples")} <= paths
    full = next(path for path, text in chunks if "FULL: Selects “full” vacuum" in text)
    assert full == ["VACUUM", "Parameters"]
    onek = next(path for path, text in chunks if "VACUUM (VERBOSE, ANALYZE) onek;" in text)
    assert onek == ["VACUUM", "Examples"]
    delay = _chunk_paths("auth-delay.html", 200)
    millis = next(path for path, text in delay if "auth_delay.milliseconds (integer)" in text)
    assert millis == ["F.3. auth_delay", "F.3.1. Configuration Parameters"]
    text = next(load_file(DOCS / "auth-delay.html")).text
    assert "F.3.1. Configuration Parameters, F.3.2. Author" not in text  # the page's own contents list is gone


def test_definition_lists_stay_term_and_definition():
    doc = next(load_file(DOCS / "sql-vacuum.html"))
    blocks = [(b.kind, doc.text[b.start:b.end]) for b in doc.blocks]
    assert ("code", "FULL") not in blocks and ("code", "boolean") not in blocks  # no one-word code blocks
    units = [doc.text[a:b] for a, b in document_units(doc)]
    assert "VERBOSE: Prints a detailed vacuum activity report for each table." in units
    assert "boolean: Specifies whether the selected option should be turned on or off." in units
    notes = next(load_file(DOCS / "tutorial-transactions.html"))  # a DocBook note is a label, not a section
    assert all(b.heading_path == ("3.4. Transactions",) for b in notes.blocks if b.kind != "heading")
    assert "Note: Some client libraries issue BEGIN and COMMIT commands automatically" in notes.text


def test_html_definition_terms_and_headings_in_plain_html():
    filler = "<p>" + "A sentence of prose long enough for the page to count as content. " * 4 + "</p>"
    html = ("<html><head><title>Guide</title></head><body><article><h1>Guide</h1>" + filler
            + "<h2>Options</h2><dl><dt><code>--fast</code></dt><dd><p>Compress faster.</p></dd>"
            + "<dt>-q</dt><dt>--quiet</dt><dd><p>Say nothing.</p></dd></dl>"
            + "<h3>Details</h3>" + filler + "</article></body></html>")
    blocks = [(b.kind, b.text, b.heading_path) for b in extract_html(html).blocks]
    assert ("paragraph", "--fast: Compress faster.", ("Guide", "Options")) in blocks
    assert ("paragraph", "-q, --quiet: Say nothing.", ("Guide", "Options")) in blocks
    assert blocks[-1][2] == ("Guide", "Options", "Details")


SCARS = ("\ufffe", "\u00ad", "\u0002")


@pytest.mark.parametrize("name", ["libtasn1.pdf", "bzip2-manual.pdf", "shared-mime-info-spec.pdf"])
def test_pdf_text_has_no_scars(name):
    """No hyphenation marker, running header, page number, contents list or dot leader
    in what a reader gets from a PDF manual."""
    doc = next(load_file(DOCS / name))
    assert not [ch for ch in SCARS if ch in doc.text]
    assert not re.search(r"(?:\. ){4,}", doc.text)  # dot leaders
    assert "Table of Contents" not in doc.text
    lines = doc.text.split("\n")
    assert not [line for line in lines if re.fullmatch(r"(Chapter|Appendix) [\dA-Z]+: .* \d+", line)]
    assert not [line for line in lines if line.strip().isdigit()]
    for header in ("How to use bzip2", "Programming with libbzip2", "Miscellanea"):  # bzip2's chapter headers
        assert header not in lines


def test_pdf_headings_come_from_the_outline():
    doc = next(load_file(DOCS / "libtasn1.pdf"))
    headings = [(b.page, doc.text[b.start:b.end]) for b in doc.blocks if b.kind == "heading"]
    assert headings[:5] == [(4, "1 Introduction"), (5, "2 ASN.1 structure handling"), (5, "2.1 ASN.1 syntax"),
                            (6, "2.2 Naming"), (7, "2.3 Simple parsing")]
    assert (27, "A.1 GNU Free Documentation License") in headings
    assert not [h for _, h in headings if h.startswith("0.") or h.endswith(".")]  # no body sentence
    field = next(b for b in doc.blocks if doc.text[b.start:b.end].startswith("CHOICE: If NAME indicates a choice"))
    assert field.heading_path == ("Libtasn1", "4 Function reference", "4.2 ASN.1 field functions")


def test_pdf_headings_come_from_heading_type_without_an_outline():
    """bzip2's manual has no bookmarks: its headings are the lines set in larger type."""
    doc = next(load_file(DOCS / "bzip2-manual.pdf"))
    headings = [doc.text[b.start:b.end] for b in doc.blocks if b.kind == "heading"]
    assert headings[1:6] == ["1. Introduction", "2. How to use bzip2", "2.1. NAME", "2.2. SYNOPSIS", "2.3. DESCRIPTION"]
    assert "3.7. Using the library in a stdio-free environment" in headings  # a heading wrapped over two lines
    assert all(len(h) < 90 for h in headings)
    sentence = next(b for b in doc.blocks if "decline to write compressed output" in doc.text[b.start:b.end])
    assert sentence.heading_path == ("bzip2 and libbzip2, version 1.0.8", "2. How to use bzip2", "2.3. DESCRIPTION")
    assert sentence.page == 6


def test_a_listing_repeated_on_a_page_is_kept_each_time():
    """trafilatura drops a block repeating its predecessor's text; the PostgreSQL manual
    shows the same ``CREATE TABLE products`` listing again where a reader needs it."""
    filler = "<p>" + "A sentence of prose long enough for the page to count as content. " * 4 + "</p>"
    listing = "CREATE TABLE products (\n    product_no integer,\n    name text,\n    price numeric\n);"
    html = ("<html><head><title>T</title></head><body><article><h1>T</h1>" + filler
            + "<p>Say you have the product table:</p><pre class='programlisting'>" + listing + "</pre>"
            + "<pre class='programlisting'>" + listing + "</pre>" + filler + "</article></body></html>")
    blocks = extract_html(html).blocks
    assert [b.kind for b in blocks if b.text == listing] == ["code", "code"]
    assert not [b for b in blocks if "[[rag-eval" in b.text]
