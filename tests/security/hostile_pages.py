"""Hostile names for every kind of thing the dashboard shows, real runs that carry them, and
the checks that a page rendered them as text (shared by the AppTest walk and the browser test).

Every name holds a Markdown image, a link, an HTML ``<img>``, Streamlit's ``:red[…]``, a
``$…$`` formula or a 500-character word; the image and link point at a local "pixel" URL, so
the browser test can count whether any browser fetched it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from markdown_it import MarkdownIt

LONG_WORD = "W" * 500
_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# Tags Markdown itself produces from code-written text; any other tag is raw HTML that got through.
_MARKDOWN_TAGS = {"p", "em", "strong", "code", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "br", "hr",
                  "blockquote", "pre", "table", "thead", "tbody", "tr", "th", "td", "del", "s", "a", "img"}


def hostile_names(pixel: str) -> dict[str, str]:
    """One hostile name per kind of thing (``pixel`` is the URL a rendered image would fetch)."""
    return {
        "run": f"![x]({pixel}) run",
        "run2": f"[click]({pixel}) <img src={pixel}> :red[red] $x^2$ run2",
        "item": f"![i]({pixel})",
        "question": f"<img src={pixel} onerror=alert(1)> :red[q] $x^2$ [l]({pixel}) What is {LONG_WORD}?",
        "tag": f"![t]({pixel})",
        "note": f"<img src={pixel}> [n]({pixel})",
        "reviewer": f"![r]({pixel})",
        "calibration": f"![c]({pixel}) :red[cal]",
        # a file or folder name holds no "/": a relative image still makes the browser fetch it
        "dataset": "![d](pixel.png) <img src=pixel.png> :red[d] $d$",
    }


def markdown_problems(text: str) -> list[str]:
    """What ``text`` (a value Streamlit renders as Markdown) would render beyond text: an image,
    a link, an HTML element, a colour directive, a formula or a bare-URL autolink."""
    html = _MD.render(text)
    found = []
    if re.search(r"<img\b", html):
        found.append("image")
    if re.search(r"<a\b", html):
        found.append("link")
    tags = {t.lower() for t in re.findall(r"<([A-Za-z][A-Za-z0-9]*)", html)} - _MARKDOWN_TAGS
    if tags:
        found.append(f"HTML element {sorted(tags)}")
    if re.search(r"(?<!\\):red\[", text):
        found.append("colour directive")
    if re.search(r"(?<!\\)\$[a-z]", text):
        found.append("formula")
    if re.search(r"://127\.0\.0\.1|://pixel", text):  # escaped, a WORD JOINER sits inside "://"
        found.append("autolink")
    return found


def html_problems(body: str) -> list[str]:
    """An ``st.html`` body (built with html.escape) must hold no image or link at all."""
    return [kind for kind, pattern in (("image", r"<img\b"), ("link", r"<a\b"), ("script", r"<script\b"))
            if re.search(pattern, body, re.IGNORECASE)]


# Element fields Streamlit renders as Markdown (bodies, labels, help, progress text, radio
# options); select-box options, tables, st.text and st.code show plain text.
_MARKDOWN_FIELDS = {"body", "label", "help", "text", "caption", "placeholder"}
_PLAIN_TYPES = {"text", "code", "json", "arrow_data_frame", "dataframe", "arrow_table", "exception"}


def _strings(message: Any, path: str = "") -> Iterator[tuple[str, str]]:
    for field, value in message.ListFields():
        name = f"{path}.{field.name}" if path else field.name
        repeated = getattr(field, "is_repeated", None)
        values = value if (repeated if repeated is not None else field.label == field.LABEL_REPEATED) else [value]
        for v in values:
            if isinstance(v, str):
                yield name, v
            elif hasattr(v, "ListFields"):
                yield from _strings(v, name)


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _nodes(child)


def rendered_problems(at: Any) -> list[str]:
    """Every place an AppTest page rendered a hostile value as more than text."""
    problems = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        kind = getattr(node, "type", "")
        if proto is None or not hasattr(proto, "ListFields") or kind in _PLAIN_TYPES:
            continue
        for name, text in _strings(proto):
            leaf = name.rsplit(".", 1)[-1]
            if kind == "html" and leaf == "body":
                problems += [f"html: {p}: {text[:120]!r}" for p in html_problems(text)]
            elif leaf in _MARKDOWN_FIELDS or (kind == "radio" and leaf == "options"):
                problems += [f"{kind}.{name}: {p}: {text[:160]!r}" for p in markdown_problems(text)]
    return problems


def page_strings(at: Any) -> list[str]:
    """Every string of every element an AppTest page holds (tables' cells included)."""
    out = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            out += [text for _, text in _strings(proto)]
        if getattr(node, "type", "") in ("arrow_data_frame", "dataframe"):
            try:
                out.append(node.value.to_string())
            except Exception:  # noqa: BLE001 - a table AppTest cannot decode has no string to check
                pass
    return out
