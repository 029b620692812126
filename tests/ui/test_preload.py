"""The dashboard's HTML names Streamlit's table modules as ``<link rel="modulepreload">``
(``rag_eval.ui.preload``), so a new browser compiles them while the session starts.

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

from rag_eval.ui import browser
from rag_eval.ui.preload import ModulePreload, element_modules, preload_tags, streamlit_static_dir

PAGE = "<html><head><title>t</title></head><body>" + "x" * 2000 + "</body></html>"


def client(modules: list[str]) -> TestClient:
    async def page(_request):
        return HTMLResponse(PAGE)

    async def data(_request):
        return JSONResponse({"a": 1})

    app = Starlette(routes=[Route("/", page, methods=["GET", "POST"]), Route("/data", data)],
                    middleware=[Middleware(ModulePreload, modules=modules)])
    return TestClient(app)


def test_the_table_modules_are_found_in_the_installed_streamlit() -> None:
    static = streamlit_static_dir()
    modules = element_modules(static)
    assert any(name.startswith("DataFrame.") for name in modules)
    assert not any(name.startswith("PlotlyChart.") for name in modules)  # the chart code is not preloaded
    page = (static / "index.html").read_text(encoding="utf-8")
    assert not [name for name in modules if name in page]  # nothing Streamlit's page already loads


def test_an_unexpected_static_layout_preloads_nothing(tmp_path: Path) -> None:
    assert element_modules(tmp_path) == []


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
    tags = preload_tags(element_modules(streamlit_static_dir())).decode()
    with tempfile.TemporaryDirectory() as home, browser.streamlit_server(Path(home)) as server:
        browser.wait_healthy(server.url, process=server.process)
        request = urllib.request.Request(server.url + "/runs", headers={"Accept": "text/html",
                                                                         "Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            if response.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
    assert tags in body.decode("utf-8")
