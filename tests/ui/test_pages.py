"""Every dashboard page driven by Streamlit's AppTest, and the full offline flow."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag_eval.ui.constants import ALL_PAGES, APP_TITLE
from tests.ui.page_steps import batch_of_sample, no_failure
from tests.ui.settings_steps import choose_allowed_llm

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return at


def test_main_page_shows_title_and_status():
    at = _app()
    no_failure(at)
    assert at.title[0].value == APP_TITLE
    labels = {m.label for m in at.metric}
    assert {"Judge", "Generator", "Stored runs", "Vector store", "Adherence"} <= labels


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_renders_without_error(page, demo_home):
    at = _app()
    at.switch_page(page).run()
    no_failure(at)
    assert at.title, f"{page} has no title"


def test_support_map_shows_labelled_sample_on_first_visit():
    at = _app()
    at.switch_page("pages/support_map.py").run()
    no_failure(at)
    assert {m.label for m in at.metric} >= {"Context relevance", "Adherence"}
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "sm-documents" in html and "sm-response" in html
    at.selectbox(key="support_map.sample").select(1).run()  # a non-adherent row
    no_failure(at)
    assert any(m.label == "Adherence" and m.value.startswith("no") for m in at.metric)


def _run_batch(at: AppTest, rows: int, retrieval: str) -> None:
    """Start a batch on the demo questions and wait for its background job."""
    at.switch_page("pages/batch.py").run()
    no_failure(at)
    at.number_input(key="batch.limit").set_value(rows).run()
    at.selectbox(key="batch.retrieval_mode").select(retrieval).run()
    at.button(key="batch.run").click().run()
    no_failure(at)
    job = at.session_state["batch.job"]
    job.wait(timeout=600)
    assert job.error is None, job.error
    at.run()  # the job fragment sees the finished job and shows the results
    no_failure(at)


def test_full_offline_flow(dashboard_backend, demo_home, local_judge_ready):
    """Ask on the demo collection -> support map -> two small batches -> Runs -> Compare."""
    at = _app()
    at.switch_page("pages/ask.py").run()
    no_failure(at)
    at.selectbox(key="ask.example").select_index(1).run()
    at.button(key="ask.ask").click().run()
    no_failure(at)
    labels = {m.label for m in at.metric}
    assert {"Context relevance", "Context utilization", "Completeness", "Adherence"} <= labels
    assert any("judge **local:" in c.value for c in at.caption)
    assert any("auto (dense) top-" in c.value for c in at.caption)  # what auto runs as on this collection
    assert any("hallucination AUROC" in c.value and "triage" in c.value for c in at.caption)
    assert at.dataframe, "the retrieved chunks table is missing"
    retrieved = at.dataframe[0].value
    assert {"source", "title", "section", "page"} <= set(retrieved.columns) and "doc_id" not in retrieved.columns
    assert not any(str(s).startswith("/") for s in retrieved["source"])  # the file's name, not a server path
    assert any("Extractive answer" in c.value for c in at.caption)

    at.button(key="ask.open_map").click().run()
    no_failure(at)
    assert at.title[0].value == "Sentence support map"
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "sm-documents" in html and "How do I" in html

    _run_batch(at, rows=3, retrieval="dense")
    first = at.session_state["batch.run_id"]
    assert any("Coverage:" in c.value for c in at.caption)
    results = at.dataframe[-1].value
    assert len(results) == 3 and set(results["status"]) <= {"ok", "repaired", "parse_error", "invalid_input"}
    at.button(key="batch.open").click().run()
    no_failure(at)
    assert at.title[0].value == "Sentence support map"

    _run_batch(at, rows=3, retrieval="bm25")
    second = at.session_state["batch.run_id"]
    assert second != first

    at.switch_page("pages/runs.py").run()
    no_failure(at)
    runs_table = at.dataframe[0].value
    assert {first, second} <= set(runs_table["id"])

    at.switch_page("pages/compare.py").run()
    no_failure(at)
    assert set(at.multiselect(key="compare.runs").value) == {first, second}
    assert len(at.dataframe) >= 2  # metrics/costs tables
    at.button(key="compare.open_pair").click().run()
    no_failure(at)
    assert at.title[0].value == "Sentence support map"
    assert len(at.get("html")) >= 2  # both support maps side by side


def test_batch_judges_labelled_sample_with_truth_and_runs_shows_agreement(dashboard_backend, local_judge_ready):
    at = _app()
    batch_of_sample(at, 4)
    at.switch_page("pages/runs.py").run()
    no_failure(at)
    at.session_state["runs.view"] = "Agreement with ground truth"
    at.run()
    no_failure(at)
    statistics = set()
    for frame in at.dataframe:
        if "statistic" in frame.value.columns:
            statistics |= set(frame.value["statistic"])
    assert {"rmse:context_relevance", "aggregated_rmse", "consistency"} <= statistics
    # the seed's RMSE bands, the diagnosis and the report download for the selected run
    at.session_state["runs.view"] = "One run"
    at.run()
    no_failure(at)
    # the per-row spread of the four metrics, named for what it measures (never a quality verdict)
    spread = {m.label.split(" (")[0] for m in at.metric}
    assert {"Even", "Slightly uneven", "Uneven", "Very uneven"} <= spread
    assert not {"Excellent", "Good", "Acceptable", "Poor"} & spread
    assert any("Diagnosis" in m.value for m in at.markdown)
    assert at.get("download_button"), "no Download report button"
    from rag_eval.ui.diagnosis_view import report_bytes  # what the button sends, from the configured store

    assert b"<html" in report_bytes(at.session_state["batch.run_id"])[:500].lower()


def test_a_failing_page_shows_a_message_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_EVAL_DB", str(tmp_path))  # a directory: SQLite cannot open it
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123456")
    at = _app()
    at.switch_page("pages/runs.py").run()
    assert not at.exception
    assert at.error and "Traceback" not in at.error[0].value
    assert "sk-test-secret-123456" not in " ".join(e.value for e in at.error)


def test_settings_show_key_presence_never_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-abcdef")
    at = _app()
    at.switch_page("pages/settings.py").run()
    no_failure(at)
    text = " ".join(str(m.value) for m in at.markdown) + " ".join(str(c.value) for c in at.code)
    assert "present" in text and "sk-test-secret-abcdef" not in text
    at.radio(key="settings.provider").set_value("openai")
    at.button[0].click().run()  # the form's submit button sends the form's values
    no_failure(at)
    assert "llm" in " ".join(str(c.value) for c in at.code)


def test_llm_judge_is_one_setting_away(openai_server, monkeypatch, demo_home):
    """Settings -> OpenAI-compatible provider (the local test server) -> Ask uses the LLM judge."""
    from harness.fake_answers import answer_text

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-ask-999")
    # A server secret puts the dashboard in deployment mode: the owner allows the endpoint and model.
    monkeypatch.setenv("RAG_EVAL_ALLOWED_BASE_URLS", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_ALLOWED_MODELS", "test-model")
    openai_server.set_handler(lambda body: answer_text(body))
    at = _app()
    choose_allowed_llm(at, openai_server.base_url)
    no_failure(at)
    at.switch_page("pages/ask.py").run()
    at.selectbox(key="ask.example").select_index(2).run()
    at.button(key="ask.ask").click().run()
    no_failure(at)
    assert any("judge **llm:test-model" in c.value for c in at.caption)
    assert openai_server.request_count >= 1
    page_text = " ".join(str(e.value) for e in (*at.markdown, *at.caption, *at.text))
    assert "sk-test-secret-ask-999" not in page_text


def test_batch_validates_rows_and_names_the_bad_ones(demo_home):
    datasets = demo_home / "datasets"
    datasets.mkdir()
    rows = [
        '{"id": "good", "question": "What is X?", "answer": "X is a cat.", "contexts": ["X is a cat."]}',
        '{"id": "no-question", "answer": "X is a cat.", "contexts": ["X is a cat."]}',
        '{"id": "bad-contexts", "question": "What is Y?", "answer": "Y.", "contexts": [1, 2]}',
        '{not json',
    ]
    (datasets / "mixed.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    at = _app()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("A saved dataset (Datasets page)").run()
    at.radio(key="batch.mode.A saved dataset (Datasets page)").set_value("Judge the given responses").run()
    no_failure(at)
    problems = at.dataframe[0].value
    assert list(problems["row"]) == [2, 3, 4]
    text = " ".join(problems["problem"])
    assert "field 'question'" in text and "field 'contexts[0]'" in text and "mixed" in text
    assert any("1 of 4" in m.value for m in at.markdown)


def test_datasets_page_lists_and_opens_a_saved_dataset(rag_eval_home):
    datasets = rag_eval_home / "datasets"
    datasets.mkdir()
    (datasets / "golden.jsonl").write_text(
        '{"id": "q1", "question": "How do I reset?", "reference_answers": ["Hold the button."], '
        '"provenance": "synthetic"}\n', encoding="utf-8")
    at = _app()
    at.switch_page("pages/datasets.py").run()
    no_failure(at)
    assert at.selectbox(key="datasets.browse").value == "golden"
    at.multiselect(key="datasets.accept.golden").set_value(["q1"]).run()
    at.button(key="datasets.save").click().run()
    no_failure(at)
    assert '"synthetic-reviewed"' in (datasets / "golden.jsonl").read_text(encoding="utf-8")


def test_an_unreachable_provider_loses_no_row(dashboard_backend, demo_home, monkeypatch):
    """Every row of a batch against an unreachable LLM ends with an explicit failure
    status and a reason; none is scored, the coverage says so."""
    monkeypatch.setenv("RAG_EVAL_DEPLOYMENT", "local")  # a free Base URL field, whatever the machine's env holds
    at = _app()
    at.switch_page("pages/settings.py").run()
    at.radio(key="settings.provider").set_value("openai")
    at.text_input(key="settings.base_url").set_value("http://127.0.0.1:9/v1")  # nothing listens on port 9
    at.button[0].click().run()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("RAGBench labelled sample (judge the given responses)").run()
    at.number_input(key="batch.limit").set_value(2).run()
    at.button(key="batch.run").click().run()
    job = at.session_state["batch.job"]
    job.wait(timeout=300)
    at.run()
    assert not at.exception and job.error is None
    results = at.dataframe[-1].value
    assert len(results) == 2 and set(results["status"]) <= {"provider_error", "timeout"}
    assert results["error"].notna().all()
    assert any("Coverage: **0/2**" in c.value for c in at.caption)


def test_a_saved_configuration_can_be_picked(demo_home):
    from rag_eval.rag.config import default_config

    (demo_home / "configs").mkdir()
    saved = default_config("k2").with_changes(**{"retrieval.k": 2, "chunking.size": 1000})
    saved.to_yaml(demo_home / "configs" / "k2.yaml")
    at = _app()
    at.switch_page("pages/ask.py").run()
    assert "k2.yaml" in at.selectbox(key="ask.config").options
    at.selectbox(key="ask.config").select("k2.yaml").run()
    no_failure(at)
    at.number_input(key="ask.k").set_value(2).run()
    assert any(f"`{saved.config_hash}`" in c.value for c in at.caption)


def test_corpus_upload_ingest_and_browse():
    at = _app()
    at.switch_page("pages/corpus.py").run()
    no_failure(at)
    text = b"The reset button is on the back. Hold it for five seconds to restore factory settings."
    at.file_uploader(key="corpus.files").set_value([("manual.txt", text, "text/plain")]).run()
    at.text_input(key="corpus.target").set_value("notes").run()
    at.button(key="corpus.ingest").click().run()
    no_failure(at)
    assert any("1 documents added" in s.value for s in at.success)
    collections = at.dataframe[0].value
    assert "notes" in set(collections["collection"]) and int(collections.set_index("collection").loc["notes", "chunks"]) >= 1
    assert any("reset button" in str(t) for t in at.dataframe[-1].value["text"])
    browsed = at.dataframe[-1].value
    assert set(browsed["source_name"]) == {"manual.txt"} and "source" not in browsed.columns  # no server path


def test_corpus_warns_when_a_local_mode_collection_passes_its_size(rag_eval_home, monkeypatch):
    """Local mode (RAG_EVAL_EMBEDDED_STORE=local) searches by brute force: past its size the
    Corpus page says so and names the way out, as the CLI does on stderr."""
    from rag_eval.rag import store

    monkeypatch.setenv("RAG_EVAL_EMBEDDED_STORE", "local")
    monkeypatch.setattr(store, "LOCAL_MODE_SLOW_POINTS", 0)  # any chunk is past it
    at = _app()
    at.switch_page("pages/corpus.py").run()
    text = b"The reset button is on the back. Hold it for five seconds. The light then blinks twice."
    at.file_uploader(key="corpus.files").set_value([("manual.txt", text, "text/plain")]).run()
    at.text_input(key="corpus.target").set_value("slow").run()
    at.button(key="corpus.ingest").click().run()
    no_failure(at)
    warnings = [w.value for w in at.warning]
    assert any("**slow**" in w and "QDRANT_URL" in w for w in warnings), warnings


def test_batch_upload_csv_of_plain_rows(demo_home):
    csv = (b'id,question,answer,contexts\n'
           b'r1,What is X?,X is a cat.,"[""X is a cat. It purrs.""]"\n'
           b'r2,,No question here.,"[""Something.""]"\n')
    at = _app()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("Upload a file (JSONL, CSV, Parquet)").run()
    at.file_uploader(key="batch.upload").set_value(("plain.csv", csv, "text/csv")).run()
    no_failure(at)
    assert at.radio(key="batch.mode.Upload a file (JSONL, CSV, Parquet)").value == "Judge the given responses"
    problems = at.dataframe[0].value
    assert list(problems["row"]) == [3] and "plain.csv: row 3, field 'question'" in problems["problem"][0]
