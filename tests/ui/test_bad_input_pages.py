"""Issue 46, items 5 and 7, on the pages (AppTest): a bad input file gets on Batch,
Datasets and Corpus the verdict the CLI and the API give it (``shape_issue``), said once,
before anything is created: a missing column is named with the names it is accepted
under and **Run** stays disabled (no run is stored); broken CSV quoting names its line
and says it is a quoting/format error; a 0-byte PDF says why it failed; a ``.csv`` on
Corpus says why it cannot be ingested."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from rag_eval.datasets.io import check_file
from rag_eval.datasets.schema import JUDGED_ROW_REQUIRED

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
MISSING = b"id,question,response\n1,What?,Yes\n2,Why?,No\n3,How?,So\n"
BROKEN = (b'id,question,documents,response\n1,How do I turn it on?,"[""Press power.""]",Press power\n'
          b'2,"Broken quote,"["Turn on"]",Hold it\n3,Ok?,"[""a""]",b\n')


def _verdict(tmp_path: Path, name: str, content: bytes) -> str:
    """What the CLI and the API say of the same file (``rag-eval judge`` exits 2 with it)."""
    path = tmp_path / name
    path.write_bytes(content)
    issue = check_file(path, JUDGED_ROW_REQUIRED)
    assert issue is not None
    return issue.reason.replace(str(path), name)


def _plain(elements) -> list[str]:
    """The messages as read (Markdown escapes dropped)."""
    return [e.value.replace("\\", "") for e in elements]


def _batch_upload(name: str, content: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("Upload a file (JSONL, CSV, Parquet)").run()
    at.file_uploader(key="batch.upload").set_value((name, content, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_batch_names_a_missing_column_once_and_stores_no_run(rag_eval_home, tmp_path):
    from rag_eval.runs.store import RunStore

    at = _batch_upload("missing.csv", MISSING)
    assert at.radio(key="batch.mode.Upload a file (JSONL, CSV, Parquet)").value == "Judge the given responses"
    errors = _plain(at.error)
    assert errors == [_verdict(tmp_path, "missing.csv", MISSING)], errors
    assert "missing column 'documents' (or contexts, retrieved_contexts, retrieval_context, documents_sentences)" in errors[0]
    assert not any("with problems" in w.value for w in at.warning)  # not once per row
    assert at.button(key="batch.run").disabled
    assert RunStore().list_runs() == []


def test_batch_says_broken_quoting_is_a_quoting_error_at_its_line(rag_eval_home, tmp_path):
    at = _batch_upload("broken.csv", BROKEN)
    errors = _plain(at.error)
    assert errors == [_verdict(tmp_path, "broken.csv", BROKEN)], errors
    assert errors[0].startswith("broken.csv: line 3: CSV quoting/format error")
    assert not any(b.key == "batch.run" for b in at.button)  # nothing to run


def test_datasets_gives_the_same_quoting_verdict(rag_eval_home, tmp_path):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/datasets.py").run()
    at.file_uploader(key="datasets.files.0").set_value([("broken.csv", BROKEN, "text/csv")]).run()
    at.button(key="datasets.import").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(_plain(at.error))
    assert "broken.csv: line 3: CSV quoting/format error" in shown, shown
    assert "valid list" not in shown


def test_corpus_says_why_a_file_fails_or_cannot_be_ingested(rag_eval_home):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/corpus.py").run()
    at.file_uploader(key="corpus.files").set_value([("questions.csv", MISSING, "text/csv")]).run()
    warnings = _plain(at.warning)
    assert any(w.startswith("questions.csv: .csv files cannot be ingested") and "Datasets" in w for w in warnings), warnings
    assert at.button(key="corpus.ingest").disabled
    at.file_uploader(key="corpus.files").set_value([("empty.pdf", b"", "application/pdf")]).run()
    at.text_input(key="corpus.target").set_value("empties").run()
    at.button(key="corpus.ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = _plain(at.warning)
    assert "empty.pdf: the file is empty" in warnings, warnings
