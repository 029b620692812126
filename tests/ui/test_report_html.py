"""``rag-eval report``: one self-contained HTML file from real stored runs (the local judge
over the committed RAGBench rows, plus a row whose document is hostile HTML), every
section present, user text escaped; opened offline in headless Chromium."""

from __future__ import annotations

import base64
import re
import subprocess
import time

import pytest
from click.testing import CliRunner

from harness import browser
from harness.runs import judge_dataset
from rag_eval.cli import cli
from rag_eval.metrics.report_fields import REPORT_FIELDS
from rag_eval.rag.config import default_config
from rag_eval.report.html import SECTIONS, build_report
from rag_eval.runs.export import export_rows
from rag_eval.runs.store import RunStore
from rag_eval.runs.summary import gate_inputs, summarize_records
from rag_eval.ui.frames import items_frame

HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"
OUTPUT = browser.PROJECT_ROOT / "test-output"


def _hostile_row(row: dict) -> dict:
    return {"id": "hostile<b>", "question": "What does <b>this</b> page say?",
            "documents": [f"The page says hello. {HOSTILE} It ends here."], "response": "The page says hello."}


@pytest.fixture
def stored_runs(tmp_path, ragbench_rows):
    pytest.importorskip("rag_eval.judges.local")
    from rag_eval.judges.factory import build_judge

    judge = build_judge("local")
    store = RunStore(tmp_path / "runs.sqlite")
    rows = [(i + 1, r) for i, r in enumerate([*ragbench_rows[:8], _hostile_row(ragbench_rows[0])])]
    rows.append((10, {"id": "broken", "question": "no documents here"}))
    first = judge_dataset(rows, default_config(), store, judge, name="<i>baseline</i>", dataset_path="rows.jsonl")
    second = judge_dataset(rows[:6], default_config(), store, judge, name="subset")
    return store, first, second


def test_report_has_every_section_and_escapes_user_text(stored_runs, tmp_path):
    store, first, second = stored_runs
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", first, second, "--out", str(out), "--db", str(store.path), "--worst", "10"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    for section in SECTIONS:
        assert f'<section id="{section}">' in text
    # plotly is inlined, nothing is fetched
    assert "plotly.js v" in text and not re.search(r"<script[^>]+src=", text)
    assert "cdn.plot.ly" not in text.split("</script>", 1)[1]
    # user text renders as text
    i = text.find(HOSTILE)
    assert i < 0, text[i - 400:i + 100]
    assert "window.__pwned = 1" in text and "&lt;script&gt;window.__pwned" in text
    assert "<i>baseline</i>" not in text and "&lt;i&gt;baseline&lt;/i&gt;" in text
    assert "hostile&lt;b&gt;" in text
    # agreement with RAGBench truth, consistency reading, diagnosis, comparison, worst rows and the failed row
    assert "RMSE context_relevance" in text and "consistency" in text
    assert "Paired differences" in text and "broken" in text and "invalid_input" in text
    assert "rmse_aggregation" in text and "excellent" in text  # the consistency score's reading
    # the per-row spread is named for what it measures, never read as a verdict on the pipeline
    assert "Metric spread per row" in text and "very uneven" in text and "review the RAG pipeline" not in text
    worst = text[text.index('<section id="worst-rows">'):]
    worst = worst[:worst.index("</section>")]
    assert worst.count("<details") >= 10 and "<details open" not in worst  # collapsed: one line per row
    # every run's means carry the judge's expected error (the local judge: its leave-one-domain-out figures)
    assert text.count("expected judge error ±") >= 2 and "leave one domain out" in text

    # one run: nothing to compare, and the truth-less subset run still has its sections
    single = build_report([store.get_run(second)], {second: store.items(second)}, worst=1)
    assert "pass several runs to compare" in single and "No ground truth" not in single

    # the same stored items carry the seed's report fields in the export and the dashboard table,
    # and give the CI gate its inputs
    items = store.items(first)
    exported = export_rows(store.get_run(first), items)
    table = items_frame(items)
    for name in REPORT_FIELDS:
        assert name in exported[0] and name in table.columns
    assert exported[-1]["average"] is None and exported[-1]["status"] == "invalid_input"
    scored = [r for r in exported if r["average"] is not None]
    assert all(r["fully_supported_sentences"] + r["partially_supported_sentences"] + r["unsupported_sentences"] >= 1
               for r in scored)
    stats, cases = gate_inputs(summarize_records(items, first))
    assert {"context_relevance", "adherence_score", "average"} <= set(stats)
    assert stats["average"].n == 9 and len(cases) == 10
    assert [c.id for c in cases if not c.usable] == ["broken"]


@pytest.mark.browser
def test_report_opens_offline_in_headless_chromium(stored_runs, tmp_path):
    binary = browser.find_chromium()
    if binary is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    store, first, second = stored_runs
    report = tmp_path / "report.html"
    CliRunner().invoke(cli, ["report", first, second, "--out", str(report), "--db", str(store.path), "--worst", "10"],
                       catch_exceptions=False)
    # every host resolves to nothing and every request goes to a dead proxy: no network
    offline = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
               f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000", "--hide-scrollbars"]
    dom = subprocess.run([*offline, "--dump-dom", report.as_uri()], check=False, capture_output=True, text=True,
                         timeout=180).stdout
    for section in SECTIONS:
        assert f'<section id="{section}">' in dom
    assert dom.count('class="main-svg"') >= 4  # plotly drew the charts from the inlined script
    assert "<img src=\"x\"" not in dom and "window.__pwned = 1" in dom
    shot = OUTPUT / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*offline, "--window-size=1300,5200", f"--screenshot={shot}", report.as_uri()],
                   check=False, capture_output=True, timeout=180)
    assert shot.is_file() and shot.stat().st_size > 50_000


# Every table's right edge against its section's (px), and the page's scroll width.
TABLES_INSIDE_JS = """(() => {
  const out = [];
  for (const t of document.querySelectorAll('section table')) {
    const s = t.closest('section').getBoundingClientRect(), r = t.getBoundingClientRect();
    out.push([t.closest('section').id, Math.round(r.right - s.right), t.scrollWidth > t.clientWidth]);
  }
  return {tables: out, page: document.documentElement.scrollWidth};
})()"""


@pytest.mark.browser
def test_wide_tables_scroll_inside_their_section_at_1280px(stored_runs, tmp_path):
    """Runs with many metrics: the metrics table scrolls inside its section at 1280 px (no
    table runs past its section, the page never scrolls sideways)."""
    if browser.find_chromium() is None:
        pytest.skip("no chromium binary on PATH: install Debian's 'chromium' (make browser-deps) or set CHROMIUM")
    store, first, second = stored_runs
    runs = [store.get_run(first), store.get_run(second)]
    items = {r["id"]: store.items(r["id"]) for r in runs}
    extra = ["answer_similarity", "answer_words", "doc_count", "exact_match", "politeness", "rouge_l", "token_f1"]
    for run_items in items.values():  # as a run with answer-match, text and plugin metrics stores them
        for item in run_items:
            item["metrics"] = {name: 0.5 for name in extra}
    report = tmp_path / "wide.html"
    report.write_text(build_report(runs, items, worst=3), encoding="utf-8")
    with browser.chromium_tab() as tools:
        tools.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        tools.call("Page.navigate", url=report.as_uri())
        found: dict = {}
        for _ in range(600):
            found = tools.evaluate(TABLES_INSIDE_JS) or {}
            if found.get("tables"):
                break
            time.sleep(0.05)
        shot = tools.call("Page.captureScreenshot", format="png")["data"]
    OUTPUT.mkdir(parents=True, exist_ok=True)
    (OUTPUT / "report-1280.png").write_bytes(base64.b64decode(shot))
    assert found["page"] <= 1280, found
    assert all(overhang <= 0 for _, overhang, _ in found["tables"]), found
    assert any(section == "metrics" and scrolls for section, _, scrolls in found["tables"]), found  # it scrolls


def test_a_run_with_a_diagnosis_finding_gets_its_report():
    """The diagnosis row ids of a finding once overwrote the list of shown metric families:
    a report of runs whose rows show a pattern raised AttributeError."""
    scores = {"context_relevance": 0.9, "context_utilization": 0.05, "completeness": 0.1, "adherence": True,
              "adherence_score": 0.9}
    items = [{"id": f"q{i}", "status": "ok", "question": "q?", "scores": scores} for i in range(3)]
    runs = [{"id": "run-a", "name": "a"}, {"id": "run-b", "name": "b"}]
    html = build_report(runs, {"run-a": items, "run-b": items}, worst=1)
    assert "High relevance, low utilization" in html and "q0, q1, q2" in html and "Context relevance" in html
