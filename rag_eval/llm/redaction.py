"""Redaction at the boundary: what a provider sends back never carries a secret inward.

A proxy, a logging gateway or a model may quote the request's ``Authorization`` header
in a normal reply, a refusal, tool-call arguments, a streamed chunk, an error body or a
header. :func:`redact_text` replaces every configured secret (and its JSON-escaped
form) and any ``Bearer <token>`` echo; :func:`redact_value` does so in every string of
a decoded JSON value. The client applies both to the raw body before it is parsed, so
nothing downstream (parsing, cache, run store, CLI output, the page) ever sees a key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

MASK = "***"
# "Bearer sk-…", "Basic dXNlcjpw…", "token ghp_…" as echoed by gateways (8+ token characters).
_AUTH_ECHO = re.compile(r"(?i)\b(bearer|basic|token)(\s*[:=]?\s+)[A-Za-z0-9._~+/=-]{8,}")


def _forms(secret: str) -> list[str]:
    """The secret as it may appear in a body: raw, JSON-escaped, \\u-escaped."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=True)[1:-1]}
    forms.add("".join(f"\\u{ord(c):04x}" for c in secret))
    return sorted(forms, key=len, reverse=True)


def redact_text(text: str, secrets: Sequence[str]) -> str:
    """``text`` without any of ``secrets`` (any form) nor any bearer-looking token."""
    if not text:
        return text
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        for form in _forms(secret):
            if form in text:
                text = text.replace(form, MASK)
    return _AUTH_ECHO.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def redact_value(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (decoded JSON) with :func:`redact_text` applied to every string, keys included."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {redact_text(str(k), secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    return value

