"""Send Streamlit's frontend files compressed, each compressed once.

Streamlit's server sends its static files as they are on disk: a browser that has never
seen the dashboard downloads 5.7 MB of JavaScript before the first heading shows, 1.7 MB
more for the first table and about 1 MB for the first chart. Gzip makes that a quarter
(``bench/bench_page_load.py --at-size`` prints the bytes a new visitor downloads). On this
machine's loopback the bytes cost nothing, but a visitor of a Space or of a server across
a network pays for each one.

The files are content-hashed (``index.DormvYxC.js``) and served as immutable, so the
middleware compresses each once, in a worker thread, and keeps the result in memory
(about 7 MB for every file Streamlit ships) for every later browser. Requests it does
not understand pass through untouched: a byte range, a conditional request, a browser
that does not accept gzip, an error, a response already encoded.
"""

from __future__ import annotations

import gzip

import anyio.to_thread

from rag_eval.ui.asgi import ASGIApp, Message, Receive, Scope, Send, header_map, rework_response
from rag_eval.ui.streamlit_compat import is_frontend_path

COMPRESSIBLE = (b"application/javascript", b"text/javascript", b"text/css", b"application/json", b"image/svg+xml")
MIN_BYTES = 1024  # below this, gzip's header and a second decoder cost more than they save
CACHE_LIMIT_BYTES = 32_000_000  # compressed bytes kept; past it a file is sent as it is
_PASS_THROUGH = (b"range", b"if-none-match", b"if-modified-since", b"if-range")

Compressed = tuple[list[tuple[bytes, bytes]], bytes]  # the response headers and the gzipped body


def compressed_headers(headers: list[tuple[bytes, bytes]], size: int) -> list[tuple[bytes, bytes]]:
    """The original response's headers for its gzipped body of ``size`` bytes: a new length,
    the encoding, ``Vary``, and an ETag of its own (another representation, other bytes)."""
    out = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"vary", b"accept-ranges", b"etag")]
    etag = next((v for k, v in headers if k.lower() == b"etag"), None)
    if etag is not None:
        out.append((b"etag", etag[:-1] + b'-gzip"' if etag.endswith(b'"') else etag + b"-gzip"))
    return out + [(b"content-encoding", b"gzip"), (b"content-length", str(size).encode()), (b"vary", b"Accept-Encoding")]


class CompressedStatic:
    """ASGI middleware: ``GET …/static/…`` answered gzipped from memory after its first
    request (see the module's docstring)."""

    def __init__(self, app: ASGIApp, cache_limit_bytes: int = CACHE_LIMIT_BYTES, level: int = 6) -> None:
        self.app = app
        self.level = level
        self.cache_limit_bytes = cache_limit_bytes
        self.cache: dict[str, Compressed] = {}
        self.cached_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or scope.get("method") != "GET" or not is_frontend_path(path):
            await self.app(scope, receive, send)
            return
        request_headers = header_map(scope)
        if b"gzip" not in request_headers.get(b"accept-encoding", b"") or any(h in request_headers for h in _PASS_THROUGH):
            await self.app(scope, receive, send)
            return
        hit = self.cache.get(path)
        if hit is not None:
            await self._send(send, *hit)
            return

        def compressible(start: Message) -> bool:
            sent = header_map(start)
            kind = sent.get(b"content-type", b"").split(b";")[0].strip()
            return start.get("status") == 200 and kind in COMPRESSIBLE and b"content-encoding" not in sent

        async def compress(start: Message, raw: bytes) -> None:
            if len(raw) < MIN_BYTES:
                await send(start)
                await send({"type": "http.response.body", "body": raw})
                return
            packed = await anyio.to_thread.run_sync(lambda: gzip.compress(raw, self.level, mtime=0))
            headers = compressed_headers(list(start.get("headers") or []), len(packed))
            if self.cached_bytes + len(packed) <= self.cache_limit_bytes and path not in self.cache:
                self.cache[path] = (headers, packed)
                self.cached_bytes += len(packed)
            await self._send(send, headers, packed)

        await rework_response(self.app, scope, receive, send, compressible, compress)

    @staticmethod
    async def _send(send: Send, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
