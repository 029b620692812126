"""Hostile and awkward inputs on the dashboard: Markdown in names and ids renders as
text, an empty upload says so, a non-UTF-8 CSV keeps its good rows, a golden import of
several files reads all of them, messages name the user's file (not the server path),
and invalid-JSON messages read correctly."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from rag_eval.io.rows import read_rows
from rag_eval.runs.store import RunStore
from rag_eval.ui.markdown import escape_markdown

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
HOSTILE = "![t](http://host/x.png)"
MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _html(text: str) -> str:
    return MD.render(text)


def _markdown_bodies(at: AppTest) -> list[str]:
    kinds = ("markdown", "caption", "title", "header", "subheader", "error", "warning", "info", "success")
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return at


@pytest.mark.parametrize("text", [HOSTILE, "[x](javascript:alert(1))", "<img src=x onerror=alert(1)>",
                                  "# heading", "**bold** _it_ `code` :red[x] $x$", "a\nb"])
def test_escaped_markdown_renders_as_the_same_text(text):
    html = _html(escape_markdown(text))
    assert "<img" not in html and "<a " not in html and "<strong" not in html and "<h1" not in html
    assert "<code" not in html and "<em" not in html


def test_run_names_and_row_ids_render_as_text(rag_eval_home):
    store = RunStore()
    run_id = store.create_run({"name": "x"}, name=HOSTILE, n_items=1)
    store.add_items(run_id, [{"id": HOSTILE, "status": "invalid_input", "error": "no question",
                            "question": HOSTILE, "position": 0}])
    store.finish_run(run_id)
    at = _app()
    at.switch_page("pages/batch.py")
    at.session_state["batch.run_id"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    bodies = _markdown_bodies(at)
    assert any("Results" in b for b in bodies)
    for body in bodies:
        assert "<img" not in _html(body), body
    at.button(key="batch.open").click().run()  # the row's support map: its title holds name and id
    assert not at.exception, [e.value for e in at.exception]
    bodies = _markdown_bodies(at)
    assert any("x.png" in b for b in bodies)  # the title is shown, as text
    for body in bodies:
        assert "<img" not in _html(body), body


def test_an_empty_upload_in_batch_says_so(rag_eval_home):
    at = _app()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("Upload a file (JSONL, CSV, Parquet)").run()
    at.file_uploader(key="batch.upload").set_value(("empty.csv", b"", "text/csv")).run()
    assert not at.exception
    assert any("empty.csv: no rows (the file is empty or holds only a header)" in e.value for e in at.error)
    assert not any("Choose a dataset or upload" in i.value for i in at.info)


def test_batch_messages_name_the_users_file(rag_eval_home):
    at = _app()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("Upload a file (JSONL, CSV, Parquet)").run()
    content = b'{"id": "a", "question": "What?", "answer": "X.", "contexts": ["X."]}\n{"id": "b", "question": "unterminated\n'
    at.file_uploader(key="batch.upload").set_value(("mine.jsonl", content, "application/json")).run()
    assert not at.exception
    problems = " ".join(at.dataframe[0].value["problem"])
    assert "mine.jsonl: row 2" in problems and str(rag_eval_home) not in problems


def _import(at: AppTest, kind: str, files: list[tuple[str, bytes, str]], name: str) -> None:
    at.switch_page("pages/datasets.py").run()
    at.selectbox(key="datasets.kind").select(kind).run()
    uploader = next(u for u in at.get("file_uploader") if u.key.startswith("datasets.files"))
    uploader.set_value(files).run()
    at.text_input(key="datasets.save_name").set_value(name).run()
    at.button(key="datasets.import").click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_non_utf8_csv_keeps_its_good_rows_and_names_the_users_file(rag_eval_home):
    latin = (b'id,question,answer,contexts\nr1,What is X?,X is a cat.,"[""X is a cat.""]"\n'
             b'r2,Caf\xe9 open?,Yes.,"[""It is open.""]"\nr3,What is Y?,Y.,"[""Y.""]"\n')
    at = _app()
    _import(at, "csv", [("latin.csv", latin, "text/csv")], "latin")
    (outcome,) = [m.value for m in (*at.success, *at.warning, *at.error)]  # one outcome message
    assert outcome.startswith("Saved 2 rows as 'latin'; left out 1 row: latin.csv: row 3") and "not valid UTF-8" in outcome
    issues = at.dataframe[0].value
    assert list(issues["file"]) == ["latin.csv"] and "not valid UTF-8" in issues["message"][0]
    page = " ".join(_markdown_bodies(at)) + issues.to_string()
    assert str(rag_eval_home) not in page and "uploads" not in page


def test_golden_import_of_several_files_reads_all(rag_eval_home):
    one = b'{"id": "a", "question": "What is A?"}\n{"id": "b", "question": "What is B?"}\n'
    two = b'{"id": "c", "question": "What is C?"}\n{"id": "a", "question": "A again?"}\n'
    at = _app()
    _import(at, "golden", [("one.jsonl", one, "application/json"), ("two.jsonl", two, "application/json")], "gold")
    (outcome,) = [m.value for m in (*at.success, *at.warning, *at.error)]  # one outcome message
    assert outcome.startswith("Saved 3 rows as 'gold'; left out 1 row: two.jsonl: row 2, field 'id': duplicate id 'a'")
    issues = at.dataframe[0].value
    assert list(issues["file"]) == ["two.jsonl"] and "duplicate id 'a'" in issues["message"][0]


def test_an_upload_ends_with_one_message_that_agrees_with_itself(rag_eval_home):
    """Every row left out: one message saying nothing was saved and why (the missing column,
    named once for the file, with the columns found), never 'left out, the rest kept' beside
    'nothing was saved'; the issues table holds the file-level issue, not one per row."""
    wrong = b"prompt,reply\nWhat is A?,A.\nWhat is B?,B.\n"
    for kind, missing in (("golden", "missing column 'question'; found: prompt, reply"),
                          ("csv", "missing column 'question' (or query, user_input, q); found: prompt, reply"),
                          ("ragbench", "missing columns 'id' and 'question'; found: prompt, reply")):
        at = _app()
        _import(at, kind, [("wrong.csv", wrong, "text/csv")], "wrong")
        messages = [m.value for m in (*at.success, *at.warning, *at.error)]
        assert messages == [escape_markdown(f"Nothing was saved: left out 1 file: wrong.csv: {missing}.")], kind
        issues = at.dataframe[0].value
        assert list(issues["row"]) == [0] and list(issues["message"]) == [missing]
    assert not (rag_eval_home / "datasets" / "wrong.jsonl").exists()


def test_invalid_json_message_has_no_double_at(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "1", "question": "q"}\n{"id": "2", "question": "cut\n', encoding="utf-8")
    (error,) = read_rows(path)[1]
    assert "at at" not in str(error) and "Unterminated string starting at column" in str(error)


def test_saved_dataset_problems_name_the_file_not_its_path(rag_eval_home):
    folder = rag_eval_home / "datasets"
    folder.mkdir()
    (folder / "bad.jsonl").write_text('{"id": "a", "question": "What?"}\n{not json\n', encoding="utf-8")
    at = _app()
    at.switch_page("pages/batch.py").run()
    at.radio(key="batch.source").set_value("A saved dataset (Datasets page)").run()
    assert not at.exception
    problems = " ".join(at.dataframe[0].value["problem"])
    assert "bad.jsonl: row 2" in problems and str(rag_eval_home) not in problems


def test_corpus_problems_name_the_users_file(rag_eval_home):
    at = _app()
    at.switch_page("pages/corpus.py").run()
    at.file_uploader(key="corpus.files").set_value([("good.txt", b"Cats sleep a lot.", "text/plain"),
                                                    ("broken.pdf", b"%PDF-1.4 not really", "application/pdf")]).run()
    at.text_input(key="corpus.target").set_value("mixed").run()
    at.button(key="corpus.ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(w.value for w in at.warning)
    assert "broken.pdf" in warnings and str(rag_eval_home) not in warnings


def test_deployed_corpus_hides_server_paths(rag_eval_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-paths-1")  # deployment mode
    at = _app()
    at.switch_page("pages/corpus.py").run()
    at.file_uploader(key="corpus.files").set_value([("manual.txt", b"Hold reset for five seconds.", "text/plain")]).run()
    at.text_input(key="corpus.target").set_value("notes").run()
    at.button(key="corpus.ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    sources = " ".join(map(str, at.dataframe[-1].value["source_name"]))
    assert "manual.txt" in sources and str(rag_eval_home) not in sources
