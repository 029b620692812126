"""Text from users, files and providers shown inside Markdown (headings, captions,
messages) renders as text: every Markdown and HTML special character is escaped, so an
id like ``![t](http://host/x.png)`` cannot make a viewer's browser fetch anything."""

from __future__ import annotations

import re

# The characters that open Markdown syntax: images and links ("![", "["), autolinks and HTML
# ("<"), code, emphasis, headings, tables, strikethrough, LaTeX ("$") and Streamlit's
# ":color[...]" directives (their "["). Plain punctuation stays as it is, so messages read
# (and can be searched) unchanged.
_SPECIAL = re.compile(r"([\\`*_\[\]#!<>|~$])")


def escape_markdown(text: object) -> str:
    """``text`` with Markdown/HTML syntax neutralised; newlines become spaces (one line)."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
