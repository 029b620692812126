"""One pass of headless Chromium over every page with hostile names (issue 27), on a
dashboard whose runs, items, questions, tags, notes, a saved dataset and a review carry a
Markdown image, a link, an HTML ``<img>``, ``:red[…]``, ``$…$`` and a 500-character word
pointing at a "pixel" served by a local HTTP server that counts its requests.

- no page renders an image or a link from a name, and the browser fetches nothing outside
  the dashboard's server (the pixel server gets no request; every resource the page loaded is
  the server's own or inline — the page icon too);
- clicking a response sentence in the support map selects it;
- at 1280 and at 1920 px wide, no chart of the side-by-side support maps is wider than its
  column, and each side is labelled with its run.

Every page is loaded once (the machine is shared): the checks run on the loaded page."""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness import browser
from tests.security import test_hostile_names as hostile
from tests.security.hostile_pages import hostile_names

pytestmark = pytest.mark.browser
WAIT_S = 240.0

# Images and links the page holds that point outside the server, or at the pixel.
OUTSIDE_JS = """(() => {
  const origin = location.origin;
  const bad = [];
  document.querySelectorAll('img[src], a[href], link[href], script[src], iframe[src], source[src]').forEach(e => {
    const url = e.getAttribute('src') || e.getAttribute('href') || '';
    if (url.startsWith('#')) return;  // a heading's own anchor (its slug may spell a name)
    const abs = new URL(url, location.href);
    const inline = abs.protocol === 'data:' || abs.protocol === 'blob:';
    if ((!inline && abs.origin !== origin) || url.includes('pixel') || abs.protocol === 'javascript:')
      bad.push(e.tagName + ' ' + url);
  });
  performance.getEntriesByType('resource').forEach(r => {
    const abs = new URL(r.name);
    if ((abs.protocol.startsWith('http') && abs.origin !== origin) || r.name.includes('pixel')) bad.push('fetch ' + r.name);
  });
  return bad;
})()"""
# Charts drawn wider than the column (or main block) that holds them: px beyond its right edge.
OVERFLOW_JS = """(() => Array.from(document.querySelectorAll('[data-testid=stVegaLiteChart]')).map(c => {
  const box = c.closest('[data-testid=stColumn]') || c.closest('[data-testid=stMainBlockContainer]') || c.parentElement;
  const drawn = c.querySelector('canvas, svg');
  return drawn ? Math.round(drawn.getBoundingClientRect().right - box.getBoundingClientRect().right) : 0;
}).filter(px => px > 1))()"""
# Per multiselect of the review form: its chips, and how many are fully inside its box (a chip
# hidden behind "+N" or cut off is not).
CHIPS_JS = """(() => Array.from(document.querySelectorAll('[data-testid=stForm] [data-testid=stMultiSelect]')).map(m => {
  const area = m.querySelector('[data-testid=stMultiSelectTagsContainer]') || m;
  const box = area.getBoundingClientRect();
  const tags = Array.from(m.querySelectorAll('[data-tag]'));
  const shown = tags.filter(t => { const r = t.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.right <= box.right + 1 && r.bottom <= box.bottom + 1; });
  const more = /(^|\\s)\\+\\d+(\\s|$)/.test(m.innerText);
  return {chips: tags.length, shown: shown.length, more};
}))()"""
SIDE_TITLES_JS = "Array.from(document.querySelectorAll('[data-testid=stColumn] h4')).map(h => h.innerText)"


class _Pixel(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        _Pixel.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def pixel() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pixel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/pixel.png"
    server.shutdown()


@pytest.fixture(scope="module")
def site(tmp_path_factory, _demo_qdrant, _session_models_dir, pixel) -> Iterator[dict]:
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.store import close_clients

    home = tmp_path_factory.mktemp("hostile-browser-home")
    shutil.copytree(_demo_qdrant, home / "qdrant")
    (home / "models").symlink_to(_session_models_dir, target_is_directory=True)
    names = hostile_names(pixel)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAG_EVAL_HOME", str(home))
        mp.delenv("RAG_EVAL_DB", raising=False)
        mp.setattr(hostile, "NAMES", names)
        try:
            build_judge("local")
        except (ValueError, OSError, ImportError) as err:
            pytest.skip(f"local judge unavailable: {err}")
        runs = hostile._store_hostile_runs()
        close_clients()
    with browser.streamlit_server(home) as server:
        browser.wait_healthy(server.url, timeout_s=WAIT_S, process=server.process)
        with browser.BrowserSession(width=1280, height=1000) as session:
            yield {"url": server.url, "session": session, "runs": runs, "names": names}


def _check_page(session: browser.BrowserSession, where: str) -> None:
    dom = str(session.evaluate("document.documentElement.outerHTML"))
    assert browser.page_errors(dom) == [], (where, session.main_text()[:1500])
    outside = session.evaluate(OUTSIDE_JS)
    assert outside == [], (where, outside)


def _resize(session: browser.BrowserSession, width: int) -> None:
    session.tools.call("Emulation.setDeviceMetricsOverride", width=width, height=1000, deviceScaleFactor=1,
                       mobile=False)
    session.idle(WAIT_S)


def test_hostile_names_stay_text_and_nothing_is_fetched_from_outside(site):
    session, url, runs, names = site["session"], site["url"], site["runs"], site["names"]
    item = urllib.parse.quote(names["item"], safe="")
    visits = [
        ("", "RAG Eval Workbench"), ("/ask", "Ask"), ("/batch?run=" + runs["judge"], "Batch evaluation"),
        (f"/runs?dataset=all&run={runs['k2']}", "Runs and trends"),
        (f"/compare?runs={runs['k2']},{runs['k5']}", "Compare runs"), ("/judges", "Judges"),
        ("/datasets", "Datasets"), ("/corpus", "Corpus"), ("/settings", "Settings"),
    ]
    for path, heading in visits:
        session.goto(url + path, heading, WAIT_S)
        _check_page(session, path or "/")

    # one stored row: its hostile id and question are text; a click on a response sentence selects it
    session.goto(f"{url}/support_map?run={runs['judge']}&item={item}", "Sentence support map", WAIT_S)
    _check_page(session, "support map")
    session.wait_for(f"document.querySelectorAll('{browser.CHART_DRAWN}').length >= 1", WAIT_S)
    assert session.evaluate(OVERFLOW_JS) == [], "support map at 1280 px"  # the sets chart fits its column
    assert names["item"] in session.main_text().replace("\u2060", "")  # shown, as text (a word joiner breaks "://")
    keys = session.evaluate("Array.from(document.querySelectorAll('.sm-response .sm-s')).map(s => s.dataset.key)")
    assert isinstance(keys, list) and len(keys) >= 2, keys
    target = keys[-1]
    session.evaluate(f"document.querySelector('.sm-response .sm-s[data-key={json.dumps(target)}]').click()")
    session.wait_for(f"(() => {{ const e = document.querySelector('.sm-explanation strong'); "
                     f"return !!e && e.innerText === {json.dumps(target)}; }})()", WAIT_S)

    # the review form: every chosen sentence shows as a chip (none hidden behind "+N")
    session.type_into('input[aria-label="Reviewer"]', "ann")
    session.evaluate("document.activeElement.blur()")
    session.wait_for("document.querySelectorAll('[data-testid=stForm] [data-testid=stMultiSelect]').length >= 2", WAIT_S)
    session.idle(WAIT_S)
    with contextlib.suppress(TimeoutError):  # the form may still be laying its chips out: give it 10 s to settle
        session.wait_for(f"{CHIPS_JS}.every(c => c.shown === c.chips && !c.more)", 10)
    chips = session.evaluate(CHIPS_JS)
    assert isinstance(chips, list) and sum(c["chips"] for c in chips) >= 1, chips
    assert all(c["shown"] == c["chips"] and not c["more"] for c in chips), chips

    # two runs side by side: each side labelled with its run, no chart wider than its column
    session.goto(f"{url}/support_map?runs={runs['k2']},{runs['k5']}&item={item}", "Sentence support map", WAIT_S)
    session.wait_for(f"document.querySelectorAll('{browser.CHART_DRAWN}').length >= 2", WAIT_S)
    _check_page(session, "support map side by side")
    for width in (1280, 1920):
        _resize(session, width)
        assert session.evaluate(OVERFLOW_JS) == [], width
        titles = [str(t).replace("\u2060", "") for t in session.evaluate(SIDE_TITLES_JS) or []]
        assert len(titles) == 2 and names["run"] in titles[0] and names["run2"] in titles[1], titles
    assert _Pixel.hits == []  # no browser fetched the pixel
