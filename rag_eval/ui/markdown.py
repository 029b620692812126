"""Text from users, files and providers shown inside Markdown (headings, captions,
messages, widget labels, progress text) renders as text.

The one way to put such a string on a page is :func:`md`: a template written in the code
(which may use Markdown) with ``{}`` placeholders, each filled with a value that is escaped
(:func:`escape_markdown`) and, in deployment mode, has server paths replaced
(:func:`hide_paths`). An id like ``![t](http://host/x.png)`` then cannot make a
viewer's browser fetch anything, nor become a link, an HTML element, a colour directive or
a formula. Tables (``st.dataframe``), select-box options and ``st.text`` show plain text and
need no escaping; ``st.html`` bodies are built with :func:`html.escape` (``display.support_map``).
``tests/security/test_hostile_names.py`` walks every page with hostile names."""

from __future__ import annotations

import re

# The characters that open Markdown syntax: images and links ("![", "["), autolinks and HTML
# ("<"), code, emphasis, headings, tables, strikethrough, LaTeX ("$") and Streamlit's
# ":color[...]" directives (their "["). Plain punctuation stays as it is, so messages read
# (and can be searched) unchanged.
_SPECIAL = re.compile(r"([\\`*_\[\]#!<>|~$])")
# What GitHub-flavoured Markdown (Streamlit's renderer) turns into a link without any
# bracket: "http://…", "www.…" and "name@host". The renderer finds them in the text *after*
# escapes are resolved, so a backslash does not stop it: an invisible WORD JOINER (U+2060)
# goes inside each pattern instead (after "://"'s colon, "www" and "@"); the text reads the same.
_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9]:)(?=//)|(?<=www)(?=\.)|(?<=@)")


# Streamlit's directives (":red[…]", ":small[…]"): with the bracket escaped, the renderer still
# takes ":red" for an empty directive and drops it, so that colon is escaped too ("local:x" stays).
_DIRECTIVE = re.compile(r":(?=[A-Za-z][\w-]*\\\[)")


def escape_markdown(text: object) -> str:
    """``text`` with Markdown/HTML syntax neutralised; newlines become spaces (one line)."""
    escaped = _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    return _AUTOLINK.sub(_JOINER, _DIRECTIVE.sub(r"\\:", escaped))


def paths_shown() -> bool:
    """Whether server paths may appear on a page: not in deployment mode (``llm.policy``)."""
    from rag_eval.llm.policy import load_policy

    return bool(load_policy().show_paths)


def hide_paths(text: str) -> str:
    """In deployment mode (rag_eval.llm.policy) server paths are not shown to visitors:
    the data directory and the user's home become placeholders."""
    from pathlib import Path

    from rag_eval.config import data_dir

    if paths_shown():
        return text
    for path, label in ((str(data_dir()), "<data dir>"), (str(Path.home()), "~")):
        if len(path) > 1:
            text = text.replace(path, label)
    return text


def shown(value: object) -> str:
    """One value from outside the code, ready for any Markdown-rendering place: escaped and,
    in deployment mode, without server paths."""
    return escape_markdown(hide_paths(str(value)))


def md(template: str, *values: object) -> str:
    """``template`` (Markdown written in the code) with each ``{}`` filled by :func:`shown`
    of the next value: ``md("Saved **{}**", name)``."""
    return template.format(*(shown(v) for v in values))
