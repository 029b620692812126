"""RAGBench sentence keys.

Document sentences are keyed ``<doc index><letters>`` (``0a`` … ``0z``, ``0aa`` …) and
response sentences ``a``, ``b``, … ``aa``: the letters are bijective base-26, as in
RAGBench, so key ``n`` letters long never collides with a shorter one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DOC_KEY = re.compile(r"^(\d+)([a-z]+)$")


def letters(index: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'aa', 27 -> 'ab' (bijective base-26)."""
    if index < 0:
        raise ValueError(f"sentence index must be >= 0, got {index}")
    out = []
    n = index + 1
    while n:
        n, rem = divmod(n - 1, 26)
        out.append(chr(ord("a") + rem))
    return "".join(reversed(out))


def letters_index(text: str) -> int:
    """Inverse of :func:`letters`: 'a' -> 0, 'aa' -> 26."""
    if not text or not text.isalpha() or not text.islower():
        raise ValueError(f"not a letter key: {text!r}")
    n = 0
    for ch in text:
        n = n * 26 + (ord(ch) - ord("a") + 1)
    return n - 1


def document_key(doc_index: int, sentence_index: int) -> str:
    return f"{doc_index}{letters(sentence_index)}"


def response_key(sentence_index: int) -> str:
    return letters(sentence_index)


def normalize_key(raw: object) -> str:
    """Tolerate what real judge output contains: spaces, upper case, a trailing
    '.', quotes or brackets. Returns '' for something that is not key-like."""
    text = str(raw).strip().strip("'\"`[](){}").strip().rstrip(".,;:").strip().lower()
    text = re.sub(r"\s+", "", text)
    return text


@dataclass(frozen=True, slots=True)
class DocKey:
    doc_index: int
    sentence_index: int


def parse_document_key(key: str) -> DocKey | None:
    """'12ab' -> DocKey(12, 27); None when the (normalised) key is not a document key."""
    m = _DOC_KEY.match(key)
    if not m:
        return None
    return DocKey(int(m.group(1)), letters_index(m.group(2)))


