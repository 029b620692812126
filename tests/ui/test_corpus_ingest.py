"""Corpus page, file by file (AppTest): a mixed upload with one broken file ingests the
others, shows one status row per file with the reason for the failure (naming the
user's file, never a server path), and keeps the chunk browser for what was ingested,
with the sections of the PostgreSQL page as heading paths."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
DOCS = Path(__file__).resolve().parents[1] / "data" / "docs"


def test_a_mixed_upload_with_a_broken_file_ingests_the_others(rag_eval_home):
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/corpus.py").run()
    uploads = [(name, (DOCS / name).read_bytes(), kind) for name, kind in (
        ("sql-vacuum.html", "text/html"), ("local-project-installs.md", "text/markdown"),
        ("shared-mime-info-spec.pdf", "application/pdf"))]
    uploads.append(("truncated.pdf", (DOCS / "bzip2-manual.pdf").read_bytes()[:3000], "application/pdf"))
    at.file_uploader(key="corpus.files").set_value(uploads).run()
    at.text_input(key="corpus.target").set_value("mixed").run()
    at.button(key="corpus.ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]

    summary = [w.value for w in at.warning]
    assert any("4 file(s): 3 ingested" in w and "1 failed: truncated.pdf" in w for w in summary), summary
    files = next(d.value for d in at.dataframe if "status" in d.value.columns)
    status = dict(zip(files["file"], files["status"]))
    assert status == {"sql-vacuum.html": "ingested", "local-project-installs.md": "ingested",
                      "shared-mime-info-spec.pdf": "ingested", "truncated.pdf": "failed"}
    reasons = dict(zip(files["file"], files["reason"]))
    assert reasons["truncated.pdf"].startswith("not a readable PDF: the file is damaged or incomplete")
    assert at.selectbox(key="corpus.browse").value == "mixed"  # the browser shows what was just ingested
    assert str(rag_eval_home) not in " ".join(files["reason"]) + " ".join(summary)  # no server path
    assert all(n > 0 for n in files.set_index("file").drop("truncated.pdf")["chunks"])

    # The browser pages through the chunks in Qdrant's order (point ids: the upload's
    # folder is new each time, so which file comes first varies): read every page.
    pages, headings = 0, set()
    while True:
        browsed = at.dataframe[-1].value
        if "source_name" not in browsed.columns or pages > 40:
            break
        pages += 1
        assert {"sql-vacuum.html", "local-project-installs.md", "shared-mime-info-spec.pdf"} >= set(browsed["source_name"])
        headings |= set(browsed[browsed["source_name"] == "sql-vacuum.html"]["heading_path"])
        pages_shown = dict(zip(browsed["source_name"], browsed["page"]))  # a page where there is one, else nothing
        assert pages_shown.get("sql-vacuum.html", "") == "" and pages_shown.get("local-project-installs.md", "") == ""
        assert all(p.replace("–", "").isdigit() for n, p in pages_shown.items() if n.endswith(".pdf"))
        at.number_input(key="corpus.page_no").set_value(pages + 1).run()
        assert not at.exception
    assert pages > 1 and "VACUUM › Parameters" in headings, (pages, headings)


def test_a_collection_level_error_is_a_message_and_the_browser_stays(rag_eval_home, tmp_path):
    """A collection built with other chunking refuses the upload as a whole: one readable
    error, and the page (collections, chunk browser) is still there."""
    from rag_eval.rag.config import default_config
    from rag_eval.rag.ingest import ingest_paths

    note = tmp_path / "note.txt"
    note.write_text("The reset button is on the back of the router.", encoding="utf-8")
    ingest_paths([note], "notes", default_config().with_changes(**{"chunking.strategy": "document"}))
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/corpus.py").run()
    at.file_uploader(key="corpus.files").set_value([("other.txt", b"Hold it for five seconds.", "text/plain")]).run()
    at.text_input(key="corpus.target").set_value("notes").run()
    at.button(key="corpus.ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] and "chunking" in at.error[0].value
    assert any("reset button" in str(t) for t in at.dataframe[-1].value["text"])  # the browser is still there


def test_an_upload_where_every_file_fails_adds_no_collection(rag_eval_home):
    """No file yields a chunk: the summary says no collection was created, the collections
    table does not list an empty one, and the page stays usable."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/corpus.py").run()
    broken = ("truncated.pdf", (DOCS / "bzip2-manual.pdf").read_bytes()[:3000], "application/pdf")
    at.file_uploader(key="corpus.files").set_value([broken]).run()
    at.text_input(key="corpus.target").set_value("broken").run()
    at.button(key="corpus.ingest").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("collection 'broken' was not created" in w.value for w in at.warning), [w.value for w in at.warning]
    assert all("collection" not in d.value.columns or "broken" not in set(d.value["collection"]) for d in at.dataframe)
    assert any("No collection yet" in i.value for i in at.info)
