"""HTML: the page's main content only, with trafilatura.

trafilatura drops navigation, sidebars, headers and footers (``Previous topic``, ``Show
Source``, tables of contents) and returns the main content as XML whose elements we
turn into blocks: ``head`` (headings, with their level), ``p``, ``list/item``,
``table/row/cell``, ``quote`` and ``code``. Prose white space is collapsed as a browser
shows it; code keeps its lines: every ``<pre>`` is marked as code before trafilatura runs
(:func:`_protect_pre`), since its heuristics take a plain ``<pre>`` for a quote.
Sphinx's permalink marks (``¶``) are dropped from headings. readability-lxml was measured
beside it (``bench/bench_html_extract.py``, figures in docs/pipeline.md).
"""

from __future__ import annotations

import re
from html import unescape

from rag_eval.rag.extract import Block, Extracted, HeadingTrail, collapse

_PERMALINK = re.compile(r"[\s¶#\uf0c1]+$")
_ITEM_BLOCKS = ("list", "code", "table", "p", "quote")  # blocks of their own inside a list item
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


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
    block, turning ``( option`` into ``(  option``.
    """
    from lxml import etree

    for pre in list(tree.iter("pre")):
        for br in pre.iter("br"):
            br.tail = "\n" + (br.tail or "")
        text = str(pre.xpath("string()"))  # text nodes only, comments left out
        for child in list(pre):
            pre.remove(child)
        pre.text = None
        etree.SubElement(pre, "span").text = text
        if not pre.get("lang"):
            pre.set("lang", "text")


def extract_html(html: str) -> Extracted:
    """Main-content blocks of an HTML page (empty when nothing readable is found)."""
    from lxml import etree
    from trafilatura import extract, load_html

    tree = load_html(html)
    if tree is None:
        return Extracted(title="")
    _protect_pre(tree)
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

    def walk(element, in_list: bool = False) -> None:
        for child in element:
            tag = child.tag
            if tag == "head":
                text = _PERMALINK.sub("", collapse(_text(child)))
                rend = child.get("rend") or "h2"
                level = int(rend[1:]) if rend[1:].isdigit() else 2
                if text:
                    blocks.append(Block("heading", text, trail.enter(level, text)))
            elif tag == "p":
                text = collapse(_text(child))
                if text:
                    blocks.append(Block("list_item" if in_list else "paragraph", text, trail.path))
            elif tag == "code":
                text = _text(child).strip("\n").rstrip()
                if text.strip():
                    blocks.append(Block("code", text, trail.path))
            elif tag == "list":
                walk(child, in_list=True)
            elif tag == "item":
                nested = [c for c in child if c.tag in _ITEM_BLOCKS]
                own = collapse((child.text or "") + "".join(
                    _text(c) + (c.tail or "") if c.tag not in _ITEM_BLOCKS else (c.tail or "") for c in child))
                if own:
                    blocks.append(Block("list_item", own, trail.path))
                for c in nested:
                    walk_one(c, in_list=True)
            elif tag == "table":
                rows = []
                for row in child.iter("row"):
                    cells = [collapse(_text(cell)) for cell in row if cell.tag == "cell"]
                    if any(cells):
                        rows.append(" | ".join(cells))
                if rows:
                    blocks.append(Block("table", "\n".join(rows), trail.path))
            elif tag == "quote" and _has_own_text(child):  # quoted prose, inline markup (<code>, <hi>) and all
                text = collapse(_text(child))
                blocks.append(Block("list_item" if in_list else "paragraph", text, trail.path))
            elif tag in ("quote", "div", "main", "section"):
                walk(child, in_list)
            else:
                text = collapse(_text(child))
                if text:
                    blocks.append(Block("paragraph", text, trail.path))

    def walk_one(element, in_list: bool) -> None:
        holder = etree.Element("holder")
        holder.append(element)
        walk(holder, in_list)

    walk(main)
    title = _title(html, blocks)
    if title and not any(b.kind == "heading" for b in blocks):  # the page's own title heads its content
        blocks = [Block(b.kind, b.text, (title,), b.page) for b in blocks]
    return Extracted(title=title, blocks=blocks)
