from dataclasses import dataclass

from rag_eval.ui.data import save_uploads


@dataclass
class Upload:
    """What Streamlit's file_uploader hands a page: a name and the bytes."""

    name: str
    data: bytes

    def getvalue(self) -> bytes:
        return self.data


def test_save_uploads_writes_in_order_inside_the_uploads_folder(rag_eval_home):
    paths = save_uploads([Upload("a.txt", b"A"), Upload("../../escape.txt", b"B"), Upload("dir\\c.md", b"C")], "corpus", "demo")
    root = rag_eval_home / "uploads" / "corpus" / "demo"
    assert [p.name for p in paths] == ["a.txt", "escape.txt", "c.md"]
    assert all(p.parent == root for p in paths)
    assert [p.read_bytes() for p in paths] == [b"A", b"B", b"C"]
