"""Words of any language: the one tokenizer everything that counts words uses.

BM25, the ``lexical`` and local judges' features, answer match, the text metrics and the
synthetic-question filters all count words; before this module each had its own ASCII
pattern, which cut German words at umlauts, dropped the vowel signs of Devanagari and
Thai, and read a Chinese sentence (no spaces) as one word or none. Here:

- **Normalization**: NFKC (full-width forms become their ordinary ones), digits of every
  script become ASCII digits (``٣`` and ``３`` are ``3``), then case folding
  (``Straße`` meets ``strasse``). Turkish and Azerbaijani fold ``I``/``İ`` by their own
  rule (``I`` -> ``ı``, ``İ`` -> ``i``); elsewhere the dot that ``İ`` leaves behind is
  dropped, so ``İstanbul`` meets ``istanbul`` in any language.
- **Words**: a run of letters with their combining marks and digits (``\\p{L}\\p{M}\\p{N}``),
  apostrophes inside a word kept (``don't``, ``l'eau``).
- **Scripts written without spaces** (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar,
  Tibetan): each run of them becomes its overlapping character bigrams (a run of one
  character is itself), counted in grapheme clusters so a Thai vowel sign stays on its
  consonant. Bigrams need no dictionary, work for every such language alike and are what
  Lucene's CJK analyzer does; ``docs/benchmarks.md`` ("Words in scripts without spaces")
  has the measurement against dictionary segmenters.
- **Stop words** per language (``stopwordsiso``), for the counters that want content words.

Pure functions, no I/O; remembered per text where callers repeat texts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache, lru_cache

import regex

#: Recorded wherever tokens are stored (BM25 collections, caches): a change of the rules
#: above changes it, so stored tokens of the old rules are detected, never mixed.
TOKENIZER_VERSION = "words-1"

_SPACELESS_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan")
_SPACELESS_CLASS = "".join(rf"\p{{Script={s}}}" for s in _SPACELESS_SCRIPTS)
# A spaceless run (its marks included), or a word of any other script.
_TOKEN = regex.compile(
    rf"(?P<run>[{_SPACELESS_CLASS}ー々〆ゝゞヽヾ][{_SPACELESS_CLASS}\p{{M}}ー々〆ゝゞヽヾ]*)"
    rf"|(?P<word>[\p{{L}}\p{{M}}\p{{N}}]+(?:['’][\p{{L}}\p{{M}}\p{{N}}]+)*)"
)
_GRAPHEME = regex.compile(r"\X")
# The English fast path: ASCII text needs none of the above (same tokens, a third of the CPU).
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
_TURKIC = frozenset({"tr", "az"})


#: A decimal digit of any script but ASCII (Unicode category Nd): read as its ASCII digit.
#: Replaced where found rather than through a table of every such digit, whose building
#: (a scan of every code point) cost 0.23 s of CPU in each process that tokenized text.
_OTHER_DIGIT = regex.compile(r"(?![0-9])\p{Nd}")


def _ascii_digit(match: regex.Match[str]) -> str:
    return str(unicodedata.digit(match[0]))


def normalize(text: str, language: str | None = None) -> str:
    """``text`` normalized for matching words: NFKC, ASCII digits, case folded (see the
    module docstring). Its length may change: never use it for offsets."""
    if text.isascii():
        return text.lower()
    if language in _TURKIC:
        text = text.replace("I", "ı").replace("İ", "i")
    text = _OTHER_DIGIT.sub(_ascii_digit, unicodedata.normalize("NFKC", text)).casefold()
    return text.replace("i\u0307", "i")


def _bigrams(run: str) -> Iterator[str]:
    clusters = _GRAPHEME.findall(run) if not run.isascii() else list(run)
    if len(clusters) == 1:
        yield clusters[0]
        return
    for a, b in zip(clusters, clusters[1:]):
        yield a + b


@lru_cache(maxsize=1 << 13)
def _words(text: str, language: str | None) -> tuple[str, ...]:
    folded = normalize(text, language)
    if folded.isascii():
        return tuple(_ASCII_WORD.findall(folded.replace("’", "'")))
    out: list[str] = []
    for m in _TOKEN.finditer(folded.replace("’", "'")):
        run = m.group("run")
        if run is None:
            out.append(m.group("word"))
        else:
            out.extend(_bigrams(run))
    return tuple(out)


def words(text: str, language: str | None = None) -> list[str]:
    """The normalized words of ``text`` in order (character bigrams for scripts written
    without spaces). ``language`` (an ISO 639-1 code) matters only for case folding."""
    return list(_words(text, language))


def word_tuple(text: str, language: str | None = None) -> tuple[str, ...]:
    """:func:`words` as the remembered tuple (no copy): for hot paths that only read it."""
    return _words(text, language)


def spaceless_runs(text: str, language: str | None = None) -> list[list[str]]:
    """Each run of a script written without spaces in ``text``, normalized like
    :func:`words`, as its grapheme clusters (the units :func:`words` pairs into bigrams):
    for callers that also read such a run as longer n-grams or single characters."""
    folded = normalize(text, language)
    if folded.isascii():
        return []
    return [_GRAPHEME.findall(m["run"]) for m in _TOKEN.finditer(folded) if m["run"] is not None]


@cache
def stop_words(language: str | None) -> frozenset[str]:
    """Stop words of ``language`` (ISO 639-1), normalized like :func:`words`; English's
    when ``language`` is None; empty for a language with no list (every word counts)."""
    import stopwordsiso

    code = (language or "en").lower().split("-")[0]
    if not stopwordsiso.has_lang(code):
        return frozenset()
    return frozenset(w for word in stopwordsiso.stopwords(code) for w in _words(word, code))


def content_words(text: str, language: str | None = None) -> list[str]:
    """:func:`words` minus ``language``'s stop words and one-letter words (a digit and a
    character of a script without spaces always count)."""
    stop = stop_words(language)
    return [w for w in _words(text, language)
            if w.isdigit() or (w not in stop and (len(w) > 1 or not w.isascii()))]
