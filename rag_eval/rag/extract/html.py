"""HTML: the page's main content only, with trafilatura.

trafilatura drops navigation, sidebars, headers and footers (``Previous topic``, ``Show
Source``, tables of contents) and returns the main content as XML whose elements we
turn into blocks: ``head`` (headings, with their level), ``p``, ``list/item``,
``table/row/cell``, ``quote`` and ``code``. Prose white space is collapsed as a browser
shows it; code keeps its lines: every ``<pre>`` is marked as code before trafilatura runs
(:func:`_protect_pre`), since its heuristics take a plain ``<pre>`` for a quote.
Sphinx's permalink marks (``¶``) are dropped from headings. readability-lxml was measured
beside it (``bench/bench_html_extract.py``, figures in docs/pipeline.md).

Headings and definition terms are marked before trafilatura runs (:func:`_mark_headings`):
its heuristics drop DocBook's section headings (``div.refsect1 > h2``, ``div.sect2 > h3``
on the PostgreSQL manual, which left every chunk under the page title alone) and turn a
``<dt>`` holding only ``<code>`` into a one-word code block. Each becomes a paragraph that
starts with a marker and its level (``[[rag-eval:h2]]``), which trafilatura keeps like any
paragraph and :func:`extract_html` reads back as a heading, or as the term that opens its
definition (``FULL: Selects “full” vacuum, …``); an admonition's title (DocBook's
``div.note > h3``) is read as such a term (``Note: Some client libraries…``), not as a section.
"""

from __future__ import annotations

import re
from html import unescape

from rag_eval.rag.extract import Block, Extracted, HeadingTrail, collapse

_PERMALINK = re.compile(r"[\s¶#\uf0c1]+$")
_ITEM_BLOCKS = ("list", "code", "table", "p", "quote")  # blocks of their own inside a list item
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_MARK, _MARK_END = "[[rag-eval:", "]]"  # trafilatura strips private-use characters, so plain text
_MARKED = re.compile(r"^\s*\[\[rag-eval:(h[1-6]|dt)\]\]\s*(.*)$", re.DOTALL)
_ANY_MARK = re.compile(r"\s*\[\[rag-eval:(?:h[1-6]|dt|pre\d+)\]\]")  # one inside other text (a term in a table cell)
_PRE_MARK = re.compile(r"\[\[rag-eval:pre\d+\]\]")


def _text(element) -> str:
    return "".join(element.itertext())


def _has_own_text(element) -> bool:
    """Whether text lies directly in ``element`` (not only inside its child elements)."""
    return bool((element.text or "").strip() or any((c.tail or "").strip() for c in element))


def _title(html: str, blocks: list[Block]) -> str:
    for block in blocks:
        if block.kind == "heading":
            return block.text
    m = _TITLE.search(html)
    return collapse(unescape(m.group(1))) if m else ""


def _protect_pre(tree) -> None:
    """Make every ``<pre>`` one that trafilatura keeps as code, before it sees the page.

    trafilatura keeps a ``<pre>`` as code only when it looks like code to its heuristics
    (a ``highlight`` parent as Sphinx writes, highlight.js spans, braces, an indented
    line); any other (DocBook's ``programlisting`` and ``synopsis`` on the PostgreSQL
    manual: ``VACUUM (VERBOSE, ANALYZE) onek;``) becomes a ``quote`` whose lines our walk
    collapsed or lost. trafilatura's own markers: a ``<pre>`` holding a single ``<span>`` is code in every
    context (main text, list items, definition lists, tables), and a ``lang`` attribute is
    code in the main text. The inline markup inside is flattened to its text (``<br>`` as a
    line end) first: trafilatura inserts a space when it merges a nested ``<code>`` into the
    block, turning ``( option`` into ``(  option``. Each ends with a numbered mark (removed
    when read back), since trafilatura drops a block that repeats its predecessor's text: the
    PostgreSQL manual shows the same ``CREATE TABLE products`` listing twice on one page.
    """
    from lxml import etree

    for n, pre in enumerate(list(tree.iter("pre"))):
        for br in pre.iter("br"):
            br.tail = "\n" + (br.tail or "")
        text = str(pre.xpath("string()"))  # text nodes only, comments left out
        for child in list(pre):
            pre.remove(child)
        pre.text = None
        etree.SubElement(pre, "span").text = f"{text}{_MARK}pre{n}{_MARK_END}"  # unique: never taken for a repeat
        if not pre.get("lang"):
            pre.set("lang", "text")


def _heading_level(heading) -> int:
    """A heading's level: its tag's, except DocBook's reference-page title (``div.refnamediv
    > h2``), which is the page's top heading above its ``h2`` sections."""
    parent = heading.getparent()
    if parent is not None and "refnamediv" in (parent.get("class") or "").split():
        return 1
    return int(heading.tag[1])


def _in_admonition(heading) -> bool:
    """DocBook's ``div.note > h3`` (Note, Tip, Warning…): a label, not a section."""
    return any(_ADMONITIONS & set((a.get("class") or "").split()) for a in heading.iterancestors("div"))


def _mark_headings(tree) -> None:
    """Replace every ``h1``–``h6`` and ``dt`` by a marked paragraph trafilatura keeps (module
    doc). A page's own table of contents (DocBook's ``div.toc``: a list of links to the
    sections below) is navigation and goes first; its entries are ``dt``s too. ``dl`` and
    ``dd`` become ``div``s, so terms and definitions keep their order."""
    for toc in tree.xpath("//div[contains(concat(' ', normalize-space(@class), ' '), ' toc ')]"):
        if toc.getparent() is not None:
            toc.getparent().remove(toc)
    for element in list(tree.iter("dl", "dd")):  # trafilatura reorders a <dl>: its terms after all definitions
        element.tag = "div"
    for element in list(tree.iter(*_HEADING_TAGS, "dt")):
        for br in element.iter("br"):  # terms on lines of their own (``WORK<br>TRANSACTION``)
            br.tail = (", " if element.tag == "dt" else " ") + (br.tail or "")
        text = _PERMALINK.sub("", collapse(str(element.xpath("string()"))))
        tag = "dt" if element.tag == "dt" or _in_admonition(element) else f"h{_heading_level(element)}"
        tail = element.tail
        element.clear()
        element.tag, element.text, element.tail = "p", f"{_MARK}{tag}{_MARK_END}{text}", tail


def _term_and_definition(term: str, definition: str) -> str:
    return f"{term} {definition}" if term.endswith((":", ".", "?", "!")) else f"{term}: {definition}"


def extract_html(html: str) -> Extracted:
    """Main-content blocks of an HTML page (empty when nothing readable is found)."""
    from lxml import etree
    from trafilatura import extract, load_html

    tree = load_html(html)
    if tree is None:
        return Extracted(title="")
    _protect_pre(tree)
    _mark_headings(tree)
    xml = extract(tree, output_format="xml", include_tables=True, include_formatting=False, include_comments=False,
                  include_links=False, include_images=False, deduplicate=False, with_metadata=False,
                  fast=True)  # no fallback extractors: trafilatura's own pass is what the tests check
    if not xml:
        return Extracted(title="")
    root = etree.fromstring(xml.encode("utf-8"))
    main = root.find("main")
    main = root if main is None else main
    trail = HeadingTrail()
    blocks: list[Block] = []
    term: list[str] = []  # a definition term waiting for its definition's first paragraph

    def add(kind: str, text: str) -> None:
        """A block; the first prose block after a term carries the term in front of it."""
        text = _ANY_MARK.sub(" ", text).strip() if kind != "code" else _PRE_MARK.sub("", text).rstrip()
        if not text:
            return
        if term:
            held = term.pop()
            if kind in ("paragraph", "list_item"):
                blocks.append(Block("paragraph", _term_and_definition(held, text), trail.path))
                return
            blocks.append(Block("paragraph", held, trail.path))  # a definition that opens with code or a table
        blocks.append(Block(kind, text, trail.path))

    def read_marked(text: str, in_list: bool = False) -> bool:
        """A heading or term marked by :func:`_mark_headings` (False for any other text).
        A heading inside a list item labels the item, as a term does: it opens no section."""
        m = _MARKED.match(text)
        if not m:
            return False
        tag, content = m.group(1), collapse(m.group(2))
        if not content:
            return True
        if tag == "dt" or in_list:
            term.append(f"{term.pop()}, {content}" if term else content)  # <dt>a</dt><dt>b</dt><dd>: one term
            return True
        if term:
            blocks.append(Block("paragraph", term.pop(), trail.path))
        blocks.append(Block("heading", content, trail.enter(int(tag[1]), content)))
        return True

    def walk(element, in_list: bool = False) -> None:
        for child in element:
            tag = child.tag
            if tag == "head":
                text = _PERMALINK.sub("", collapse(_text(child)))
                if read_marked(text):
                    continue
                rend = child.get("rend") or "h2"
                level = int(rend[1:]) if rend[1:].isdigit() else 2
                if text:
                    blocks.append(Block("heading", text, trail.enter(level, text)))
            elif tag == "p":
                text = collapse(_text(child))
                if text and not read_marked(text, in_list):
                    add("list_item" if in_list else "paragraph", text)
            elif tag == "code":
                text = _text(child).strip("\n").rstrip()
                if text.strip():
                    add("code", text)
            elif tag == "list":
                walk(child, in_list=True)
            elif tag == "item":
                nested = [c for c in child if c.tag in _ITEM_BLOCKS]
                own = collapse((child.text or "") + "".join(
                    _text(c) + (c.tail or "") if c.tag not in _ITEM_BLOCKS else (c.tail or "") for c in child))
                if own and not read_marked(own, True):
                    add("list_item", own)
                for c in nested:
                    walk_one(c, in_list=True)
            elif tag == "table":
                rows = []
                for row in child.iter("row"):
                    cells = [collapse(_text(cell)) for cell in row if cell.tag == "cell"]
                    if any(cells):
                        rows.append(" | ".join(cells))
                if rows:
                    add("table", "\n".join(rows))
            elif tag == "quote" and _has_own_text(child):  # quoted prose, inline markup (<code>, <hi>) and all
                text = collapse(_text(child))
                if not read_marked(text, in_list):
                    add("list_item" if in_list else "paragraph", text)
            elif tag in ("quote", "div", "main", "section"):
                walk(child, in_list)
            else:
                text = collapse(_text(child))
                if text and not read_marked(text):
                    add("paragraph", text)

    def walk_one(element, in_list: bool) -> None:
        holder = etree.Element("holder")
        holder.append(element)
        walk(holder, in_list)

    walk(main)
    if term:
        blocks.append(Block("paragraph", term.pop(), trail.path))
    title = _title(html, blocks)
    if title and (not blocks or not blocks[0].heading_path or blocks[0].heading_path[0] != title) \
            and not any(b.kind == "heading" and b.heading_path == (title,) for b in blocks):
        # the page's own title heads its content, as an h1 would (DocBook pages show it only in <title>)
        blocks = [Block(b.kind, b.text, (title, *b.heading_path), b.page) for b in blocks]
    return Extracted(title=title, blocks=blocks)
