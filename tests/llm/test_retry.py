"""The pure retry policy, by tables."""

from __future__ import annotations

import email.utils

import pytest

from rag_eval.llm.constants import INITIAL_RETRY_DELAY_S, MAX_RETRY_DELAY_S, RETRY_AFTER_CAP_S
from rag_eval.llm.retry import backoff_delay, parse_retry_after, should_retry


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        (None, None),
        ({"Retry-After": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # ms wins (OpenAI sends both)
        ({"Retry-After": "-3"}, None),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": ""}, None),
    ],
)
def test_parse_retry_after(headers, expected):
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date():
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(30.0, abs=1.0)


@pytest.mark.parametrize(
    ("attempt", "retry_after", "rng", "expected"),
    [
        (0, None, 0.0, INITIAL_RETRY_DELAY_S),
        (1, None, 0.0, INITIAL_RETRY_DELAY_S * 2),
        (3, None, 0.0, INITIAL_RETRY_DELAY_S * 8),
        (0, None, 1.0, INITIAL_RETRY_DELAY_S * 0.75),  # full jitter takes off 25%
        (30, None, 0.0, MAX_RETRY_DELAY_S),  # capped
        (0, 2.0, 0.5, 2.0),  # Retry-After honoured exactly
        (4, 0.0, 0.5, 0.0),
        (0, RETRY_AFTER_CAP_S + 1, 0.0, INITIAL_RETRY_DELAY_S),  # absurd Retry-After ignored
    ],
)
def test_backoff_delay(attempt, retry_after, rng, expected):
    assert backoff_delay(attempt, retry_after, rng=lambda: rng) == pytest.approx(expected)


def test_backoff_delay_rejects_negative_attempt():
    with pytest.raises(ValueError, match="attempt"):
        backoff_delay(-1)


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (None, None, True),  # connection failure / timeout
        (429, None, True),
        (500, None, True),
        (502, None, True),
        (503, None, True),
        (408, None, True),
        (400, None, False),
        (401, None, False),
        (404, None, False),
        (400, {"x-should-retry": "true"}, True),
        (503, {"X-Should-Retry": "false"}, False),
    ],
)
def test_should_retry(status, headers, expected):
    assert should_retry(status, headers) is expected
