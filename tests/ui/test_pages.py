"""Every dashboard page driven by Streamlit's AppTest, and the full offline flow."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag_eval.ui.constants import ALL_PAGES, APP_TITLE

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return at


def _no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_main_page_shows_title_and_status():
    at = _app()
    _no_failure(at)
    assert at.title[0].value == APP_TITLE
    labels = {m.label for m in at.metric}
    assert {"Judge", "Generator", "Stored runs", "Collections", "Adherence"} <= labels


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_renders_without_error(page):
    at = _app()
    at.switch_page(page).run()
    _no_failure(at)
    assert at.title, f"{page} has no title"


def test_support_map_shows_labelled_sample_on_first_visit():
    at = _app()
    at.switch_page("pages/support_map.py").run()
    _no_failure(at)
    assert {m.label for m in at.metric} >= {"Context relevance", "Adherence"}
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "sm-documents" in html and "sm-response" in html
    at.selectbox(key="support_map.sample").select(1).run()  # a non-adherent row
    _no_failure(at)
    assert any(m.label == "Adherence" and m.value.startswith("no") for m in at.metric)
