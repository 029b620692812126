"""The language of a text: ISO 639-1 codes from an offline detector.

Every stage that depends on the language (sentence ends, words, stop words, which
retriever fits a collection, whether a judge can read a text) asks here, once per text,
and a row, the configuration or the API can name the language instead (``language:``).
"""

from __future__ import annotations

from functools import lru_cache

#: What a text too short or too mixed to tell gets.
UNKNOWN = "und"
_MIN_CHARS = 3


@lru_cache(maxsize=1 << 12)
def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language, or :data:`UNKNOWN`."""
    sample = " ".join(text.split())[:2000]
    if sum(ch.isalpha() for ch in sample) < _MIN_CHARS:
        return UNKNOWN
    import py3langid

    code, _ = py3langid.classify(sample)
    return str(code)


def language_of(*texts: str, given: str | None = None) -> str:
    """``given`` when the row, configuration or caller named a language, else the detected
    language of the texts joined."""
    if given:
        return given.strip().lower()
    return detect_language(" ".join(t for t in texts if t))
