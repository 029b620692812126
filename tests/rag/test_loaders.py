"""Loaders: every supported format, and a clear message naming the file for each bad one."""

import json

import pytest

from rag_eval.rag.loaders import LoaderError, RowProblem, discover_files, load_file


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF with ``text`` in Helvetica, with a correct xref table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def one(path):
    return list(load_file(path))[0]


def test_text_and_markdown(tmp_path):
    (tmp_path / "a.txt").write_text("Plain text here.", encoding="utf-8")
    (tmp_path / "b.md").write_text("# Title\n\nSome *markdown*.", encoding="utf-8")
    a, b = one(tmp_path / "a.txt"), one(tmp_path / "b.md")
    assert a.text == "Plain text here." and a.doc_id == str((tmp_path / "a.txt").resolve())
    assert "markdown" in b.text and a.content_hash != b.content_hash


def test_html_uses_a_real_parser(tmp_path):
    page = ("<html><head><title>Dogs</title><style>p{color:red}</style><script>alert('x')</script></head>"
            "<body><h1>Dogs</h1><p>Dogs bark &amp; play.</p><!-- hidden --><p>They are loyal.</p></body></html>")
    (tmp_path / "d.html").write_text(page, encoding="utf-8")
    doc = one(tmp_path / "d.html")
    assert doc.title == "Dogs"
    assert "Dogs bark & play." in doc.text and "They are loyal." in doc.text
    assert "alert" not in doc.text and "color" not in doc.text and "hidden" not in doc.text


def test_pdf_text_is_extracted(tmp_path):
    (tmp_path / "ok.pdf").write_bytes(minimal_pdf("Hello PDF world"))
    assert "Hello PDF world" in one(tmp_path / "ok.pdf").text


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog", "not a readable PDF"),
        ("fake.pdf", b"this is not a pdf at all", "not a readable PDF"),
        ("empty.txt", b"", "the file is empty"),
        ("blank.md", b"  \n\n ", "the file is empty"),
        ("binary.txt", bytes(range(256)) * 4, "binary file"),
        ("latin1.txt", "caf\u00e9".encode("latin-1"), "not valid UTF-8"),
        ("data.docx", b"PK\x03\x04", "unsupported file type"),
    ],
)
def test_bad_files_give_a_clear_message_naming_the_file(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(LoaderError, match=message) as info:
        list(load_file(path))
    assert name in str(info.value)


def test_corpus_jsonl_reports_bad_rows_and_keeps_good_ones(tmp_path):
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"_id": "d1", "title": "T", "text": "First."}), "{not json",
             json.dumps({"_id": "d2", "text": ""}), json.dumps({"text": "no id"}), json.dumps({"_id": "d3", "text": "Third."})]
    path.write_text("\n".join(lines), encoding="utf-8")
    values = list(load_file(path))
    docs = [v for v in values if not isinstance(v, RowProblem)]
    problems = [str(v) for v in values if isinstance(v, RowProblem)]
    assert [d.doc_id for d in docs] == ["d1", "d3"] and docs[0].title == "T"
    assert problems[0].endswith("line 2: invalid JSON (Expecting property name enclosed in double quotes at column 2)")
    assert "line 3: field 'text'" in problems[1] and "line 4: field '_id'" in problems[2]


def test_discover_walks_folders_and_reports_missing(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.txt").write_text("x", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "y.txt").write_text("y", encoding="utf-8")
    files, missing = discover_files([tmp_path, tmp_path / "nope.txt"])
    assert files == [tmp_path / "sub" / "x.txt"]
    assert missing == [f"{tmp_path / 'nope.txt'}: no such file or folder"]
