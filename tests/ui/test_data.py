from dataclasses import dataclass

from rag_eval.ui.uploads import save


@dataclass
class Upload:
    """What Streamlit's file_uploader hands a page: a name and the bytes."""

    name: str
    data: bytes

    def getvalue(self) -> bytes:
        return self.data


def test_save_uploads_writes_in_order_inside_the_uploads_folder(rag_eval_home):
    saved = save([Upload("a.txt", b"A"), Upload("../../escape.txt", b"B"), Upload("dir\\c.md", b"C")], "corpus", "demo")
    paths = list(saved)
    root = rag_eval_home / "uploads" / "corpus" / "demo"
    assert [p.name for p in paths] == ["a.txt", "escape.txt", "c.md"] == list(saved.values())
    assert all(p.parent == root for p in paths)
    assert [p.read_bytes() for p in paths] == [b"A", b"B", b"C"]


def test_a_page_waits_for_the_demo_build_under_way_though_the_collection_is_listed(demo_home):
    """Issue 41 item 5: the build creates the demo collection first and fills it for tens of
    seconds, so its name in the list said nothing and the first question was answered from an
    empty collection. A page now waits for this process's build (the server's) to end."""
    import threading

    from rag_eval.ui import data

    assert data.DEMO_COLLECTION in data.collection_names() and not data.demo_ready()
    got: list[list[str]] = []
    data._DEMO_BUILD.acquire()  # the server's build, under way
    try:
        visitor = threading.Thread(target=lambda: got.append(data.ready_collection_names()), daemon=True)
        visitor.start()
        visitor.join(1.0)
        assert visitor.is_alive() and got == []  # it cannot return while the build holds the lock
    finally:
        data._DEMO_BUILD.release()
    visitor.join(300)
    assert got and data.DEMO_COLLECTION in got[0] and data.demo_ready()
