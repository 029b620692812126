"""A loopback listener that records every request it receives (any method, any path, with
its headers), answering 404: what a visitor's typed address would reach. Egress tests
assert it heard nothing; an owner's server built on it shows what was sent there."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Heard:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)


class Listener:
    def __init__(self) -> None:
        self.heard: list[Heard] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                with lock:
                    outer.heard.append(Heard(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _record  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
