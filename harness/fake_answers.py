"""Judge answers for the local test server, built from the prompt it receives.

The server only sees the request JSON, so these helpers read the sentence keys
back out of the prompt (lines ``0a: "..."`` and ``a: "..."`` inside the fences) and
write a valid RAGBench-schema answer for them. Used by judge tests and bench/.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DOC_LINE = re.compile(r"^(\d+[a-z]+): ", re.M)
_RESP_LINE = re.compile(r"^([a-z]+): ", re.M)


def prompt_keys(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(document keys, response keys) of the first user message of a judge request."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    docs_part = user.split("Documents (one sentence per key):", 1)[1].split("Response (one sentence per key):", 1)[0]
    resp_part = user.split("Response (one sentence per key):", 1)[1]
    return _DOC_LINE.findall(docs_part), _RESP_LINE.findall(resp_part)


def answer(body: dict[str, Any], *, unsupported: tuple[str, ...] = (), extra_keys: tuple[str, ...] = (),
           overall: bool | None = None) -> dict[str, Any]:
    """A valid judgement: the first document sentence relevant and utilized, every
    response sentence supported by it except ``unsupported``; ``extra_keys`` are
    appended to the relevant keys (to simulate hallucinated keys)."""
    doc_keys, resp_keys = prompt_keys(body)
    first = doc_keys[:1]
    support = [
        {"response_sentence_key": k, "explanation": "x", "supporting_sentence_keys": first,
         "fully_supported": k not in unsupported}
        for k in resp_keys
    ]
    return {
        "relevance_explanation": "the first sentence answers it",
        "all_relevant_sentence_keys": first + list(extra_keys),
        "overall_supported_explanation": "checked",
        "overall_supported": (not any(k in unsupported for k in resp_keys)) if overall is None else overall,
        "sentence_support_information": support,
        "all_utilized_sentence_keys": first,
    }


def answer_text(body: dict[str, Any], **kw: Any) -> str:
    return json.dumps(answer(body, **kw))
