"""A locked dashboard reaches no address a visitor types, in a browser (issue 33, item 1).

``tests/security/test_locked_egress.py`` walks the pages with Streamlit's AppTest; this is the
same walk where a visitor makes it: ``streamlit run app.py`` on loopback and headless
Chromium. Two locked servers, ``RAG_EVAL_DEPLOYMENT=public`` without ``SPACE_ID`` and a
Space (``SPACE_ID``), each with the owner's LLM endpoint (a local OpenAI-compatible server,
not the listener) and the owner's keys set (the LLM key and ``PHOENIX_API_KEY``). On every
page the browser opens every expander, types a loopback listener's address into every text
field (a field naming what is saved gets a valid name, so the action goes ahead) and presses
every button (a bounded number per page; download buttons too: what they save is read back). Afterwards:

- the listener heard nothing;
- no page's HTML or text, and no download, holds the server's project folder, its data
  folder (``RAG_EVAL_HOME``) or either key;
- the owner's endpoint heard the owner's key only.

One server per lock kind; every wait polls with a generous limit (the machine may be
loaded); nothing is timed.
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import browser
from harness.fake_answers import answer_text
from harness.listener import Listener
from harness.openai_server import start_server
from rag_eval.ui.constants import APP_TITLE

pytestmark = pytest.mark.browser

WAIT_S = 240.0
MAX_PRESSES = 10  # buttons pressed per page (each page has fewer today, once its fields hold the address)
# Made up per session: a fixed string shaped like a provider key would sit in the repository.
OWNER_KEY = f"owner-llm-{secrets.token_hex(8)}"
PHOENIX_KEY = f"owner-phoenix-{secrets.token_hex(8)}"
LOCKS = {"public": {"RAG_EVAL_DEPLOYMENT": "public"}, "space": {"SPACE_ID": "someone/rag-eval"}}
# Every page, by its address and its h1 heading, in the navigation's order (Batch before
# Runs: the run the walk starts there is listed on Runs and Compare).
PAGES = (("", APP_TITLE), ("/ask", "Ask"), ("/support_map", "Sentence support map"),
         ("/batch", "Batch evaluation"), ("/runs", "Runs and trends"), ("/compare", "Compare runs"),
         ("/judges", "Judges"), ("/datasets", "Datasets"), ("/corpus", "Corpus"), ("/settings", "Settings"))
# Fields that name what is saved get a valid name, so the action they guard goes ahead (a
# dataset named after a URL is refused before any import starts); every other field gets the
# listener's address.
NAME_FIELDS = ("Save as", "Run name", "Calibration name")
PAGE_TEXT_JS = ("document.documentElement.outerHTML + '\\n' + document.body.innerText + '\\n' + "
                "Array.from(document.querySelectorAll('input, textarea')).map(e => e.value).join('\\n')")


def _owner_reply(body: dict[str, Any]) -> str:
    """A judgement for a judge's prompt, a short answer for anything else (a generator's)."""
    try:
        return answer_text(body)
    except (IndexError, KeyError, StopIteration):
        return "The answer is in the documents."


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def owner_endpoint() -> Iterator[Any]:
    server = start_server()
    server.set_handler(_owner_reply)
    yield server
    server.stop()


@pytest.fixture(scope="module", params=sorted(LOCKS))
def locked_site(request, tmp_path_factory, _demo_qdrant, _session_models_dir, owner_endpoint) -> Iterator[dict]:
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    home = tmp_path_factory.mktemp(f"egress-{request.param}")
    shutil.copytree(_demo_qdrant, home / "qdrant")  # Ask answers without building the demo collection
    (home / "models").symlink_to(_session_models_dir, target_is_directory=True)
    env = {**LOCKS[request.param], "OPENAI_API_KEY": OWNER_KEY, "PHOENIX_API_KEY": PHOENIX_KEY,
           "RAG_EVAL_LLM_BASE_URL": owner_endpoint.base_url, "RAG_EVAL_LLM_MODEL": "test-model"}
    with pytest.MonkeyPatch.context() as mp:
        for name in ("SPACE_ID", "RAG_EVAL_DEPLOYMENT", "RAG_EVAL_PHOENIX_URL", "RAG_EVAL_DB", "RAG_EVAL_DB_URL"):
            mp.delenv(name, raising=False)  # the lock comes from this kind's variables alone
        with browser.streamlit_server(home, extra_env=env) as server:
            browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
            with browser.BrowserSession(width=1280, height=900) as session:
                session.tools.call("Emulation.setFocusEmulationEnabled", enabled=True)  # focus and blur as a person's
                session.allow_downloads(home.parent / f"{home.name}-downloads")
                yield {"kind": request.param, "url": server.url, "session": session, "home": home,
                       "downloads": home.parent / f"{home.name}-downloads", "server": server}


def _secrets(home: Path) -> dict[str, str]:
    return {"the project folder": str(browser.PROJECT_ROOT), "the data folder": str(home),
            "the data folder (resolved)": str(home.resolve()), "the owner's LLM key": OWNER_KEY,
            "the owner's Phoenix key": PHOENIX_KEY}


def _leaks(text: str, home: Path) -> list[str]:
    return [what for what, secret in _secrets(home).items() if secret in text]


def test_a_visitor_in_a_browser_reaches_no_typed_address_and_sees_no_server_secret(locked_site, listener,
                                                                                    owner_endpoint):
    session, url, home = locked_site["session"], locked_site["url"], locked_site["home"]
    walks, seconds = {}, {}
    typed = lambda label: "visitor-x" if label in NAME_FIELDS else listener.url  # noqa: E731
    for path, heading in PAGES:
        started = time.perf_counter()
        walk = browser.walk_page(session, url + path, heading, typed, MAX_PRESSES, WAIT_S)
        walks[path or "/"], seconds[path or "/"] = walk, time.perf_counter() - started
        assert listener.heard == [], (locked_site["kind"], path, walk, listener.heard[:1])
        assert _leaks(str(session.evaluate(PAGE_TEXT_JS)), home) == [], (locked_site["kind"], path, walk)
    print(f"\n{locked_site['kind']}:\n" + "\n".join(
        f"  {page} ({seconds[page]:.0f} s): {len(w.filled)} field(s) {w.filled}, {len(w.pressed)} button(s) {w.pressed}"
        + (f", downloads {w.downloads}" if w.downloads else "") + (f", left the page {w.navigated}" if w.navigated else "")
        for page, w in walks.items()))
    # the walk reached the fields and buttons a visitor has (a broken walk would pass vacuously)
    assert sum(len(w.filled) for w in walks.values()) >= 5 and sum(len(w.pressed) for w in walks.values()) >= 8, walks
    assert any(key.startswith("Ask#") for key in walks["/ask"].pressed), walks["/ask"]
    assert any(key.startswith("Run#") for key in walks["/batch"].pressed), walks["/batch"]
    # what the run offers once finished, and the run's report on Runs: saved and read below
    assert sum("Download results" in key for key in walks["/batch"].downloads) == 2, walks["/batch"]
    assert any("Download report" in key for key in walks["/runs"].downloads), walks["/runs"]
    downloads = locked_site["downloads"]
    for _ in range(120):  # a save starts and ends within seconds, later on a machine busy with other tests
        suffixes = {f.suffix for f in downloads.iterdir()}
        if ".crdownload" not in suffixes and suffixes >= {".csv", ".jsonl", ".html"}:
            break
        time.sleep(1)
    saved_files = sorted(downloads.iterdir())
    assert {f.suffix for f in saved_files} >= {".csv", ".jsonl", ".html"}, saved_files
    for saved in saved_files:
        assert _leaks(saved.read_text(encoding="utf-8", errors="replace"), home) == [], saved.name
    assert listener.heard == []
    assert owner_endpoint.headers, "the owner's endpoint was asked (Ask and Batch judge with the owner's LLM)"
    assert all(h.get("authorization") == f"Bearer {OWNER_KEY}" for h in owner_endpoint.headers)
