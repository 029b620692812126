"""Provider differences learnt from their refusals, not from a model list.

OpenAI-compatible servers disagree on a few optional parameters: reasoning models
reject ``max_tokens`` (they want ``max_completion_tokens``) and a fixed
``temperature``; some local servers reject ``response_format``. Instead of a
hard-coded table that goes stale, the client sends the common form and, when a 400
names one of these parameters, switches that one parameter for the rest of the
session and resends (without spending a retry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Parameter -> words that identify it in a provider's 400 message.
_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("max_tokens", ("max_tokens", "max_completion_tokens")),
    ("temperature", ("temperature",)),
    ("response_format", ("response_format", "json_object", "json mode", "json_mode")),
    ("logprobs", ("logprobs", "top_logprobs", "log probabilities")),
)


def rejected_parameter(message: str, sent: set[str]) -> str | None:
    """Which optional parameter (one of ``sent``) a 400 message complains about."""
    text = message.lower()
    for name, words in _MARKERS:
        if name in sent and any(w in text for w in words):
            return name
    return None


@dataclass(slots=True)
class RequestShape:
    """How this endpoint wants the optional parameters (starts with the common form)."""

    token_field: str = "max_tokens"
    send_temperature: bool = True
    json_mode: bool = True
    logprobs: bool = True  # token log-probabilities (asked for only by callers that use them)

    def body(self, model: str, messages: list[Any], temperature: float, max_tokens: int, json_mode: bool,
             top_logprobs: int = 0) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages, self.token_field: max_tokens}
        if self.send_temperature:
            body["temperature"] = temperature
        if json_mode and self.json_mode:
            body["response_format"] = {"type": "json_object"}
        if top_logprobs and self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = top_logprobs
        return body

    def adapt(self, message: str, body: dict[str, Any]) -> str | None:
        """Change the shape after a 400 about ``body``; returns what changed (None:
        nothing to adapt, the error is real)."""
        sent = set(body)
        param = rejected_parameter(message, sent)
        if param == "max_tokens" and self.token_field == "max_tokens":
            self.token_field = "max_completion_tokens"
            return "max_tokens -> max_completion_tokens"
        if param == "temperature" and self.send_temperature:
            self.send_temperature = False
            return "temperature dropped"
        if param == "logprobs" and self.logprobs:
            self.logprobs = False
            return "log-probabilities off"
        if param == "response_format" or (param is None and "response_format" in sent):
            self.json_mode = False
            return "JSON mode off"
        return None
