"""Issue 46, items 5 and 7, on the Batch page in headless Chromium (``streamlit run app.py``):
a file uploaded through the browser's own file input gets the verdict the CLI gives it. A
file of responses without documents names the missing column once, with the names it is
accepted under, and **Run** is disabled (no run is stored); broken CSV quoting names its
line and says it is a quoting/format error. Every wait polls with a generous limit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import browser
from tests.ui.test_bad_input_pages import BROKEN, MISSING

pytestmark = pytest.mark.browser
WAIT_S = 240.0
UPLOAD = "Upload a file (JSONL, CSV, Parquet)"


@pytest.fixture(scope="module")
def batch_page(tmp_path_factory) -> Iterator[tuple[browser.BrowserSession, Path]]:
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    home = tmp_path_factory.mktemp("bad-input-home")
    files = tmp_path_factory.mktemp("bad-input-files")
    (files / "missing.csv").write_bytes(MISSING)
    (files / "broken.csv").write_bytes(BROKEN)
    with browser.streamlit_server(home, extra_env={"RAG_EVAL_PREPARE": "off"}) as server:
        browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
        with browser.BrowserSession() as session:
            session.goto(f"{server.url}/batch", "Batch evaluation", WAIT_S)
            browser.mouse_click(session, "Array.from(document.querySelectorAll('[data-testid=stRadio] label'))"
                                         f".find(l => l.innerText.trim() === {json.dumps(UPLOAD)})", WAIT_S)
            session.wait_for("!!document.querySelector('[data-testid=stFileUploader] input[type=file]')", WAIT_S)
            yield session, files
    assert home.is_dir()


def _upload(session: browser.BrowserSession, path: Path) -> None:
    """Give the page's file input ``path``, as choosing it in the browser's file dialog does."""
    root = session.tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]["nodeId"]
    node = session.tools.call("DOM.querySelector", nodeId=root,
                              selector="[data-testid=stFileUploader] input[type=file]")["nodeId"]
    session.tools.call("DOM.setFileInputFiles", files=[str(path)], nodeId=node)


def _errors_after_upload(session: browser.BrowserSession, path: Path, awaited: str) -> list[str]:
    """The page's error messages once ``path`` is uploaded and ``awaited`` is shown."""
    _upload(session, path)
    session.wait_for(f"document.body.innerText.includes({json.dumps(awaited)})", WAIT_S)
    session.idle(WAIT_S)
    return list(session.evaluate("Array.from(document.querySelectorAll('[data-testid=stAlertContentError]'))"
                                 ".map(e => e.innerText.trim())") or [])


def test_a_missing_column_is_named_once_and_run_is_disabled(batch_page):
    session, files = batch_page
    errors = _errors_after_upload(session, files / "missing.csv", "missing column 'documents'")
    assert errors == ["missing.csv: missing column 'documents' (or contexts, retrieved_contexts, retrieval_context, "
                      "documents_sentences); found: id, question, response"], errors
    run = session.wait_for("(() => { const r = Array.from(document.querySelectorAll('[data-testid=stMain] button'))"
                           ".filter(b => b.innerText.trim() === 'Run').map(b => b.disabled); "
                           "return r.length ? r : null; })()", WAIT_S)  # a widget can mount after the text
    assert run and all(run), run  # every Run button the page shows is disabled
    assert "with problems" not in session.main_text()


def test_broken_quoting_names_its_line(batch_page):
    session, files = batch_page
    errors = _errors_after_upload(session, files / "broken.csv", "CSV quoting/format error")
    assert len(errors) == 1 and errors[0].startswith("broken.csv: line 3: CSV quoting/format error"), errors
    assert "valid list" not in session.main_text() and "is missing" not in session.main_text()
