"""Sentence units: prose split into sentences, code blocks / table rows / list items /
headings whole, a line break inside a paragraph no boundary; offsets always verbatim."""

from rag_eval.text.sentences import (
    clip_units,
    key_document,
    split_blocks,
    split_sentences,
)

TEXT = """Frequently, it
is necessary to work out the type. Next one.

   python3 -m venv tutorial-env
   source tutorial-env/bin/activate

- first item. It has two sentences.
- second item

a | b | c
1 | 2 | 3

Loops"""


def test_units_of_plain_text():
    units = split_sentences(TEXT)
    assert [s for s, _, _ in units] == [
        "Frequently, it\nis necessary to work out the type.",
        "Next one.",
        "python3 -m venv tutorial-env\n   source tutorial-env/bin/activate",
        "- first item. It has two sentences.",
        "- second item",
        "a | b | c",
        "1 | 2 | 3",
        "Loops",
    ]
    assert all(TEXT[a:b] == s for s, a, b in units)


def test_known_blocks_decide_the_kind():
    text = "A heading. With a dot\n\nOne. Two.\n\nx = 1. y = 2"
    blocks = [(0, 21, "heading"), (23, 32, "paragraph"), (34, len(text), "code")]
    assert [s for s, _, _ in split_blocks(text, blocks)] == ["A heading. With a dot", "One.", "Two.", "x = 1. y = 2"]


def test_keyed_document_from_units_and_clipping():
    text = "One sentence here. Another one there."
    units = [(a, b) for _, a, b in split_sentences(text)]
    assert [s.text for s in key_document(text, 2, units)] == ["One sentence here.", "Another one there."]
    assert key_document(text, 2, units)[1].key == "2b"
    assert clip_units(units, 5, 30) == [(0, 13), (14, 25)]


def test_a_period_without_white_space_after_it_ends_no_sentence():
    text = "The page says hello. Call window.__init__ first. Then go on."
    assert [s for s, _, _ in split_sentences(text)] == ["The page says hello.", "Call window.__init__ first.",
                                                         "Then go on."]
