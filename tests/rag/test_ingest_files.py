"""Ingest file by file: in a mixed batch (HTML, Markdown, PDF and a broken file) every
file gets its own status, one failure never stops the others, and the reason is one a
user can act on. Through ``rag-eval ingest`` (CliRunner) and the library.

The HTML extractor's missing dependency (the failure users met) is reproduced for real
by removing trafilatura from ``sys.modules``: importing it then raises ImportError, as
on an install without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.rag.config import default_config
from rag_eval.rag.ingest import FAILED, INGESTED, UNCHANGED, ingest_paths
from tests.rag.fixture_docs import DOCS, docs_folder

MIXED = ["sql-vacuum.html", "local-project-installs.md", "shared-mime-info-spec.pdf"]


@pytest.fixture
def mixed(tmp_path) -> Path:
    """The three real documents and a PDF cut short (its first 3,000 bytes)."""
    folder = docs_folder(tmp_path / "upload", MIXED)
    (folder / "truncated.pdf").write_bytes((DOCS / "bzip2-manual.pdf").read_bytes()[:3000])
    return folder


def _rows(output: str) -> dict[str, list[str]]:
    rows = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0] not in ("file",):
            rows[cells[0]] = cells[1:]
    return rows


def test_cli_ingests_every_good_file_and_names_the_broken_one(mixed):
    runner = CliRunner()
    args = ["ingest", str(mixed), "--collection", "mixed", "--chunking", "document"]
    first = runner.invoke(cli, args)
    assert first.exit_code == 1, first.output
    rows = _rows(first.output)
    assert {name: cells[0] for name, cells in rows.items()} == {
        "local-project-installs.md": INGESTED, "shared-mime-info-spec.pdf": INGESTED, "sql-vacuum.html": INGESTED,
        "truncated.pdf": FAILED}
    assert rows["sql-vacuum.html"][1] == "1"  # its chunks
    assert "4 file(s): 3 ingested (3 chunks), 0 unchanged (skipped), 1 failed: truncated.pdf" in first.output
    assert "truncated.pdf: not a readable PDF: the file is damaged or incomplete" in first.output
    assert "1 of 4 file(s) could not be ingested: truncated.pdf" in first.output

    (mixed / "truncated.pdf").unlink()
    again = runner.invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert {cells[0] for cells in _rows(again.output).values()} == {UNCHANGED}
    assert "3 file(s): 0 ingested (0 chunks), 3 unchanged (skipped), 0 failed" in again.output


def test_a_missing_extractor_fails_its_files_only(mixed, monkeypatch):
    (mixed / "truncated.pdf").unlink()
    (mixed / "local-project-installs.md").write_text("# Notes\n\nA changed note.\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # as on an install without trafilatura
    report = ingest_paths([mixed], "partial", default_config().with_changes(**{"chunking.strategy": "document"}))
    status = {Path(f.path).name: f for f in report.files}
    assert status["sql-vacuum.html"].status == FAILED
    assert "needs the Python package 'trafilatura', which is not installed" in status["sql-vacuum.html"].error
    assert status["local-project-installs.md"].status == INGESTED and status["local-project-installs.md"].chunks == 1
    assert status["shared-mime-info-spec.pdf"].status == INGESTED
    assert report.summary() == "3 file(s): 2 ingested (2 chunks), 0 unchanged (skipped), 1 failed: sql-vacuum.html"


def test_nothing_to_ingest_is_a_usage_error(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(cli, ["ingest", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(cli, ["ingest", str(tmp_path / "empty")])
    assert empty.exit_code == 2 and "no supported files" in empty.output


def test_an_ingest_where_every_file_fails_creates_no_collection(mixed, tmp_path):
    """No file yields a chunk: the report says so and no empty collection appears in the lists
    (the CLI's and the library's); a later good file creates it."""
    from rag_eval.rag.store import list_collections

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "truncated.pdf").write_bytes((DOCS / "bzip2-manual.pdf").read_bytes()[:3000])
    (broken / "empty.md").write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(broken), "--collection", "nothing"])
    assert result.exit_code == 1, result.output
    assert "no file yielded a chunk, so collection 'nothing' was not created" in result.output
    assert "2 of 2 file(s) could not be ingested" in result.output and "the other files" not in result.output
    assert "nothing" not in [c.name for c in list_collections()]
    listed = CliRunner().invoke(cli, ["collections"])
    assert "nothing" not in listed.output, listed.output

    report = ingest_paths([broken, mixed / "local-project-installs.md"], "nothing",
                          default_config().with_changes(**{"chunking.strategy": "document"}))
    assert report.created_collection and not report.not_created
    assert [c.points for c in list_collections() if c.name == "nothing"] == [1]
