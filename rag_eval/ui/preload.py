"""Let a new visitor's browser fetch the dashboard's table code while the page starts.

Streamlit's frontend loads an element's code the first time a page shows one: the table
code (``DataFrame`` and its Arrow helpers, 1.3 MB) is fetched and compiled only after the
script has sent its first table, and on Runs it then races the chart code (Plotly,
4.7 MB) that the next elements ask for. Every page's first content at size is a table, so
the page's HTML names the table modules up front as ``<link rel="modulepreload">``, as
Streamlit's own HTML does for its core modules: a new browser fetches and compiles them
while the session starts. They are content-hashed and cached for a year, so a returning
browser pays nothing. (Preloading the chart code as well made every page's heading later:
``bench/bench_page_load.py --at-size``.)
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

PRELOADED_ELEMENTS = ("DataFrame",)

_STATIC_IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([\w.\-]+\.js)"')
_ON_THE_PAGE = re.compile(r'(?:href|src)="\./static/js/([\w.\-]+\.js)"')  # the entry script and its preloads

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def streamlit_static_dir() -> Path:
    import streamlit

    return Path(streamlit.__file__).parent / "static"


def element_modules(static_dir: Path, elements: Iterable[str] = PRELOADED_ELEMENTS) -> list[str]:
    """File names of the elements' modules and of every module they import statically,
    minus those Streamlit's page already loads or preloads; empty when the layout is not
    the expected one (another Streamlit), so the page is served unchanged."""
    js = static_dir / "static" / "js"
    try:
        already = set(_ON_THE_PAGE.findall((static_dir / "index.html").read_text(encoding="utf-8")))
    except OSError:
        return []
    wanted: list[str] = []
    for element in elements:
        found = sorted(js.glob(f"{element}.*.js"))
        if len(found) == 1:
            wanted.append(found[0].name)
    order: list[str] = []
    while wanted:
        name = wanted.pop(0)
        if name in order or name in already or not (js / name).is_file():
            continue
        order.append(name)
        wanted.extend(_STATIC_IMPORT.findall((js / name).read_text(encoding="utf-8", errors="replace")))
    return order


def preload_tags(modules: Iterable[str]) -> bytes:
    return "".join(f'<link rel="modulepreload" crossorigin href="./static/js/{name}">' for name in modules).encode()


class ModulePreload:
    """ASGI middleware: adds ``<link rel="modulepreload">`` tags before ``</head>`` of
    every HTML page the server sends to a browser (Streamlit's one page, under any page
    path). It sits outside Streamlit's own gzip middleware, so it asks for the page
    uncompressed and compresses the rewritten page itself when the browser accepts gzip."""

    def __init__(self, app: ASGIApp, modules: Iterable[str] | None = None) -> None:
        self.app = app
        self.tags = preload_tags(element_modules(streamlit_static_dir()) if modules is None else modules)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_headers = dict(scope.get("headers") or []) if scope["type"] == "http" else {}
        if scope.get("method") != "GET" or b"text/html" not in request_headers.get(b"accept", b"") or not self.tags:
            await self.app(scope, receive, send)
            return
        gzip_ok = b"gzip" in request_headers.get(b"accept-encoding", b"")
        scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]}
        start: Message | None = None
        body: list[bytes] = []

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                sent = dict(message.get("headers") or [])
                is_html = sent.get(b"content-type", b"").startswith(b"text/html")
                if not is_html or sent.get(b"content-encoding") or message.get("status") != 200:
                    await send(message)
                    return
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            page = b"".join(body).replace(b"</head>", self.tags + b"</head>", 1)
            headers = [(k, v) for k, v in start.get("headers") or [] if k.lower() not in (b"content-length", b"vary")]
            if gzip_ok:
                page = gzip.compress(page)
                headers += [(b"content-encoding", b"gzip")]
            headers += [(b"content-length", str(len(page)).encode()), (b"vary", b"Accept-Encoding")]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, rewrite)
