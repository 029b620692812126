"""Right-to-left text reads right-to-left in the support map (issue 47, "What users see" 5).

An Arabic sentence that mixes in Latin words must keep its phrases in order, its full stop
on the left and its highlight in one piece, with its key at its start (the right edge); the
layout is checked in headless Chromium, where it is decided."""

from __future__ import annotations

import json
import time

import pytest

from harness import browser
from rag_eval.display.support_map import support_map_html
from rag_eval.schema import Labels
from rag_eval.text.direction import text_direction
from rag_eval.text.sentences import item_from_texts

ARABIC = "يعيد الأمر تشغيل الخادم Debian كل ليلة."
ENGLISH = "The command restarts the Debian server."


def _item():
    return item_from_texts("rtl", "ما الذي يفعله الأمر؟", [f"{ARABIC} {ENGLISH}"], ARABIC)


def test_direction_of_a_text_is_its_first_strong_characters():
    assert text_direction(ARABIC) == "rtl"
    assert text_direction("שלום עולם") == "rtl"
    assert text_direction(ENGLISH) == "ltr"
    assert text_direction("12 Debian يعيد") == "ltr"
    assert text_direction("") == "ltr"


def test_every_sentence_carries_its_own_direction():
    out = support_map_html(_item(), Labels(all_relevant_sentence_keys=["0a"]))
    assert out.count('dir="rtl"') >= 3  # the response block, its sentence, the document's Arabic sentence
    assert 'dir="ltr" data-key="0b"' in out  # the English sentence stays left-to-right


@pytest.mark.browser
def test_arabic_sentence_is_laid_out_right_to_left_in_chromium(tmp_path):
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    page = tmp_path / "map.html"
    page.write_text('<!doctype html><meta charset="utf-8"><body style="width:900px">'
                    + support_map_html(_item(), Labels(all_relevant_sentence_keys=["0a"])) + "</body>", encoding="utf-8")
    with browser.chromium_tab() as tools:
        tools.call("Page.navigate", url=page.as_uri())
        deadline = time.monotonic() + 30
        while not tools.evaluate("document.readyState === 'complete' && !!document.querySelector('.sm-s')"):
            assert time.monotonic() < deadline, "the support map did not load"
            time.sleep(0.1)
        layout = tools.evaluate("""(() => {
            const span = document.querySelector('.sm-response .sm-s');
            const key = span.querySelector('sup').getBoundingClientRect();
            const text = document.createRange();
            text.selectNodeContents(span.lastChild);
            const rects = Array.from(span.getClientRects());
            const words = document.createRange();
            const node = span.lastChild, at = node.data.indexOf('Debian');
            words.setStart(node, 0); words.setEnd(node, 4);
            const first = words.getBoundingClientRect();
            words.setStart(node, at); words.setEnd(node, at + 6);
            const latin = words.getBoundingClientRect();
            return {direction: getComputedStyle(span).direction, pieces: rects.length,
                    keyLeft: key.left, textRight: text.getBoundingClientRect().right,
                    firstLeft: first.left, latinLeft: latin.left};
        })()""")
    assert layout["direction"] == "rtl", json.dumps(layout)
    assert layout["pieces"] == 1, json.dumps(layout)  # one highlight, not broken into pieces
    assert layout["keyLeft"] >= layout["textRight"] - 1, json.dumps(layout)  # the key at the right edge: its start
    assert layout["firstLeft"] > layout["latinLeft"], json.dumps(layout)  # the first word right of the Latin one
