"""The dashboard's HTML carries hints for a new browser (``rag_eval.ui.preload``): the
table modules as ``<link rel="modulepreload">``, the table's stylesheet, and a script
telling the frontend the server's base path when the address is a page's.

No timing here (``bench/bench_page_load.py --at-size`` prints the figures): the middleware
is checked over a small ASGI app and over the real server.
"""

from __future__ import annotations

import gzip
import tempfile
import urllib.request
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from harness import browser
from rag_eval.ui.constants import APP_TITLE
from rag_eval.ui.preload import PageHints, base_path_script, element_modules, element_styles, preload_tags
from rag_eval.ui.streamlit_compat import static_dir

PAGE = "<html><head><title>t</title></head><body>" + "x" * 2000 + "</body></html>"


def client(modules: list[str], pages: tuple[str, ...] = ()) -> TestClient:
    async def page(_request):
        return HTMLResponse(PAGE)

    async def data(_request):
        return JSONResponse({"a": 1})

    app = Starlette(routes=[Route("/", page, methods=["GET", "POST"]), Route("/data", data)],
                    middleware=[Middleware(PageHints, pages=pages, modules=modules, styles=[])])
    return TestClient(app)


def test_the_table_modules_are_found_in_the_installed_streamlit() -> None:
    static = static_dir()
    modules = element_modules(static)
    assert any(name.startswith("DataFrame.") for name in modules)
    assert not any(name.startswith("PlotlyChart.") for name in modules)  # the chart code is not preloaded
    page = (static / "index.html").read_text(encoding="utf-8")
    assert not [name for name in modules if name in page]  # nothing Streamlit's page already loads


def test_the_table_stylesheet_is_found_in_the_installed_streamlit() -> None:
    styles = element_styles(static_dir())
    assert len(styles) == 1 and styles[0].startswith("DataFrame.") and styles[0].endswith(".css")
    assert '<link rel="stylesheet" href="./static/css/' + styles[0] + '">' in preload_tags([], styles).decode()


def test_an_unexpected_static_layout_preloads_nothing(tmp_path: Path) -> None:
    assert element_modules(tmp_path) == [] and element_styles(tmp_path) == []


def test_the_base_path_script_names_only_the_pages() -> None:
    script = base_path_script(["runs", "compare", "runs"]).decode()
    assert script.startswith("<script>") and script.endswith("</script>") and '["compare", "runs"]' in script
    assert "</" not in base_path_script(["</script><b>"]).decode()[8:-9]  # a name cannot close the script
    with client([], pages=("runs",)) as http:
        assert "BACKEND_BASE_URL" in http.get("/", headers={"Accept": "text/html"}).text


def test_the_page_gets_the_tags_compressed_when_the_browser_accepts_gzip() -> None:
    with client(["DataFrame.abc.js"]) as http:
        plain = http.get("/", headers={"Accept": "text/html", "Accept-Encoding": "identity"})
        assert plain.text.count("modulepreload") == 1
        assert plain.text.index("DataFrame.abc.js") < plain.text.index("</head>")
        assert int(plain.headers["content-length"]) == len(plain.content)
        raw = http.get("/", headers={"Accept": "text/html", "Accept-Encoding": "gzip"})
        assert raw.headers["content-encoding"] == "gzip"  # httpx has already decoded it
        assert raw.text == plain.text


def test_other_requests_pass_through_unchanged() -> None:
    with client(["DataFrame.abc.js"]) as http:
        assert http.get("/data", headers={"Accept": "text/html"}).json() == {"a": 1}
        assert "modulepreload" not in http.get("/", headers={"Accept": "application/json"}).text
        assert "modulepreload" not in http.post("/", headers={"Accept": "text/html"}).text


def test_the_dashboard_server_sends_the_tags() -> None:
    static = static_dir()
    tags = preload_tags(element_modules(static), element_styles(static)).decode()
    with tempfile.TemporaryDirectory() as home, browser.streamlit_server(Path(home)) as server:
        browser.wait_healthy(server.url, process=server.process)
        request = urllib.request.Request(server.url + "/runs", headers={"Accept": "text/html",
                                                                         "Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            if response.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
    assert tags in body.decode("utf-8")


def test_a_page_address_connects_without_probing_it_as_a_base_path() -> None:
    """Opened at /runs, the frontend asks /_stcore/health at once, not /runs/_stcore/health
    (a 404, then a 100 ms wait); opened at /, nothing is set."""
    resources = "performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"

    with tempfile.TemporaryDirectory() as home, browser.streamlit_server(Path(home)) as server:
        browser.wait_healthy(server.url, process=server.process)
        with browser.BrowserSession() as session:
            session.goto(server.url + "/runs", "Runs and trends", timeout_s=60)  # raises when it never shows
            asked = str(session.evaluate(f"JSON.stringify({resources})"))
            base = session.evaluate("(window.__streamlit || {}).BACKEND_BASE_URL")
            origin = str(session.evaluate("location.origin"))
            session.goto(server.url + "/", APP_TITLE, timeout_s=60)
            at_root = session.evaluate("(window.__streamlit || {}).BACKEND_BASE_URL || null")
    assert '"/_stcore/health"' in asked and "/runs/_stcore/health" not in asked
    assert base == origin + "/"
    assert at_root is None
