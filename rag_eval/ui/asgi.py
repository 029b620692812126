"""Plain ASGI plumbing shared by the dashboard server's middlewares (``ui.preload``,
``ui.static_gzip``): both let Streamlit answer, then rework a whole response."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def header_map(message: Message) -> dict[bytes, bytes]:
    """A request scope's or a response start message's headers, names lower-cased."""
    return {k.lower(): v for k, v in message.get("headers") or []}


async def rework_response(app: ASGIApp, scope: Scope, receive: Receive, send: Send, wanted: Callable[[Message], bool],
                          finish: Callable[[Message, bytes], Awaitable[None]]) -> None:
    """Run ``app``. A response whose start message ``wanted`` accepts is collected whole and
    handed to ``finish(start, body)``, which sends what it makes of it; any other response
    passes through as it comes."""
    start: Message | None = None
    body: list[bytes] = []

    async def collect(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            if wanted(message):
                start = message
            else:
                await send(message)
            return
        if start is None or message["type"] != "http.response.body":
            await send(message)
            return
        body.append(message.get("body", b""))
        if not message.get("more_body"):
            await finish(start, b"".join(body))

    await app(scope, receive, collect)
