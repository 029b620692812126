"""Traces through the dashboard: imported on the Datasets page (a trace file), judged on the
Batch page like any rows file, incomplete traces stored with their status, never scored."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from rag_eval.runs.store import RunStore
from tests.traces.test_mapping import _otlp_line, _otlp_span, chain

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def otlp_bytes() -> bytes:
    """Two traces: a whole chain, and one without a retriever (another trace id)."""
    spans = chain()
    whole = [_otlp_span(s.span_id, s.parent_id or "", s.attributes) for s in spans]
    lonely = _otlp_span("e" * 16, "", {"openinference.span.kind": "CHAIN", "input.value": "<b>Hi</b>",
                                       "output.value": "Hello."})
    lonely["traceId"] = "1" * 32
    return (_otlp_line(whole) + "\n" + _otlp_line([lonely]) + "\n").encode("utf-8")


def test_datasets_page_imports_a_trace_file_with_a_status_per_trace(rag_eval_home):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/datasets.py").run()
    _ok(at)
    at.file_uploader(key="datasets.trace_files").set_value(("spans.jsonl", otlp_bytes(), "application/json")).run()
    at.text_input(key="datasets.trace_name").input("traced").run()
    at.button(key="datasets.import_traces").click().run()
    _ok(at)
    saved = rag_eval_home / "datasets" / "traced.jsonl"
    rows = {r["id"]: r for r in map(json.loads, saved.read_text(encoding="utf-8").splitlines())}
    assert {r["metadata"]["trace"]["status"] for r in rows.values()} == {"ok", "no_retriever"}
    assert rows["1" * 32]["question"] == "<b>Hi</b>"  # markup kept as text
    counts = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert dict(zip(counts["status"], counts["traces"])) == {"no_retriever": 1, "ok": 1}
    assert "Saved 2 traces as 'traced': 1 ready to judge" in at.success[0].value


def test_batch_page_judges_imported_trace_rows_like_any_rows(rag_eval_home, tmp_path):
    from rag_eval.traces.importer import import_files

    spans = tmp_path / "spans.jsonl"
    spans.write_bytes(otlp_bytes())
    rows = import_files([spans]).rows
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("Upload a file (JSONL, CSV, Parquet)").run()
    data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
    at.file_uploader(key="batch.upload").set_value(("traces.jsonl", data, "application/json")).run()
    _ok(at)
    at.radio(key="batch.mode.Upload a file (JSONL, CSV, Parquet)").set_value("Judge the given responses").run()
    _ok(at)
    at.button(key="batch.run").click().run()
    _ok(at)
    job = at.session_state["batch.job"]
    job.wait(timeout=600)
    assert job.error is None, job.error
    at.run()
    _ok(at)
    items = {i["id"]: i for i in RunStore().items(str(at.session_state["batch.run_id"]))}
    assert items[rows[0]["id"]]["status"] == "ok" and items[rows[0]["id"]]["scores"]["adherence"] is not None
    assert items["1" * 32]["status"] == "invalid_input" and items["1" * 32]["scores"] is None
