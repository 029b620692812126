"""Typed failures of the LLM client.

``LLMError > APIError > {StatusError > RateLimitError/ServerError,
ConnectionError > TimeoutError}``; ``CancelledRequest`` and ``ConfigError`` are
``LLMError`` too. Messages never contain the API key (the client redacts them).
"""

from __future__ import annotations


class LLMError(Exception):
    """Any failure of an LLM call. ``retries`` is how many retries were spent."""

    def __init__(self, message: str, *, retries: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.retries = retries


class ConfigError(LLMError):
    """The client cannot be used as configured (e.g. no API key for a hosted provider)."""


class CancelledRequest(LLMError):
    """The caller cancelled the batch before this request was sent."""


class APIError(LLMError):
    """The provider could not give an answer."""


class StatusError(APIError):
    """The provider answered with an HTTP error status."""

    def __init__(self, message: str, *, status_code: int, retries: int = 0) -> None:
        super().__init__(message, retries=retries)
        self.status_code = status_code


class RateLimitError(StatusError):
    """HTTP 429 after all retries."""


class ServerError(StatusError):
    """HTTP 5xx after all retries."""


class ConnectionError(APIError):  # noqa: A001 - deliberate, mirrors openai's naming
    """The connection failed or was dropped before a full answer arrived."""


class TimeoutError(ConnectionError):  # noqa: A001
    """No answer within the per-request timeout."""


def status_error(message: str, status_code: int, retries: int = 0) -> StatusError:
    """The most specific :class:`StatusError` for ``status_code``."""
    if status_code == 429:
        return RateLimitError(message, status_code=status_code, retries=retries)
    if status_code >= 500:
        return ServerError(message, status_code=status_code, retries=retries)
    return StatusError(message, status_code=status_code, retries=retries)
