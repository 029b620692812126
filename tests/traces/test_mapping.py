"""The mapping from spans to rows, on hand-made and hostile traces (no server needed):
every trace ends as a row with a status, broken ones never reach a judge as a scoreable row."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from rag_eval.io.rows import RowError
from rag_eval.runs.prepare import prepare_row
from rag_eval.traces.files import otlp_id, read_otlp_file
from rag_eval.traces.importer import import_files
from rag_eval.traces.mapping import MappingConfig, TraceStatus, key_path, map_trace
from rag_eval.traces.spans import Span, flatten

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TRACE = "0af7651916cd43dd8448eb211c80319c"


def span(span_id: str, parent: str | None, kind: str, offset: float = 0.0, **attributes) -> Span:
    return Span(TRACE, span_id, parent, name=kind.lower(), kind=kind, start=T0 + timedelta(seconds=offset),
                end=T0 + timedelta(seconds=offset + 1), attributes={"openinference.span.kind": kind, **attributes})


def docs(prefix: str, texts: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for i, text in enumerate(texts):
        out[f"{prefix}.{i}.document.content"] = text
        out[f"{prefix}.{i}.document.id"] = f"d{i}"
        out[f"{prefix}.{i}.document.score"] = 1.0 - i / 10
    return out


def chain(**root_attrs) -> list[Span]:
    return [
        span("a" * 16, None, "CHAIN", 0, **{"input.value": "What is APT?", "output.value": "APT installs packages.",
                                           **root_attrs}),
        span("b" * 16, "a" * 16, "RETRIEVER", 0.1, **docs("retrieval.documents", ["APT installs packages.", "x"])),
        span("c" * 16, "a" * 16, "LLM", 0.2, **{"llm.model_name": "m", "llm.token_count.prompt": 10,
                                                "llm.token_count.completion": 5}),
    ]


def judged_as(row: dict) -> str:
    """What every judge entry point makes of the row: 'ok' (scoreable) or the error."""
    prepared = prepare_row(row, 1, "rows.jsonl")
    return "ok" if prepared.item is not None else str(prepared.error)


def test_a_full_chain_is_a_scoreable_row_with_its_trace_metadata():
    mapped = map_trace(chain(**{"session.id": "s1", "user.id": "u1"}))
    row = mapped.row
    assert mapped.status is TraceStatus.OK
    assert (row["id"], row["question"], row["response"]) == (TRACE, "What is APT?", "APT installs packages.")
    assert row["documents"] == ["APT installs packages.", "x"]
    trace = row["metadata"]["trace"]
    assert trace["span_id"] == "a" * 16 and trace["span_ids"]["retriever"] == ["b" * 16]
    assert trace["model_name"] == "m" and trace["tokens"] == {"prompt": 10, "completion": 5, "total": 15}
    assert trace["latency_s"] == 1.0 and trace["start_time"].startswith("2026-01-01")
    assert (trace["session_id"], trace["user_id"]) == ("s1", "u1")
    assert [d["id"] for d in trace["documents"]] == ["d0", "d1"]
    assert judged_as(row) == "ok"


def test_reranker_output_documents_win():
    spans = chain()
    spans.append(span("d" * 16, "a" * 16, "RERANKER", 0.15, **docs("reranker.output_documents", ["reranked"])))
    assert map_trace(spans).row["documents"] == ["reranked"]


def test_without_root_input_and_output_the_last_llm_messages_decide():
    spans = chain()
    spans[0].attributes.pop("input.value")
    spans[0].attributes.pop("output.value")
    spans[2].attributes.update({"llm.input_messages.0.message.role": "system",
                                "llm.input_messages.0.message.content": "be brief",
                                "llm.input_messages.1.message.role": "user",
                                "llm.input_messages.1.message.content": "What is APT, really?",
                                "llm.output_messages.0.message.role": "assistant",
                                "llm.output_messages.0.message.content": "A package manager."})
    row = map_trace(spans).row
    assert (row["question"], row["response"]) == ("What is APT, really?", "A package manager.")
    assert row["metadata"]["trace"]["question_from"].startswith("llm.input_messages")


@pytest.mark.parametrize(("value", "key", "expected"), [
    (json.dumps({"query": "Q?", "k": 3}), None, "Q?"),
    (json.dumps({"messages": [{"content": "first"}, {"content": "last"}]}), "messages.-1.content", "last"),
    (json.dumps("plain string"), None, "plain string"),
])
def test_json_input_is_read_at_a_key_path(value, key, expected):
    spans = chain(**{"input.value": value, "input.mime_type": "application/json"})
    mapped = map_trace(spans, MappingConfig(question_key=key))
    assert mapped.status is TraceStatus.OK and mapped.row["question"] == expected


def test_key_path_reports_a_missing_key():
    with pytest.raises(KeyError):
        key_path({"a": [1]}, "a.5")


@pytest.mark.parametrize(("mutate", "status", "reason_has"), [
    (lambda s: s[0].attributes.update({"input.value": '{"query": "unterminated', "input.mime_type": "application/json"}),
     TraceStatus.UNPARSEABLE_VALUE, "invalid JSON"),
    (lambda s: s[0].attributes.update({"input.value": '{"other": 1}', "input.mime_type": "application/json"}),
     TraceStatus.UNPARSEABLE_VALUE, "key path"),
    (lambda s: s[0].attributes.pop("output.value"), TraceStatus.NO_ANSWER, "output.value"),
    (lambda s: s[0].attributes.pop("input.value"), TraceStatus.NO_QUESTION, "input.value"),
    (lambda s: s.pop(1), TraceStatus.NO_RETRIEVER, "RETRIEVER"),
    (lambda s: s[1].attributes.clear() or s[1].attributes.update({"openinference.span.kind": "RETRIEVER"}),
     TraceStatus.NO_DOCUMENTS, "no document"),
    (lambda s: setattr(s[0], "parent_id", "f" * 16), TraceStatus.ORPHAN_PARENTS, "ffffffffffffffff"),
    (lambda s: (setattr(s[0], "parent_id", "c" * 16), setattr(s[2], "parent_id", "b" * 16),
                setattr(s[1], "parent_id", "a" * 16)), TraceStatus.CYCLIC_PARENTS, "loop"),
    (lambda s: setattr(s[1], "parent_id", s[1].span_id), TraceStatus.CYCLIC_PARENTS, "loop"),
    (lambda s: setattr(s[0], "end", None), TraceStatus.TRUNCATED, "no end time"),
    (lambda s: setattr(s[1], "dropped_attributes", 3), TraceStatus.TRUNCATED, "dropped 3"),
])
def test_every_broken_trace_is_kept_with_a_status_and_never_scored(mutate, status, reason_has):
    spans = chain()
    mutate(spans)
    mapped = map_trace(spans)
    assert mapped.status is status
    assert reason_has in (mapped.reason or "")
    trace = mapped.row["metadata"]["trace"]
    assert (trace["status"], trace["reason"]) == (status.value, mapped.reason)
    assert "response" not in mapped.row
    assert judged_as(mapped.row) != "ok"  # every judge path stores it as invalid_input
    # a trace still arriving (root missing or not ended) is not remembered as imported
    has_root = trace["span_id"] is not None
    assert mapped.complete == (has_root and status is not TraceStatus.ORPHAN_PARENTS
                               and "no end time" not in (mapped.reason or ""))


def test_an_empty_trace_list_and_missing_attributes_do_not_raise():
    bare = [Span(TRACE, "a" * 16, None, start=T0, end=T0)]
    mapped = map_trace(bare)
    assert mapped.status is TraceStatus.NO_QUESTION
    assert map_trace([Span(TRACE, "a" * 16, None)]).status is TraceStatus.TRUNCATED  # no end time
    assert {p["status"] for p in mapped.row["metadata"]["trace"]["problems"]} >= {"no_question", "no_answer",
                                                                                  "no_retriever"}


def test_ten_thousand_documents_and_huge_texts_are_cut_by_configuration_and_recorded():
    spans = chain()
    spans[1].attributes = {"openinference.span.kind": "RETRIEVER",
                           **docs("retrieval.documents", [f"doc {i} " + "x" * (50_000 if i == 0 else 10)
                                                          for i in range(10_000)])}
    config = MappingConfig(max_documents_per_span=50, max_documents=20, max_document_chars=1_000)
    mapped = map_trace(spans, config)
    assert mapped.status is TraceStatus.OK
    assert len(mapped.row["documents"]) == 20 and len(mapped.row["documents"][0]) == 1_000
    cuts = mapped.row["metadata"]["trace"]["cuts"]
    assert {"kept": 50, "total": 10_000, "unit": "documents"}.items() <= cuts[0].items()
    assert any(c["field"] == "documents" and c["kept"] == 20 for c in cuts)
    assert any(c["unit"] == "chars" and c["total"] == 50_006 for c in cuts)
    with pytest.raises(ValueError):
        MappingConfig(max_documents=0)


def test_html_and_markdown_stay_text():
    text = "<script>alert(1)</script> **bold** [x](javascript:alert(1))"
    spans = chain(**{"input.value": text})
    spans[1].attributes["retrieval.documents.0.document.content"] = text
    row = map_trace(spans).row
    assert row["question"] == text and row["documents"][0] == text


def test_trulens_spans_map_to_the_same_row():
    attrs = {"ai.observability.span_type": "record_root", "ai.observability.record_root.input": "What is APT?",
             "ai.observability.record_root.output": "APT installs packages.", "ai.observability.app_name": "app",
             "ai.observability.app_version": "v2"}
    spans = [Span(TRACE, "a" * 16, None, start=T0, end=T0 + timedelta(seconds=1), attributes=attrs),
             Span(TRACE, "b" * 16, "a" * 16, start=T0, end=T0, attributes={
                 "ai.observability.span_type": "retrieval", "ai.observability.retrieval.query_text": "What is APT?",
                 "ai.observability.retrieval.retrieved_contexts": ["APT installs packages.", "x"]})]
    trulens = map_trace(spans, source="trulens").row
    openinference = map_trace(chain()).row
    for field in ("id", "question", "response", "documents"):
        assert trulens[field] == openinference[field]
    assert trulens["metadata"]["trace"]["app_version"] == "v2"


def test_flatten_makes_phoenix_nesting_and_otlp_keys_alike():
    nested = {"retrieval": {"documents": [{"document": {"content": "t", "id": "1"}}]}, "tag": {"tags": ["a", "b"]}}
    assert flatten(nested) == {"retrieval.documents.0.document.content": "t", "retrieval.documents.0.document.id": "1",
                               "tag.tags": ["a", "b"]}


def _otlp_line(spans: list[dict]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]})


def _otlp_span(span_id: str, parent: str, attrs: dict) -> dict:
    def value(v):
        if isinstance(v, str):
            return {"stringValue": v}
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"traceId": TRACE, "spanId": span_id, "parentSpanId": parent, "name": "s", "kind": 1,
            "startTimeUnixNano": "1767225600000000000", "endTimeUnixNano": "1767225601000000000",
            "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()]}


def test_otlp_file_lines_read_and_bad_lines_are_reported(tmp_path):
    spans = chain()
    lines = [_otlp_line([_otlp_span(s.span_id, s.parent_id or "", s.attributes) for s in spans[:2]]),
             "{not json", "[1, 2]", "",
             _otlp_line([_otlp_span(spans[2].span_id, spans[2].parent_id or "", spans[2].attributes)])]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = import_files([path])
    assert result.summary.counts == {"ok": 1}
    assert [p.split(": ", 1)[1] for p in result.summary.problems] == [
        "row 2: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
        "row 3: not an ExportTraceServiceRequest (no resourceSpans)"]
    row = result.rows[0]
    expected = map_trace(spans).row
    assert (row["question"], row["response"], row["documents"]) == (expected["question"], expected["response"],
                                                                    expected["documents"])
    assert row["metadata"]["trace"]["tokens"] == {"prompt": 10, "completion": 5, "total": 15}


def test_otlp_ids_in_hex_or_base64():
    assert otlp_id("CvdlGRbNQ92ESOshHIAxnA==") == TRACE
    assert otlp_id(TRACE.upper()) == TRACE
    assert otlp_id("") is None and otlp_id("0000000000000000") is None
    problems: list[RowError] = []
    assert list(read_otlp_file(__file__, problems)) == [] and problems  # not OTLP: reported, nothing raised


def test_trulens_spans_in_an_otlp_file_import_to_the_same_row(tmp_path):
    root = _otlp_span("a" * 16, "", {"ai.observability.span_type": "record_root",
                                     "ai.observability.record_root.input": "What is APT?",
                                     "ai.observability.record_root.output": "APT installs packages."})
    retrieval = _otlp_span("b" * 16, "a" * 16, {"ai.observability.span_type": "retrieval",
                                               "ai.observability.retrieval.retrieved_contexts":
                                                   ["APT installs packages.", "x"],
                                               "ai.observability.retrieval.retrieved_scores": [0.9, 0.1]})
    path = tmp_path / "trulens.jsonl"
    path.write_text(_otlp_line([root, retrieval]) + "\n", encoding="utf-8")
    result = import_files([path])
    row = result.rows[0]
    expected = map_trace(chain()).row
    assert (row["id"], row["question"], row["response"], row["documents"]) == (
        expected["id"], expected["question"], expected["response"], expected["documents"])
    assert row["metadata"]["trace"]["source"] == "trulens"
    assert [d["score"] for d in row["metadata"]["trace"]["documents"]] == [0.9, 0.1]
