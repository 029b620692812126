"""A hostile OpenAI-compatible endpoint: it quotes the request's Authorization header
back in every place a reply can carry text.

Built on the real local server (harness/openai_server.py). ``echo_handler(server)``
returns a responder that cycles through :data:`MODES`, so a batch of requests meets
all of them: the header quoted in a normal 200 answer (a valid judge answer whose
explanations quote it), in a refusal, in tool-call arguments, in a streamed (SSE) body,
in an error body, and in a response header.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from typing import Any

from harness.fake_answers import answer, prompt_keys
from harness.openai_server import OpenAIServer, Reply

# Fake, not shaped like any real provider key (PREAMBLE: never a real-looking key).
ECHO_KEY = "test-key-not-real-7c41e9d0"
MODES = ("content", "refusal", "tool_call", "stream", "error", "header")


def _auth(server: OpenAIServer) -> str:
    with server._lock:
        headers = server.headers[-1] if server.headers else {}
    return headers.get("authorization", "")


def _answer_text(body: dict[str, Any], auth: str) -> str:
    """A judge answer quoting the header when the request is a judge prompt, else prose."""
    try:
        prompt_keys(body)
    except (IndexError, KeyError, StopIteration):
        return f"The answer is in the manual. (debug: Authorization: {auth}; raw key {auth.split()[-1]})"
    value = answer(body)
    value["relevance_explanation"] = f"echo Authorization: {auth}"
    value["overall_supported_explanation"] = f"key was {auth.split()[-1]}"
    return json.dumps(value)


def echo_reply(body: dict[str, Any], auth: str, mode: str) -> Reply:
    key = auth.split()[-1] if auth else ""
    text = _answer_text(body, auth)
    if mode == "content":
        return Reply(content=text)
    if mode == "refusal":
        return Reply(content=None, refusal=f"I will not repeat {auth} or {key}.")
    if mode == "tool_call":
        completion = {
            "id": "chatcmpl-echo", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": text,
                "tool_calls": [{"id": "call_1", "type": "function",
                                "function": {"name": "log", "arguments": json.dumps({"authorization": auth})}}],
            }}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
        return Reply(body=completion)
    if mode == "stream":
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": f"{text} {key}"}, "finish_reason": None}]}
        return Reply(body=f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n")
    if mode == "error":
        return Reply.error(400, f"invalid request for key {key} (Authorization: {auth})")
    if mode == "header":
        return Reply(content=text, headers={"X-Debug-Authorization": auth, "X-Key": key})
    raise ValueError(mode)


def echo_handler(server: OpenAIServer, modes: tuple[str, ...] = MODES) -> Callable[[dict[str, Any]], Reply]:
    """A responder for ``server.set_handler``: each request gets the next mode."""
    cycle = itertools.cycle(modes)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            mode = next(cycle)
        return echo_reply(body, _auth(server), mode)

    return respond
