from __future__ import annotations

import pytest

from rag_eval.llm.compat import RequestShape, rejected_parameter


@pytest.mark.parametrize(
    ("message", "sent", "expected"),
    [
        ("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
         {"max_tokens", "temperature"}, "max_tokens"),
        ("Unsupported value: 'temperature' does not support 0 with this model.", {"max_tokens", "temperature"},
         "temperature"),
        ("'response_format' of type 'json_object' is not supported", {"response_format", "max_tokens"},
         "response_format"),
        ("model not found", {"max_tokens", "temperature"}, None),
        ("temperature out of range", {"max_tokens"}, None),  # not sent: not ours to drop
    ],
)
def test_rejected_parameter(message, sent, expected):
    assert rejected_parameter(message, sent) == expected


def test_shape_adapts_each_parameter_once():
    shape = RequestShape()
    body = shape.body("m", [], 0.0, 100, json_mode=True)
    assert body == {"model": "m", "messages": [], "max_tokens": 100, "temperature": 0.0,
                    "response_format": {"type": "json_object"}}
    assert shape.adapt("Use 'max_completion_tokens' instead of max_tokens", body)
    body = shape.body("m", [], 0.0, 100, json_mode=True)
    assert "max_completion_tokens" in body and "max_tokens" not in body
    assert shape.adapt("temperature unsupported", body) == "temperature dropped"
    body = shape.body("m", [], 0.0, 100, json_mode=True)
    assert shape.adapt("invalid request", body) == "JSON mode off"  # unexplained 400 with JSON mode on
    body = shape.body("m", [], 0.0, 100, json_mode=True)
    assert body == {"model": "m", "messages": [], "max_completion_tokens": 100}
    assert shape.adapt("invalid request", body) is None  # nothing left to adapt: a real error
