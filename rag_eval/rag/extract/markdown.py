"""Markdown: parsed with markdown-it-py (CommonMark + tables).

Headings set the heading path; paragraphs, list items, table rows and fenced or
indented code become blocks; inline markup is read as a reader sees it (``**a**`` ->
``a``, a link -> its text, inline code -> its content). MyST directives written as
fences (```` ```{note} ````) hold Markdown and are read as such, except code-like ones
(``{code-block}``, ``{pip-cli}`` …), which stay code.
"""

from __future__ import annotations

import re

from rag_eval.rag.extract import Block, Extracted, HeadingTrail, collapse

_MYST_TARGET = re.compile(r"^\([\w.-]+\)=$")  # "(label)=": a MyST cross-reference target, not text
_PROSE_DIRECTIVES = frozenset({
    "note", "caution", "warning", "tip", "important", "hint", "attention", "danger", "error", "seealso",
    "admonition", "versionadded", "versionchanged", "deprecated", "topic", "sidebar", "epigraph",
})


def _inline(token) -> str:
    out = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif child.type == "image":
            out.append(child.content or "")
    return collapse("".join(out))


def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _blocks(source: str, trail: HeadingTrail, blocks: list[Block]) -> None:
    tokens = _parser().parse(source)
    list_depth = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            text = _inline(tokens[i + 1])
            if text:
                blocks.append(Block("heading", text, trail.enter(int(tok.tag[1:]), text)))
            i += 3
            continue
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif tok.type == "inline" and tokens[i - 1].type == "paragraph_open":
            text = _inline(tok)
            if text and not _MYST_TARGET.match(text):
                blocks.append(Block("list_item" if list_depth else "paragraph", text, trail.path))
        elif tok.type in ("fence", "code_block"):
            info = (tok.info or "").strip()
            name = info[1:info.find("}")] if info.startswith("{") and "}" in info else ""
            if name in _PROSE_DIRECTIVES:
                body = "\n".join(line for line in tok.content.splitlines() if not line.startswith(":"))
                _blocks(body, trail, blocks)
            elif tok.content.strip():
                blocks.append(Block("code", tok.content.strip("\n").rstrip(), trail.path))
        elif tok.type == "table_open":
            rows, cells = [], []
            i += 1
            while i < len(tokens) and tokens[i].type != "table_close":
                t = tokens[i]
                if t.type == "inline":
                    cells.append(_inline(t))
                elif t.type == "tr_close":
                    if any(cells):
                        rows.append(" | ".join(cells))
                    cells = []
                i += 1
            if rows:
                blocks.append(Block("table", "\n".join(rows), trail.path))
        i += 1


def extract_markdown(source: str, fallback_title: str = "") -> Extracted:
    """Blocks of a Markdown document; the title is its first heading."""
    blocks: list[Block] = []
    _blocks(source, HeadingTrail(), blocks)
    title = next((b.text for b in blocks if b.kind == "heading"), fallback_title)
    return Extracted(title=title, blocks=blocks)
