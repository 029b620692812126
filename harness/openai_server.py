"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It speaks ``POST /v1/chat/completions`` (JSON, or SSE when ``stream`` is true),
``POST /v1/embeddings`` (deterministic unit vectors from a hash of the text) and
``GET /v1/models``, over real sockets, in a background thread pool
(``ThreadingHTTPServer``: one thread per connection, 32+ concurrent requests), so
clients exercise their real HTTP transport. Nothing leaves loopback.

Replies are scripted: ``enqueue(...)`` replies are used first, in order; then the
``set_handler(fn)`` responder (``fn(request_json) -> reply``); then a default "OK".
A reply is a content string, a :class:`Reply`, or a dict of Reply fields, so faults
are data: HTTP status + headers (429 with Retry-After, 500), a delay longer than
the client's timeout, a dropped connection, ``finish_reason="length"``, a refusal.

In pytest use the ``openai_server`` fixture (this module is a plugin loaded by
tests/conftest.py). Elsewhere (bench/) use ``start_server(latency_s=0.2)``.
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """One scripted answer (or fault)."""

    content: str | None = "OK"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # extra wait before answering (beyond the server latency)
    drop: bool = False  # close the connection without answering
    finish_reason: str = "stop"
    refusal: str | None = None
    body: Any = None  # raw response body (dict -> JSON, str -> as is); overrides the rest
    usage: dict[str, int] | None = None
    # The first token's alternatives {token: logprob}: sent (as OpenAI does) only when the request
    # asks for logprobs; a request for them to a server "without" them: reject_logprobs.
    first_token_logprobs: dict[str, float] | None = None
    reject_logprobs: bool = False

    @classmethod
    def error(cls, status: int, message: str = "error", retry_after: float | None = None, **headers: str) -> Reply:
        hdrs = dict(headers)
        if retry_after is not None:
            hdrs["Retry-After"] = f"{retry_after:g}"
        body = {"error": {"message": message, "type": "test_error", "code": status}}
        return cls(content=None, status=status, headers=hdrs, body=body)

    @classmethod
    def slow(cls, delay_s: float, content: str = "OK") -> Reply:
        return cls(content=content, delay_s=delay_s)

    @classmethod
    def dropped(cls) -> Reply:
        return cls(content=None, drop=True)

    @classmethod
    def truncated(cls, content: str) -> Reply:
        return cls(content=content, finish_reason="length")

    @classmethod
    def refused(cls, refusal: str = "I can't help with that.") -> Reply:
        return cls(content=None, refusal=refusal)


def as_reply(spec: Any) -> Reply:
    if isinstance(spec, Reply):
        return spec
    if spec is None or isinstance(spec, str):
        return Reply(content=spec)
    if isinstance(spec, dict):
        return Reply(**spec)
    raise TypeError(f"not a reply spec: {spec!r}")


def _tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def deterministic_embedding(text: str, dim: int) -> list[float]:
    """A unit vector derived from sha256(text): same text, same vector, on any machine."""
    values: list[float] = []
    counter = 0
    while len(values) < dim:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend(v / 2**31 - 1.0 for v in struct.unpack(">8I", digest))
        counter += 1
    values = values[:dim]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connecting at once must not be refused


class OpenAIServer:
    """The server's state and controls (thread-safe)."""

    def __init__(self, latency_s: float = 0.0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.latency_s = latency_s
        self.models = ["test-model"]
        self.embedding_dim = 384
        self.requests: list[dict[str, Any]] = []  # chat completion bodies, in arrival order
        self.embedding_requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # request headers of chat calls
        self._queue: list[Any] = []  # Reply or fn(request_json) -> reply
        self._handler: Callable[[dict[str, Any]], Any] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server((host, port), _make_handler(self))
        self._thread: threading.Thread | None = None

    # -- controls ------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def enqueue(self, *replies: Any) -> None:
        """Replies for the next requests, in order (before the handler is used). A
        callable is called with the request JSON when its turn comes."""
        with self._lock:
            self._queue.extend(r if callable(r) else as_reply(r) for r in replies)

    def set_handler(self, fn: Callable[[dict[str, Any]], Any] | None) -> None:
        """Default responder once the queue is empty: ``fn(request_json) -> reply``."""
        self._handler = fn

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.embedding_requests.clear()
            self.headers.clear()
            self._queue.clear()

    def start(self) -> OpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals -----------------------------------------------------------------
    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            queued = self._queue.pop(0) if self._queue else None
        if queued is not None:
            return as_reply(queued(body)) if callable(queued) else queued
        if self._handler is not None:
            return as_reply(self._handler(body))
        return Reply()

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def _completion_body(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    prompt = "".join(str(m.get("content") or "") for m in body.get("messages", []) if isinstance(m, dict))
    content = reply.content
    usage = reply.usage or {
        "prompt_tokens": _tokens(prompt),
        "completion_tokens": _tokens(content or reply.refusal or ""),
    }
    usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
        "finish_reason": reply.finish_reason,
    }
    if body.get("logprobs") and reply.first_token_logprobs:
        alternatives = sorted(reply.first_token_logprobs.items(), key=lambda kv: -kv[1])
        top = int(body.get("top_logprobs") or 0)
        choice["logprobs"] = {"content": [{"token": alternatives[0][0], "logprob": alternatives[0][1],
                                           "top_logprobs": [{"token": t, "logprob": lp} for t, lp in alternatives[:top]]}]}
    return {
        "id": f"chatcmpl-test-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test-model"),
        "choices": [choice],
        "usage": usage,
    }


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
        # Headers and body go out in separate writes; with Nagle's algorithm on, the
        # second waits for the client's delayed ACK (~40 ms on Linux), which real
        # servers avoid with TCP_NODELAY. So do we, or latency figures are fiction.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else (
                payload.encode("utf-8") if isinstance(payload, str) else json.dumps(payload).encode("utf-8")
            )
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _read_json(self) -> dict[str, Any] | None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "request body is not JSON"}})
                return None
            return body if isinstance(body, dict) else {}

        def _drop(self) -> None:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/_stats"):  # test-only: counts, for out-of-process use
                with server._lock:
                    stats = {"chat_requests": len(server.requests), "embedding_requests": len(server.embedding_requests)}
                self._send(200, stats)
            elif self.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]
                self._send(200, {"object": "list", "data": data})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            body = self._read_json()
            if body is None:
                return
            if self.path.rstrip("/").endswith("/chat/completions"):
                self._chat(body)
            elif self.path.rstrip("/").endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _chat(self, body: dict[str, Any]) -> None:
            with server._lock:
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
            try:
                reply = server._next_reply(body)
            except Exception as err:  # a broken test handler is a 500, not a hung client
                self._send(500, {"error": {"message": f"test handler failed: {err}"}})
                return
            server._wait(server.latency_s + reply.delay_s)
            if reply.drop:
                self._drop()
                return
            if reply.body is not None:
                self._send(reply.status, reply.body, reply.headers)
                return
            if reply.reject_logprobs and body.get("logprobs"):  # a server without log-probabilities
                self._send(400, {"error": {"message": "logprobs is not supported by this model"}})
                return
            if reply.status != 200:
                self._send(reply.status, {"error": {"message": reply.content or "error"}}, reply.headers)
                return
            payload = _completion_body(body, reply)
            if body.get("stream"):
                self._stream(payload, reply.headers)
            else:
                self._send(200, payload, reply.headers)

        def _stream(self, payload: dict[str, Any], headers: dict[str, str]) -> None:
            choice = payload["choices"][0]
            base = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
            chunks = [
                base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": choice["message"]["content"] or ""},
                                     "finish_reason": None}]},
                base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
            ]
            data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            raw = data.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(raw)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)

        def _embeddings(self, body: dict[str, Any]) -> None:
            with server._lock:
                server.embedding_requests.append(body)
            server._wait(server.latency_s)
            texts = body.get("input")
            if isinstance(texts, str):
                texts = [texts]
            if not isinstance(texts, list):
                self._send(400, {"error": {"message": "input must be a string or a list of strings"}})
                return
            dim = int(body.get("dimensions") or server.embedding_dim)
            data = [
                {"object": "embedding", "index": i, "embedding": deterministic_embedding(str(t), dim)}
                for i, t in enumerate(texts)
            ]
            n = sum(_tokens(str(t)) for t in texts)
            self._send(200, {
                "object": "list", "data": data, "model": body.get("model", "test-embedding"),
                "usage": {"prompt_tokens": n, "total_tokens": n},
            })

    return Handler


def start_server(latency_s: float = 0.0, host: str = "127.0.0.1", port: int = 0) -> OpenAIServer:
    """Start a server in a background thread (call ``.stop()`` when done)."""
    return OpenAIServer(latency_s=latency_s, host=host, port=port).start()


def _main() -> None:
    """Run the server in its own process (for benchmarks: the client under test then
    does not share a GIL with the server). Prints the base URL, serves until killed."""
    import argparse
    import sys
    from pathlib import Path

    parser = argparse.ArgumentParser(description="Local OpenAI-compatible test server (loopback only).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--responder", choices=["ok", "judge"], default="ok",
                        help="'judge': answer judge prompts with a valid RAGBench-schema judgement")
    args = parser.parse_args()
    server = OpenAIServer(latency_s=args.latency, port=args.port)
    if args.responder == "judge":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from harness.fake_answers import answer_text

        server.set_handler(answer_text)
    print(server.base_url, flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    _main()


@pytest.fixture
def openai_server():
    """A fresh local OpenAI-compatible server for one test."""
    server = start_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fast_backoff(monkeypatch):
    """Patch the client's backoff to ~0 s (as openai's tests do); returns the list of
    ``(attempt, retry_after, delay_that_would_have_been_used)`` so tests can check
    that Retry-After was honoured without waiting for it."""
    from rag_eval.llm import client as client_module
    from rag_eval.llm.retry import backoff_delay as real_backoff

    calls: list[tuple[int, float | None, float]] = []

    def quick(attempt: int, retry_after: float | None = None, rng=None) -> float:
        calls.append((attempt, retry_after, real_backoff(attempt, retry_after, rng=lambda: 0.0)))
        return 0.001

    monkeypatch.setattr(client_module, "backoff_delay", quick)
    return calls
