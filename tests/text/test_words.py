"""The one word tokenizer: every script's words, numbers of every script, case folding
that keeps German and Turkish words whole."""

from rag_eval.text.words import content_words, normalize, words


def test_german_words_are_whole():
    assert words("Ändere die Straße") == ["ändere", "die", "strasse"]


def test_devanagari_keeps_its_vowel_signs():
    assert words("नमस्ते दुनिया हिन्दी भाषा") == ["नमस्ते", "दुनिया", "हिन्दी", "भाषा"]


def test_chinese_is_character_bigrams():
    assert words("北京是中国的首都。") == ["北京", "京是", "是中", "中国", "国的", "的首", "首都"]
    assert words("我") == ["我"]


def test_digits_of_every_script_and_full_width_forms_are_numbers():
    assert words("٣ ３ 3") == ["3", "3", "3"]
    assert normalize("ＡＢＣ１２３") == "abc123"


def test_turkish_case_folding():
    assert words("İstanbul ISTANBUL", "tr") == ["istanbul", "ıstanbul"]
    assert words("İstanbul") == ["istanbul"]


def test_content_words_drop_each_languages_stop_words_but_never_numbers():
    assert content_words("Die Straße ist lang und der Hund ist braun", "de") == ["strasse", "hund", "braun"]
    assert "10" in content_words("Windows 10 update", "en")


def test_identical_texts_give_identical_words_in_any_script():
    for text in ("Москва — столица России.", "مرحبا بالعالم", "テレビの電源を切ってください。", "สวัสดีครับ"):
        assert words(text) and words(text) == words(text + " ")
