"""What a new visitor's browser is told in the page's head, so the first table comes sooner.

Three hints, measured with ``bench/bench_page_load.py --at-size`` and Chrome's profiler:

- **The table code, preloaded.** Streamlit's frontend loads an element's code the first
  time a page shows one: the table code (``DataFrame`` and its Arrow helpers, 1.7 MB) would
  be fetched and compiled only after the script has sent its first table. Every page's
  first content at size is a table, so the HTML names those modules up front as
  ``<link rel="modulepreload">``, as Streamlit's own HTML does for its core modules. They
  are content-hashed and cached for a year, so a returning browser pays nothing.
  (Preloading the chart code or the widgets' code as well made every page's heading later.)
- **The table's stylesheet, linked.** Vite's loader waits for an element's stylesheet
  before it hands the element's code over; with the sheet already in the page it does not.
- **Where the server is.** Opened at a page's address (``/runs``), the frontend does not
  know whether ``/runs`` is the app's base path: it asks ``/runs/_stcore/health`` first,
  gets a 404 and waits 100 ms before asking ``/_stcore/health``. A small script tells it
  the base path (``window.__streamlit.BACKEND_BASE_URL``, the setting hosts embedding
  Streamlit use) when the address ends in one of the dashboard's page names; any other
  address, and a host's own setting, are left alone.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path

from rag_eval.ui.asgi import ASGIApp, Message, Receive, Scope, Send, header_map, rework_response
from rag_eval.ui.streamlit_compat import CSS_DIR, INDEX_HTML, JS_DIR, MODULE_IMPORT, PAGE_SCRIPT, TABLE_ELEMENT, element_files, static_dir

PRELOADED_ELEMENTS = (TABLE_ELEMENT,)


def element_modules(static_dir: Path, elements: Iterable[str] = PRELOADED_ELEMENTS) -> list[str]:
    """File names of the elements' modules and of every module they import statically,
    minus those Streamlit's page already loads or preloads; empty when the layout is not
    the expected one (another Streamlit), so the page is served unchanged."""
    js = static_dir / JS_DIR
    try:
        already = set(PAGE_SCRIPT.findall((static_dir / INDEX_HTML).read_text(encoding="utf-8")))
    except OSError:
        return []
    wanted: list[str] = []
    for element in elements:
        found = element_files(static_dir, element, "js")
        if len(found) == 1:
            wanted.append(found[0].name)
    order: list[str] = []
    while wanted:
        name = wanted.pop(0)
        if name in order or name in already or not (js / name).is_file():
            continue
        order.append(name)
        wanted.extend(MODULE_IMPORT.findall((js / name).read_text(encoding="utf-8", errors="replace")))
    return order


def element_styles(static_dir: Path, elements: Iterable[str] = PRELOADED_ELEMENTS) -> list[str]:
    """File names of the elements' own stylesheets (``static/css/DataFrame.*.css``)."""
    found = [element_files(static_dir, element, "css") for element in elements]
    return [names[0].name for names in found if len(names) == 1]


def preload_tags(modules: Iterable[str], styles: Iterable[str] = ()) -> bytes:
    return ("".join(f'<link rel="modulepreload" crossorigin href="./{JS_DIR}/{name}">' for name in modules)
            + "".join(f'<link rel="stylesheet" href="./{CSS_DIR}/{name}">' for name in styles)).encode()


def base_path_script(pages: Iterable[str]) -> bytes:
    """A script setting the frontend's ``BACKEND_BASE_URL`` to the address minus its last
    segment when that segment is one of ``pages`` (so ``https://host/prefix/runs`` →
    ``https://host/prefix/``); nothing otherwise, nor when a host has set it already."""
    names = json.dumps(sorted(set(pages))).replace("<", "\\u003c")
    return ("<script>(function(){var s=window.__streamlit||{};if(s.BACKEND_BASE_URL)return;"
            "var p=location.pathname.replace(/\\/+$/,'').split('/');"
            f"if({names}.indexOf(p.pop())<0)return;"
            "window.__streamlit=Object.assign({},s,{BACKEND_BASE_URL:location.origin+p.join('/')+'/'});})();"
            "</script>").encode()


class PageHints:
    """ASGI middleware: adds the hints above before ``</head>`` of every HTML page the
    server sends to a browser (Streamlit's one page, under any page path): the base-path
    script for ``pages`` (the dashboard's page names), then the table's modules and
    stylesheet (``modules``/``styles``: found in the installed Streamlit when None). It sits
    outside Streamlit's own gzip middleware, so it asks for the page uncompressed and
    compresses the rewritten page itself when the browser accepts gzip."""

    def __init__(self, app: ASGIApp, pages: Iterable[str] = (), modules: Iterable[str] | None = None,
                 styles: Iterable[str] | None = None) -> None:
        self.app = app
        static = static_dir()
        modules = element_modules(static) if modules is None else list(modules)
        styles = element_styles(static) if styles is None else list(styles)
        pages = list(pages)
        self.tags = (base_path_script(pages) if pages else b"") + preload_tags(modules, styles)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_headers = header_map(scope) if scope["type"] == "http" else {}
        if scope.get("method") != "GET" or b"text/html" not in request_headers.get(b"accept", b"") or not self.tags:
            await self.app(scope, receive, send)
            return
        gzip_ok = b"gzip" in request_headers.get(b"accept-encoding", b"")
        scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]}

        def plain_page(start: Message) -> bool:
            sent = header_map(start)
            return (start.get("status") == 200 and sent.get(b"content-type", b"").startswith(b"text/html")
                    and b"content-encoding" not in sent)

        async def add_tags(start: Message, body: bytes) -> None:
            page = body.replace(b"</head>", self.tags + b"</head>", 1)
            headers = [(k, v) for k, v in start.get("headers") or [] if k.lower() not in (b"content-length", b"vary")]
            if gzip_ok:
                page = gzip.compress(page)
                headers += [(b"content-encoding", b"gzip")]
            headers += [(b"content-length", str(len(page)).encode()), (b"vary", b"Accept-Encoding")]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": page})

        await rework_response(self.app, scope, receive, send, plain_page, add_tags)
