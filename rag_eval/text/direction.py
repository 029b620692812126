"""The writing direction of a text, for laying it out: Arabic, Hebrew, Persian, Urdu and
other right-to-left scripts read right-to-left, even when they mix in Latin words.

The first strong character decides (the rule of the Unicode bidirectional algorithm, P2-P3,
that HTML's ``dir="auto"`` applies too); deciding it here rather than with ``dir="auto"``
lets a caller put a left-to-right key (``0a``) in front of a right-to-left sentence without
the key turning the sentence left-to-right.
"""

from __future__ import annotations

import unicodedata

_RTL = frozenset({"R", "AL"})


def text_direction(text: str) -> str:
    """``"rtl"`` when the first strong character of ``text`` is right-to-left, else ``"ltr"``
    (text with no strong character, such as digits only, is ``"ltr"``)."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in _RTL:
            return "rtl"
        if kind == "L":
            return "ltr"
    return "ltr"
