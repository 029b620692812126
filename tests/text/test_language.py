"""Language detection: ISO 639-1 codes, scripts that name their language, "und" when a
text cannot tell, and a given language first."""

import json

import pytest

from rag_eval.text.language import UNKNOWN, detect_language, language_of, normalize_language


@pytest.mark.parametrize(("text", "code"), [
    ("Москва — столица России.", "ru"),
    ("北京是中国的首都。", "zh"),
    ("東京は日本の首都です。", "ja"),
    ("서울은 한국의 수도입니다.", "ko"),
    ("กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", "th"),
    ("القاهرة هي عاصمة مصر.", "ar"),
    ("नई दिल्ली भारत की राजधानी है।", "hi"),
    ("Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "el"),
    ("ירושלים היא עיר הבירה של ישראל.", "he"),
    ("Berlin ist die Hauptstadt von Deutschland.", "de"),
    ("Paris is the capital of France.", "en"),
])
def test_languages_are_iso_639_1(text, code):
    assert detect_language(text) == code


def test_chinese_varieties_are_chinese_and_kana_is_japanese():
    # Han alone is Chinese (py3langid alone reads some as Wu or Cantonese); a Japanese
    # question written mostly in Kanji is Japanese by its Kana.
    assert detect_language("广州是广东省的省会") == "zh"
    assert detect_language("日本の首都") == "ja"


def test_too_short_or_no_letters_is_unknown():
    assert detect_language("") == UNKNOWN
    assert detect_language("ok") == UNKNOWN
    assert detect_language("12345 !!!") == UNKNOWN


def test_a_given_language_wins_and_is_normalized():
    assert language_of("Paris is the capital of France.", given="fr") == "fr"
    assert language_of("北京是中国的首都。", given="zh-Hans") == "zh"
    assert normalize_language("pt_BR") == "pt"
    assert normalize_language(None) == ""


def test_a_short_answer_takes_its_questions_language():
    assert language_of("1945", "Wann endete der Zweite Weltkrieg in Europa?") == "de"
    assert language_of("", "") == UNKNOWN


def test_every_language_of_the_shared_passages(shared_data):
    """The first passages of each language of the shared QA data are read right."""
    wrong = []
    for name in ("qa_tydiqa_goldp_dev.jsonl", "qa_jsquad_valid.ja.jsonl", "qa_cmrc2018_dev.zh.jsonl",
                 "qa_iapp_wikiqa_test.th.jsonl"):
        seen: dict[str, int] = {}
        with open(shared_data / "multilingual" / name, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if seen.get(row["language"], 0) >= 5:
                    continue
                seen[row["language"]] = seen.get(row["language"], 0) + 1
                if detect_language(row["contexts"][0]) != row["language"]:
                    wrong.append((row["id"], detect_language(row["contexts"][0])))
    assert not wrong


def test_the_uncompressed_model_copy_changes_no_answer(tmp_path, monkeypatch):
    """The detector's model is read from a copy in the cache folder, written once; with no
    writable folder it is the packaged model: the same answers either way."""
    from rag_eval.text import language

    texts = ["Wie viele Einwohner hat Berlin?", "Quelle est la capitale de la France ?", "Сколько людей живёт в Москве?",
             "Apakah ibu kota Indonesia?", "ما هي عاصمة مصر؟"]
    answers = []
    for cache in (tmp_path / "cache", tmp_path / "cache", tmp_path / "file" / "below-a-file"):
        (tmp_path / "file").write_text("not a folder")
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
        language._identifier.cache_clear()
        answers.append([language._by_detector(t) for t in texts])
    language._identifier.cache_clear()
    assert list((tmp_path / "cache" / "rag-eval").iterdir())[0].name.startswith("py3langid-")
    assert answers[0] == answers[1] == answers[2] == ["de", "fr", "ru", "id", "ar"]


def test_a_damaged_model_copy_is_written_again(tmp_path, monkeypatch):
    """A truncated file in the cached copy (a disk filled up, a clean-up cut short) costs one
    rewrite, not every detection."""
    from rag_eval.text import language

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    language._identifier.cache_clear()
    language._identifier()
    (copy,) = (tmp_path / "rag-eval").iterdir()
    (copy / "pc.npy").write_bytes((copy / "pc.npy").read_bytes()[:100])
    (copy / "out_feat.npy").unlink()
    language._identifier.cache_clear()
    try:
        assert language._by_detector("Wie viele Einwohner hat Berlin?") == "de"
        assert (copy / "out_feat.npy").is_file() and (copy / "pc.npy").stat().st_size > 100
    finally:
        language._identifier.cache_clear()


def test_a_language_named_for_a_run_is_one_rule_on_every_path():
    from rag_eval.text.language import language_code

    assert [language_code(c) for c in ("ja", "pt-BR", "zh_Hans", " AR ")] == ["ja", "pt", "zh", "ar"]
    for bad in ("not a code!", "", "1234", "日本語", None):
        with pytest.raises(ValueError, match="not a language code"):
            language_code(bad)
