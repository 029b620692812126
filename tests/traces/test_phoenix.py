"""A traced application's spans in a real Phoenix server, end to end: import (paged, then
incremental), the same rows from the OTLP JSON and parquet files, judged with the local judge as
a stored run, annotated back and read through Phoenix's API (twice: updated, never duplicated)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pytest

from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.runs.store import RunStore
from rag_eval.traces.phoenix import PhoenixClient
from tests.traces.conftest import PAGING_TRACES, PROJECT, export_parquet, rag_eval, run_traced_app, wait_for_traces

IDS_PER_QUERY = 100  # span ids per annotations query


def span_annotations(client: PhoenixClient, project: str, span_ids) -> list[dict]:
    """Every annotation on ``span_ids``, read back through Phoenix's REST API (queried in
    groups, paged): what ``rag-eval traces annotate`` wrote."""
    ids = list(dict.fromkeys(span_ids))
    out: list[dict] = []
    for i in range(0, len(ids), IDS_PER_QUERY):
        cursor = None
        while True:
            params: list[tuple[str, str | int]] = [("span_ids", s) for s in ids[i:i + IDS_PER_QUERY]]
            params.append(("limit", 1000))
            if cursor:
                params.append(("cursor", cursor))
            body = client._request("GET", f"/v1/projects/{quote(project, safe='')}/span_annotations",
                                   params=params) or {}
            out.extend(body.get("data") or [])
            cursor = body.get("next_cursor")
            if not cursor:
                break
    return out

APP_KINDS = {"chain", "no_retriever", "json_input", "llm_fallback", "bad_json"}
PAGE_SIZE = 100  # spans a page: the paging traces fill a dozen


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _comparable(row: dict) -> dict:
    """A row without what depends on where it was read from (source, project, Phoenix address)."""
    out = json.loads(json.dumps(row))
    for key in ("source", "project", "url"):
        out["metadata"]["trace"].pop(key, None)
    out["metadata"].pop("question_source", None)
    return out


@pytest.fixture(scope="module")
def imported(phoenix_server, traced, tmp_path_factory) -> dict:
    """The project imported through the CLI, paged (100 spans a page)."""
    work = tmp_path_factory.mktemp("imported")
    out, state = work / "rows.jsonl", work / "state.json"
    done = rag_eval("traces", "import", "--phoenix", phoenix_server.url, "--project", PROJECT, "--out", str(out),
                    "--state", str(state), "--page-size", str(PAGE_SIZE))
    assert done.returncode == 0, done.stderr
    return {"rows": _rows(out), "stdout": done.stdout, "state": state, "work": work, "path": out}


def test_every_trace_is_imported_through_the_pages_with_its_status(imported, traced):
    rows = {r["id"]: r for r in imported["rows"]}
    assert set(rows) == set(traced.kinds)
    assert len(rows) == len(traced.kinds) >= PAGING_TRACES + len(APP_KINDS)
    pages = int(imported["stdout"].split(" span(s) in ")[1].split(" page")[0])
    assert pages >= 2 * PAGING_TRACES // PAGE_SIZE  # 1,200+ spans at 100 a page: the cursor was followed to the end
    expected = {"chain": "ok", "json_input": "ok", "llm_fallback": "ok", "paging": "ok",
                "no_retriever": "no_retriever", "bad_json": "unparseable_value"}
    for trace_id, kind in traced.kinds.items():
        assert rows[trace_id]["metadata"]["trace"]["status"] == expected[kind], (kind, rows[trace_id])
    assert f"{len(rows) - 2} ok, 1 no_retriever, 1 unparseable_value" in imported["stdout"]


def test_rows_carry_question_answer_documents_and_trace_facts(imported, traced):
    rows = {r["id"]: r for r in imported["rows"]}
    by_kind: dict[str, list[dict]] = {}
    for trace_id, kind in traced.kinds.items():
        by_kind.setdefault(kind, []).append(rows[trace_id])
    chain = next(r for r in by_kind["chain"] if r["question"] == "What does APT do?")
    assert chain["response"] == "APT is the package manager of Debian."
    assert len(chain["documents"]) == 2  # the reranker's output documents, not the retriever's three
    trace = chain["metadata"]["trace"]
    assert trace["model_name"] == "test-model" and trace["tokens"]["total"] > 0
    assert trace["session_id"] in {"session-0", "session-1"} and trace["user_id"] == "user-7"
    assert trace["latency_s"] > 0 and trace["start_time"] and trace["end_time"]
    assert trace["span_ids"]["reranker"] and trace["span_ids"]["retriever"] and trace["span_ids"]["llm"]
    assert trace["documents"][0]["metadata"] == {"source": trace["documents"][0]["id"] + ".txt"}
    assert trace["app_metadata"] == {"release": "v1"}
    assert by_kind["json_input"][0]["question"] == "What does APT do?"
    fallback = by_kind["llm_fallback"][0]
    assert fallback["question"].startswith("Context:") and fallback["response"].startswith("dpkg")
    html = next(r for r in by_kind["chain"] if "<script>" in r["question"])
    assert html["question"] == "Is <script> markup run?"  # kept as text, never interpreted


def test_otlp_json_and_parquet_files_import_to_the_same_rows(imported, traced, phoenix_server, tmp_path):
    parquet = tmp_path / "spans.parquet"
    export_parquet(phoenix_server, PROJECT, parquet)
    from_phoenix = {r["id"]: _comparable(r) for r in imported["rows"]}
    for path in (traced.otlp_file, parquet):
        out = tmp_path / f"{path.suffix[1:]}.jsonl"
        done = rag_eval("traces", "import", str(path), "--out", str(out))
        assert done.returncode == 0, done.stderr
        rows = {r["id"]: _comparable(r) for r in _rows(out)}
        assert rows.keys() == from_phoenix.keys()
        different = [k for k in rows if rows[k] != from_phoenix[k]]
        assert not different, (path.suffix, rows[different[0]], from_phoenix[different[0]])


def test_incremental_import_takes_only_new_traces(imported, phoenix_server, tmp_path):
    again = tmp_path / "again.jsonl"
    args = ["traces", "import", "--phoenix", phoenix_server.url, "--project", PROJECT, "--state", str(imported["state"])]
    done = rag_eval(*args, "--out", str(again))
    assert done.returncode == 0, done.stderr
    assert _rows(again) == []
    from harness.openai_server import start_server

    server = start_server()
    try:
        new = run_traced_app(phoenix_server, server.base_url, tmp_path / "new.jsonl", PROJECT, 0)
    finally:
        server.stop()
    wait_for_traces(phoenix_server, PROJECT, len(imported["rows"]) + len(new.kinds))
    done = rag_eval(*args, "--out", str(again))
    assert done.returncode == 0, done.stderr
    assert {r["id"] for r in _rows(again)} == set(new.kinds)
    window = rag_eval("traces", "import", "--phoenix", phoenix_server.url, "--project", PROJECT, "--all",
                      "--state", str(tmp_path / "s.json"), "--until", "2000-01-01T00:00:00Z", "--out",
                      str(tmp_path / "none.jsonl"))
    assert window.returncode == 0 and _rows(tmp_path / "none.jsonl") == []


def test_judged_as_a_run_and_annotated_back_idempotently(imported, traced, phoenix_server, tmp_path):
    """The app's traces and a few paging ones: `run --judge-only` with the local judge, then
    `traces annotate` twice; Phoenix holds one annotation per trace and metric, equal to the run."""
    rows = imported["rows"]
    keep = [r for r in rows if traced.kinds[r["id"]] != "paging"] + \
        [r for r in rows if traced.kinds[r["id"]] == "paging"][:3]
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(r) + "\n" for r in keep), encoding="utf-8")
    db = tmp_path / "runs.sqlite"
    done = rag_eval("run", str(subset), "--judge-only", "--db", str(db), "--name", "traced")
    # the two incomplete traces are invalid_input: the run exits 1 (failed items), every row is stored
    assert done.returncode == 1, done.stderr
    store = RunStore(str(db))
    run_id = store.resolve_run_id("traced")
    records = {r["id"]: r for r in store.items(run_id)}
    assert records.keys() == {r["id"] for r in keep}
    statuses = Counter(r["status"] for r in records.values())
    assert statuses == {"ok": len(keep) - 2, "invalid_input": 2}
    for item_id, record in records.items():
        if record["status"] != "ok":
            assert record["scores"] is None  # never a 0
            assert traced.kinds[item_id] in {"no_retriever", "bad_json"}
    # the run works unchanged everywhere a run is read: show, report
    shown = rag_eval("runs", "show", run_id, "--db", str(db))
    assert shown.returncode == 0 and f"statuses: invalid_input=2, ok={len(keep) - 2}" in shown.stdout, shown.stderr
    report = tmp_path / "report.html"
    assert rag_eval("report", run_id, "--db", str(db), "--out", str(report)).returncode == 0
    assert report.stat().st_size > 0
    for _ in range(2):
        done = rag_eval("traces", "annotate", run_id, "--phoenix", phoenix_server.url, "--db", str(db))
        assert done.returncode == 0, done.stderr
    span_of = {r["id"]: r["metadata"]["trace"]["span_id"] for r in keep}
    with PhoenixClient(phoenix_server.url) as client:  # Phoenix's own API, read back
        annotations = span_annotations(client, PROJECT, span_of.values())
    per = Counter((a["span_id"], a["name"]) for a in annotations)
    assert set(per.values()) == {1}  # annotating twice updated, never duplicated
    by_key = {(a["span_id"], a["name"]): a for a in annotations}
    for item_id, record in records.items():
        span_id = span_of[item_id]
        status = by_key[(span_id, "rag_eval.status")]
        assert status["result"]["label"] == record["status"]
        if record["status"] != "ok":
            assert "trace " in status["result"]["explanation"]
            assert not any((span_id, f"rag_eval.{m}") in by_key for m in TRACE_METRICS)
            continue
        for metric in TRACE_METRICS:
            annotation = by_key[(span_id, f"rag_eval.{metric}")]
            assert annotation["annotator_kind"] == "CODE"  # the local judge
            assert annotation["result"]["score"] == pytest.approx(record["scores"][metric])
        adherence = by_key[(span_id, "rag_eval.adherence")]["result"]
        assert adherence["label"] == ("supported" if record["scores"]["adherence_score"] else "unsupported")


def test_datasets_page_imports_from_the_phoenix_server(phoenix_server, traced, rag_eval_home):
    from streamlit.testing.v1 import AppTest

    from tests.traces.test_pages import APP, _ok

    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/datasets.py").run()
    at.text_input(key="datasets.phoenix_url").input(phoenix_server.url).run()
    at.text_input(key="datasets.phoenix_project").input(PROJECT).run()
    at.text_input(key="datasets.trace_name").input("from-phoenix").run()
    at.button(key="datasets.import_traces").click().run()
    _ok(at)
    rows = _rows(rag_eval_home / "datasets" / "from-phoenix.jsonl")
    assert {r["id"] for r in rows} >= set(traced.kinds)
    assert all(r["metadata"]["trace"]["url"].startswith(phoenix_server.url + "/redirects/traces/") for r in rows)
    at.text_input(key="datasets.phoenix_url").input("file:///etc/passwd").run()
    at.button(key="datasets.import_traces").click().run()
    assert "http:// or https://" in at.error[0].value.replace("\u2060", "")  # md() breaks autolinks with a word joiner
