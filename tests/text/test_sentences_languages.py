"""Sentences in every language: the item's language (given or detected) chooses the rules,
Chinese and Japanese sentence ends with no space after them are ends, Thai sentences end
at a space, and every sentence is still ``text[start:end]``.

Real text: excerpts of the shared multilingual passages and of Debian's reference manual
(``tests/data/multilingual/``, licences in ``tests/data/ATTRIBUTION.md``)."""

import json
from pathlib import Path

import pytest
import regex

from rag_eval.text.sentences import (
    item_from_row,
    item_from_texts,
    key_document,
    key_response,
    split_blocks,
    split_sentences,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "multilingual"
PASSAGES = [json.loads(line) for line in open(DATA / "passages.jsonl", encoding="utf-8")]
DEBIAN = [json.loads(line) for line in open(DATA / "debian_reference.jsonl", encoding="utf-8")]
# A sentence end inside a unit: a full stop of any script followed by another sentence.
INNER_END = regex.compile(r"[。！？](?=[^\s」』）”])|(?:(?<=\p{L}\p{L})[.!?]|[।॥؟۔።။])\s+(?=[\p{Lu}\p{Lo}])")


def _exact(text, spans):
    assert spans, text
    for sentence, start, end in spans:
        assert text[start:end] == sentence
        assert sentence == sentence.strip()


@pytest.mark.parametrize(("text", "expected"), [
    ("按住电源键十秒钟。电视将重新启动。", ["按住电源键十秒钟。", "电视将重新启动。"]),
    ("電源ボタンを十秒間押します。テレビが再起動します！本当？", ["電源ボタンを十秒間押します。", "テレビが再起動します！", "本当？"]),
    ("車站于2010年3月开工。2010年10月26日启用。", ["車站于2010年3月开工。", "2010年10月26日启用。"]),
    ("「本当？」と聞いた。「行きます。」と言った。", ["「本当？」と聞いた。", "「行きます。」と言った。"]),
    ("बटन दस सेकंड तक दबाएँ। टीवी फिर से शुरू होगा। क्या हुआ?",
     ["बटन दस सेकंड तक दबाएँ।", "टीवी फिर से शुरू होगा।", "क्या हुआ?"]),
    ("বোতামটি দশ সেকেন্ড চেপে ধরুন। টিভি আবার চালু হবে॥ কি হল?",
     ["বোতামটি দশ সেকেন্ড চেপে ধরুন।", "টিভি আবার চালু হবে॥", "কি হল?"]),
    ("اضغط على زر الطاقة لمدة عشر ثوان. هل سيعيد التلفاز التشغيل؟ نعم سيعيد.",
     ["اضغط على زر الطاقة لمدة عشر ثوان.", "هل سيعيد التلفاز التشغيل؟", "نعم سيعيد."]),
    ("بٹن دس سیکنڈ دبائیں۔ ٹی وی دوبارہ شروع ہوگا۔ کیا ہوا؟", ["بٹن دس سیکنڈ دبائیں۔", "ٹی وی دوبارہ شروع ہوگا۔", "کیا ہوا؟"]),
    ("دکمه را ده ثانیه نگه دارید. تلویزیون دوباره راه‌اندازی می‌شود؟ بله.",
     ["دکمه را ده ثانیه نگه دارید.", "تلویزیون دوباره راه‌اندازی می‌شود؟", "بله."]),
    ("לחץ על הכפתור עשר שניות. הטלוויזיה תופעל מחדש. מה קרה?",
     ["לחץ על הכפתור עשר שניות.", "הטלוויזיה תופעל מחדש.", "מה קרה?"]),
    ("Սեղմեք կոճակը տաս վայրկյան։ Հեռուստացույցը կվերագործարկվի։", ["Սեղմեք կոճակը տաս վայրկյան։", "Հեռուստացույցը կվերագործարկվի։"]),
    ("አዝራሩን ለአስር ሰከንዶች ይጫኑ። ቴሌቪዥኑ እንደገና ይጀምራል። ምን ሆነ፧", ["አዝራሩን ለአስር ሰከንዶች ይጫኑ።", "ቴሌቪዥኑ እንደገና ይጀምራል።", "ምን ሆነ፧"]),
    ("ခလုတ်ကို ဆယ်စက္ကန့် နှိပ်ပါ။ တီဗွီ ပြန်စပါမည်။", ["ခလုတ်ကို ဆယ်စက္ကန့် နှိပ်ပါ။", "တီဗွီ ပြန်စပါမည်။"]),
    ("กดปุ่มเปิดปิดค้างไว้สิบวินาทีจนกว่าไฟจะดับ โทรทัศน์จะรีสตาร์ทเองโดยอัตโนมัติภายในหนึ่งนาที",
     ["กดปุ่มเปิดปิดค้างไว้สิบวินาทีจนกว่าไฟจะดับ", "โทรทัศน์จะรีสตาร์ทเองโดยอัตโนมัติภายในหนึ่งนาที"]),
])
def test_sentence_ends_of_every_script(text, expected):
    spans = split_sentences(text)
    _exact(text, spans)
    assert [s for s, _, _ in spans] == expected


def test_latin_names_with_dots_stay_whole():
    text = "Set window.__x to 1. Then open example.com now."
    assert [s for s, _, _ in split_sentences(text)] == ["Set window.__x to 1.", "Then open example.com now."]


def test_a_thai_phrase_set_off_by_spaces_stays_in_its_sentence():
    text = "สะพานนี้สร้างในปี 2450 โดย กรมโยธา และยังใช้งานอยู่จนถึงปัจจุบันนี้"
    assert len(split_sentences(text)) == 1


@pytest.mark.parametrize("row", PASSAGES, ids=[r["language"] for r in PASSAGES])
def test_shared_passages_split_into_their_sentences(row):
    text = row["text"]
    spans = split_sentences(text)
    _exact(text, spans)
    assert len(spans) >= 3
    assert not [s for s, _, _ in spans if INNER_END.search(s)]


@pytest.mark.parametrize("page", DEBIAN, ids=[p["language"] for p in DEBIAN])
def test_debian_reference_paragraphs_hold_no_paragraph_long_sentence(page):
    text = page["text"]
    blocks, pos = [], 0
    for part in text.split("\n\n"):
        blocks.append((pos, pos + len(part), "paragraph"))
        pos += len(part) + 2
    spans = split_blocks(text, blocks)
    _exact(text, spans)
    assert len(spans) >= 6
    assert not [s for s, _, _ in spans if INNER_END.search(s)]
    assert [s for s, _, _ in spans] == [s for s, _, _ in split_sentences(text, page["language"])]


def test_the_item_language_is_the_rows_then_the_responses_then_the_questions():
    row = {"id": "1", "question": "電源はどこですか？", "documents": ["電源ボタンを押します。テレビが再起動します。"],
           "response": "電源ボタンを押します。"}
    assert item_from_row(row).language == "ja"
    assert item_from_row({**row, "language": "zh-Hans"}).language == "zh"
    assert item_from_row(row, language="ko").language == "ko"
    assert item_from_row({**row, "response": "42"}).language == "ja"
    item = item_from_row(row)
    assert item.document_keys == ["0a", "0b"]


def test_item_from_texts_splits_in_the_given_language():
    item = item_from_texts("1", "Wer?", ["Der Dr. med. Müller kam. Er blieb."], "Er blieb.", language="de")
    assert item.language == "de"
    assert item.response_keys == ["a"]
    detected = item_from_texts("2", "谁？", ["按住电源键十秒钟。电视将重新启动。"], "电视将重新启动。")
    assert detected.language == "zh"
    assert detected.document_keys == ["0a", "0b"]


def test_keys_are_exact_in_every_language():
    for row in PASSAGES:
        for sentence in key_document(row["text"], 0) + key_response(row["text"], row["language"]):
            assert row["text"][sentence.start:sentence.end] == sentence.text
