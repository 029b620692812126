"""The language of a text: ISO 639-1 codes from an offline detector.

Every stage that depends on the language (sentence ends, words, stop words, which
retriever fits a collection, whether a judge can read a text) asks here, once per text,
and a row, the configuration or the API can name the language instead (``language:``).

How a text is read (chosen by ``bench/bench_language_detect.py``, figures in
``docs/benchmarks.md``, "Language detection"):

- **Scripts that name their language** decide on their own: Hangul is Korean, Kana (with
  or without Han) Japanese, Han alone Chinese, Thai, Bengali, Telugu, Greek, Hebrew, ...
  their own language. A question of eight characters is then as certain as a page; a
  statistical detector guesses on such short texts (py3langid reads a short Japanese
  question written in Kanji as Chinese).
- **English function words** decide a longer Latin-script text where they are at least
  15 % of the words (``the``, ``and``, ``of``, ``which``, ...): most English rows then
  never reach the detector.
- **Other texts** (Latin, Cyrillic, Arabic, Devanagari) go to py3langid, restricted to
  the languages that have an ISO 639-1 code; the dialects and varieties its model also
  knows are counted with their language (Egyptian and Moroccan Arabic are ``ar``, Wu and
  Cantonese ``zh``). A text with fewer than three letters, or whose best language the
  model gives less than :data:`MIN_CONFIDENCE`, is :data:`UNKNOWN`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import regex

#: What a text too short or too mixed to tell gets.
UNKNOWN = "und"
_MIN_LETTERS = 3
#: The detector's probability below which a text is :data:`UNKNOWN` rather than a guess.
MIN_CONFIDENCE = 0.3
#: A named script decides when it holds at least this share of the text's letters (a
#: Japanese manual page quotes English commands, a Thai article Latin names).
_SCRIPT_SHARE = 0.25
#: The detector reads the text's start: as accurate on the shared passages as 2,000 characters
#: (``bench/bench_language_detect.py``), a fixed cost per document at ingest.
_SAMPLE_CHARS = 600

# Scripts written by one language (or one by far the most): the script is the answer.
_SCRIPT_LANGUAGES = {
    "Hangul": "ko", "Thai": "th", "Lao": "lo", "Khmer": "km", "Myanmar": "my", "Tibetan": "bo",
    "Georgian": "ka", "Armenian": "hy", "Greek": "el", "Hebrew": "he", "Ethiopic": "am",
    "Bengali": "bn", "Telugu": "te", "Tamil": "ta", "Kannada": "kn", "Malayalam": "ml",
    "Gujarati": "gu", "Gurmukhi": "pa", "Oriya": "or", "Sinhala": "si", "Thaana": "dv",
}
_SCRIPT_RUN = regex.compile(
    "|".join(rf"(?P<{name}>\p{{Script={name}}}+)" for name in _SCRIPT_LANGUAGES)
    + r"|(?P<Kana>[\p{Script=Hiragana}\p{Script=Katakana}ー]+)|(?P<Han>\p{Script=Han}+)|(?P<Other>\p{L}+)"
)
_NON_LATIN_LETTER = regex.compile(r"(?!\p{Latin})\p{L}")
_WORD = regex.compile(r"\p{L}+")
_ENGLISH_WORDS = frozenset("the and of is that for with was are this from which have has were been their they what "
                           "who when how does did".split())
_ENGLISH_SHARE = 0.15
# py3langid's varieties counted with their ISO 639-1 language; its other codes without
# one (Acehnese, Nigerian Pidgin, ... and ``zxx``, "no linguistic content") are left out.
_VARIETIES = {"ary": "ar", "arz": "ar", "wuu": "zh", "yue": "zh", "uzs": "uz", "hbo": "he", "grc": "el",
              "gug": "gn", "fuv": "ff", "kik": "ki"}


def _script_letters(sample: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for m in _SCRIPT_RUN.finditer(sample):
        counts[str(m.lastgroup)] += m.end() - m.start()
    return counts


def _by_script(counts: Counter[str]) -> str | None:
    """The language the text's scripts name, or None when the detector must read it."""
    total = sum(counts.values())
    han, kana, hangul = counts["Han"], counts["Kana"], counts["Hangul"]
    cjk = han + kana + hangul
    if cjk >= _SCRIPT_SHARE * total and cjk:
        if hangul >= kana and hangul >= 0.2 * cjk:
            return "ko"
        if kana >= 0.05 * cjk:
            return "ja"
        return "zh"
    named = [(n, s) for s, n in counts.items() if s in _SCRIPT_LANGUAGES]
    if named:
        letters, script = max(named)
        if letters >= _SCRIPT_SHARE * total:
            return _SCRIPT_LANGUAGES[script]
    return None


@cache
def _identifier() -> Any:
    """py3langid's model restricted to the languages with an ISO 639-1 code, mapped from
    an uncompressed copy (:func:`_restricted_model`): unpacking the
    packaged LZMA file cost 0.6 CPU s of every process that detects a language. A damaged
    copy (a truncated file, a clean-up cut short) is written again once; with no copy, the
    packaged model gives the same answers."""
    for _attempt in range(2):
        folder = _restricted_model()
        if folder is None:
            break
        try:
            return _mapped(folder)
        except (OSError, ValueError, EOFError):
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    identifier.set_languages([c for c in set(identifier.nb_classes) if len(c) == 2 or c in _VARIETIES])
    return identifier


def _mapped(folder: Path) -> Any:
    import numpy
    from py3langid.langid import LanguageIdentifier
    from py3langid.modelio import _to_array

    def part(name: str, mmap: bool = False) -> Any:
        return numpy.load(folder / f"{name}.npy", mmap_mode="r" if mmap else None, allow_pickle=False)

    # the transition table (39 MB) is read where the walk goes, not copied: 0.03 s less per
    # process, 0.1 ms more per text (a few hundred texts a run)
    return LanguageIdentifier(part("ptc", mmap=True), part("pc"), part("classes").tolist(),
                              part("nextmove", mmap=True), part("out_feat").tolist(), norm_probs=True,
                              tk_row=_to_array(part("nextmove_row")))


def _restricted_model() -> Path | None:
    """The restricted model as uncompressed ``.npy`` files in the user's cache folder
    (``platformdirs``), written once per py3langid version (into a temporary folder renamed
    into place: processes starting together may each write one, the first rename wins and
    the others are dropped). A cache like Python's ``__pycache__``: what the detector says
    never depends on it, so this pure module reads no configuration to find it. None when
    the folder cannot be written."""
    import platformdirs
    import py3langid

    target = Path(platformdirs.user_cache_dir("rag-eval")) / f"py3langid-{py3langid.__version__}-iso639-1"
    if target.is_dir():
        return target
    import shutil
    import tempfile

    import numpy
    from py3langid.langid import MODEL_DIR, MODEL_FILE
    from py3langid.modelio import load_model

    ptc, pc, classes, nextmove, row, output = load_model(MODEL_DIR / MODEL_FILE)
    keep = [i for i, c in enumerate(classes) if len(c) == 2 or c in _VARIETIES]
    arrays = {"ptc": numpy.ascontiguousarray(numpy.asarray(ptc)[:, keep]), "pc": numpy.asarray(pc)[keep],
              "classes": numpy.array([classes[i] for i in keep]),
              "nextmove": numpy.frombuffer(nextmove, dtype=numpy.dtype(nextmove.typecode)),
              "nextmove_row": numpy.frombuffer(row, dtype=numpy.dtype(row.typecode)),
              "out_feat": numpy.asarray(output, dtype=numpy.int32)}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    except OSError:
        return None
    try:
        for name, array in arrays.items():
            numpy.save(temporary / f"{name}.npy", array, allow_pickle=False)
        temporary.rename(target)
    except OSError:  # another process renamed its copy first, or the disk is full
        shutil.rmtree(temporary, ignore_errors=True)
    return target if target.is_dir() else None


def _by_detector(sample: str) -> str:
    totals: dict[str, float] = defaultdict(float)
    for code, probability in _identifier().rank(sample):
        totals[_VARIETIES.get(code, code)] += float(probability)
    code = max(totals, key=totals.__getitem__)
    return code if totals[code] >= MIN_CONFIDENCE else UNKNOWN


@lru_cache(maxsize=1 << 12)
def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language, or :data:`UNKNOWN`."""
    sample = " ".join(text.split())[:_SAMPLE_CHARS]
    if not _NON_LATIN_LETTER.search(sample):  # Latin letters only: no script names the language
        found = _WORD.findall(sample.lower())
        if sum(map(len, found)) < _MIN_LETTERS:
            return UNKNOWN
        return _english_by_its_words(found) or _by_detector(sample)
    counts = _script_letters(sample)
    if sum(counts.values()) < _MIN_LETTERS:
        return UNKNOWN
    return _by_script(counts) or _by_detector(sample)


def _english_by_its_words(found: list[str]) -> str | None:
    """"en" for a Latin-script text (its lower-cased ``found`` words) of a dozen words or
    more of which at least :data:`_ENGLISH_SHARE` are English function words, which no
    other language writes that often (on the shared passages: no text of another language, and 78 % of English
    passages; 79 % of RAGBench's responses); None otherwise. The English rows then skip
    the detector, a tenth of the cost."""
    if len(found) >= 12 and sum(w in _ENGLISH_WORDS for w in found) >= _ENGLISH_SHARE * len(found):
        return "en"
    return None


def normalize_language(code: str | None) -> str:
    """A language tag as this package writes it: lower case, its primary subtag
    (``zh-Hans`` and ``zh_CN`` are ``zh``, ``pt-BR`` is ``pt``); "" for none."""
    return (code or "").strip().lower().replace("_", "-").split("-")[0]


def language_code(value: object) -> str:
    """``value`` as a language the caller names for a whole run (the API's ``language=``,
    ``rag-eval judge --language``, Settings' Language): normalized like
    :func:`normalize_language` (``pt-BR`` is ``pt``); a ValueError that says what a code looks
    like when it is none (one rule for every path)."""
    code = normalize_language(value) if isinstance(value, str) else ""
    if not (code.isascii() and code.isalpha() and 2 <= len(code) <= 3):
        raise ValueError(f"{value!r} is not a language code: give an ISO 639-1 code, e.g. ja, ar or pt-BR "
                         "(none: each text's language is detected)")
    return code


def language_of(*texts: str, given: str | None = None) -> str:
    """``given`` when the row, configuration or caller named a language, else the
    detected language of the first text, read together with the next ones while it is
    too short to tell (an answer ``"1945"`` takes its question's language)."""
    if given and normalize_language(given):
        return normalize_language(given)
    parts = [t for t in texts if t and t.strip()]
    for n in range(1, len(parts) + 1):
        code = detect_language(" ".join(parts[:n]))
        if code != UNKNOWN:
            return code
    return UNKNOWN
