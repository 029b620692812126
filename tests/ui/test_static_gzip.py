"""Streamlit's frontend files go out gzipped, each compressed once (``rag_eval.ui.static_gzip``).

Checked over a small ASGI app serving real files (counting how often it is asked) and
over the dashboard's real server. No timing here: ``bench/bench_page_load.py --at-size``
prints the megabytes a new visitor downloads.
"""

from __future__ import annotations

import gzip
import tempfile
import urllib.request
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from harness import browser
from rag_eval.ui.static_gzip import CompressedStatic
from rag_eval.ui.streamlit_compat import static_dir

SCRIPT = ("export function f(){return 'the same line again and again';}\n" * 400).encode()


def client(folder: Path, asked: list[str], cache_limit_bytes: int = 10_000_000) -> TestClient:
    (folder / "app.js").write_bytes(SCRIPT)
    (folder / "tiny.js").write_bytes(b"export{};")
    (folder / "logo.png").write_bytes(b"\x89PNG" + bytes(4000))

    async def static(request: Request) -> Response:
        asked.append(request.url.path)
        path = folder / request.path_params["name"]
        return FileResponse(path) if path.is_file() else Response("Not Found", status_code=404)

    app = Starlette(routes=[Route("/static/js/{name}", static), Route("/other/{name}", static),
                            Route("/app/static/{name}", static)],
                    middleware=[Middleware(CompressedStatic, cache_limit_bytes=cache_limit_bytes)])
    return TestClient(app)


def test_a_static_file_is_sent_gzipped_and_compressed_once(tmp_path: Path) -> None:
    asked: list[str] = []
    with client(tmp_path, asked) as http:
        first = http.get("/static/js/app.js", headers={"Accept-Encoding": "gzip"})
        again = http.get("/static/js/app.js", headers={"Accept-Encoding": "gzip, br"})
    for response in (first, again):
        assert response.status_code == 200 and response.headers["content-encoding"] == "gzip"
        assert response.content == SCRIPT  # httpx has decoded it
        assert int(response.headers["content-length"]) < len(SCRIPT) / 10
        assert response.headers["vary"] == "Accept-Encoding" and response.headers["etag"].endswith('-gzip"')
        assert "accept-ranges" not in response.headers
    assert asked == ["/static/js/app.js"]  # the second answer came from memory


def test_what_it_does_not_understand_passes_through(tmp_path: Path) -> None:
    asked: list[str] = []
    with client(tmp_path, asked) as http:
        plain = http.get("/static/js/app.js", headers={"Accept-Encoding": "identity"})
        ranged = http.get("/static/js/app.js", headers={"Accept-Encoding": "gzip", "Range": "bytes=0-9"})
        tiny = http.get("/static/js/tiny.js", headers={"Accept-Encoding": "gzip"})
        image = http.get("/static/js/logo.png", headers={"Accept-Encoding": "gzip"})
        missing = http.get("/static/js/nothing.js", headers={"Accept-Encoding": "gzip"})
        elsewhere = http.get("/other/app.js", headers={"Accept-Encoding": "gzip"})
        apps_own = http.get("/app/static/app.js", headers={"Accept-Encoding": "gzip"})
        head = http.head("/static/js/app.js", headers={"Accept-Encoding": "gzip"})
    assert plain.content == SCRIPT and "content-encoding" not in plain.headers
    assert ranged.status_code == 206 and ranged.content == SCRIPT[:10]
    assert tiny.content == b"export{};" and "content-encoding" not in tiny.headers
    assert "content-encoding" not in image.headers and len(image.content) == 4004
    assert missing.status_code == 404
    for response in (elsewhere, apps_own):  # not Streamlit's frontend: its files may change
        assert response.content == SCRIPT and "content-encoding" not in response.headers
    assert head.status_code == 200 and "content-encoding" not in head.headers


def test_past_the_cache_limit_a_file_is_compressed_but_not_kept(tmp_path: Path) -> None:
    asked: list[str] = []
    with client(tmp_path, asked, cache_limit_bytes=10) as http:
        for _ in range(2):
            response = http.get("/static/js/app.js", headers={"Accept-Encoding": "gzip"})
            assert response.headers["content-encoding"] == "gzip" and response.content == SCRIPT
    assert len(asked) == 2


def test_the_dashboard_server_sends_its_frontend_gzipped() -> None:
    js = static_dir() / "static" / "js"
    entry = next(p for p in js.glob("index.*.js") if p.name.count(".") == 2)
    with tempfile.TemporaryDirectory() as home, browser.streamlit_server(Path(home)) as server:
        browser.wait_healthy(server.url, process=server.process)
        request = urllib.request.Request(f"{server.url}/static/js/{entry.name}", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=30) as response:
            encoding, body = response.headers.get("Content-Encoding"), response.read()
    assert encoding == "gzip"
    assert gzip.decompress(body) == entry.read_bytes() and len(body) < entry.stat().st_size / 2
