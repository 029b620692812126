"""The embedded store's two engines on a small real collection (pages of tests/data/docs):
Qdrant Edge (the default) and qdrant-client local mode return the same top-k in every
retrieval mode; the Edge store persists across reopen, deletes and re-ingests a changed
document, and is held by one process at a time; a local-mode collection is copied into
Edge on first open; local mode warns past the size where it slows down."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from qdrant_client import models

from rag_eval.rag import store
from rag_eval.rag.config import default_config
from rag_eval.rag.edge import EdgeStore
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.retrieve import retrieve
from tests.rag.fixture_docs import docs_folder

FILES = ("venv.html", "tutorial-transactions.html", "local-project-installs.md")
QUESTIONS = (
    "How do I create a virtual environment?",
    "What happens to the changes when a transaction is rolled back?",
    "How do I install a project from a local directory with pip?",
    "savepoint",
    "Where does the venv module put the site-packages directory?",
)
MODES = ("dense", "bm25", "hybrid")


@pytest.fixture
def docs(tmp_path) -> Path:
    return docs_folder(tmp_path / "docs", FILES)


def top_k(client, collection: str, k: int = 5) -> dict[tuple[str, str], list[tuple[str, float]]]:
    out = {}
    for mode in MODES:
        config = default_config().with_changes(**{"retrieval.mode": mode, "retrieval.k": k})
        for q in QUESTIONS:
            out[(mode, q)] = [(c.id, c.score) for c in retrieve(q, "docs", config, client=client)]
    return out


def by_score(hits: list[tuple[str, float]]) -> list[set[str]]:
    """Ids grouped by equal score, best first: engines order tied chunks differently."""
    groups: dict[float, set[str]] = {}
    for point, score in hits:
        groups.setdefault(round(score, 4), set()).add(point)
    return [groups[s] for s in sorted(groups, reverse=True)]


def same_results(a, b) -> None:
    """The same scores in the same order and the same chunks, up to the order of ties (and
    which of the chunks tied at the cut-off is kept, hybrid's fused ranks tie often)."""
    assert a.keys() == b.keys()
    for key, hits in a.items():
        assert [s for _, s in hits] == pytest.approx([s for _, s in b[key]], abs=1e-4), key
        ours, theirs = by_score(hits), by_score(b[key])
        assert ours[:-1] == theirs[:-1], key
        assert len(ours[-1]) == len(theirs[-1]) if ours else not theirs, key


def test_edge_is_the_default_and_the_setting_selects_the_engine(tmp_path, monkeypatch):
    assert isinstance(store.open_qdrant(path=tmp_path / "a"), EdgeStore)
    monkeypatch.setenv("RAG_EVAL_EMBEDDED_STORE", "local")
    assert store.is_local_mode(store.open_qdrant(path=tmp_path / "b"))
    monkeypatch.setenv("RAG_EVAL_EMBEDDED_STORE", "lmdb")
    with pytest.raises(store.QdrantUnavailable, match="'edge' or 'local'"):
        store.open_qdrant(path=tmp_path / "c")


def test_backend_switch_gives_the_same_results_and_edge_persists(docs, tmp_path):
    config = default_config()
    local = store.open_qdrant(path=tmp_path / "local", backend="local")
    edge = store.open_qdrant(path=tmp_path / "edge", backend="edge")
    for client in (local, edge):
        report = ingest_paths([docs], "docs", config, client=client)
        assert report.documents_added == len(FILES) and report.chunks_added > 20 and not report.errors
    count = local.count("docs").count
    assert edge.count("docs").count == count
    expected = top_k(local, "docs")
    assert all(expected[("dense", q)] for q in QUESTIONS)
    same_results(top_k(edge, "docs"), expected)
    anchor = expected[("dense", QUESTIONS[0])][0][0]  # neighbours of a stored chunk in other documents (synth)
    payload = store.chunk_payload(anchor, local.retrieve("docs", [anchor], with_payload=True)[0].payload or {})
    other_docs = models.Filter(must_not=[models.FieldCondition(key="doc_id",
                                                               match=models.MatchValue(value=payload["doc_id"]))])
    near = [[(p.id, p.score) for p in c.query_points("docs", query=anchor, using=store.DENSE, limit=4,
                                                        query_filter=other_docs, with_payload=True).points]
            for c in (local, edge)]
    assert near[0] and anchor not in {i for i, _ in near[0]}
    same_results({"near": near[1]}, {"near": near[0]})

    store.close_clients()  # reopened from disk: the same collection, metadata and answers
    reopened = store.open_qdrant(path=tmp_path / "edge", backend="edge")
    assert reopened is not edge and [c.name for c in store.list_collections(reopened)] == ["docs"]
    assert store.collection_metadata(reopened, "docs")["embedder"] == config.embedder.label
    same_results(top_k(reopened, "docs"), expected)
    assert len(list(store.iter_chunks("docs", limit=None, client=reopened))) == count


def test_a_changed_document_replaces_its_chunks_on_edge(docs):
    config = default_config()
    ingest_paths([docs], "docs", config)
    client = store.open_qdrant()
    assert isinstance(client, EdgeStore)
    before = {c["id"] for c in store.iter_chunks("docs", limit=None) if c["source"].endswith(".md")}
    (docs / "local-project-installs.md").write_text("# Installs\n\nUse uv pip install -e . for an editable "
                                                    "install of the project.\n", encoding="utf-8")
    report = ingest_paths([docs], "docs", config)
    assert report.documents_replaced == 1 and report.chunks_deleted == len(before)
    after = {c["id"] for c in store.iter_chunks("docs", limit=None) if c["source"].endswith(".md")}
    assert after and not after & before
    best = retrieve("editable install with uv", "docs", config.with_changes(**{"retrieval.mode": "bm25"}))[0]
    assert "uv pip install" in best.text


def test_a_local_mode_collection_is_copied_into_edge_once(docs, rag_eval_home, capfd):
    config = default_config()
    local = store.open_qdrant(backend="local")
    ingest_paths([docs], "docs", config, client=local)
    expected = top_k(local, "docs")
    store.close_clients()

    edge = store.open_qdrant()
    assert isinstance(edge, EdgeStore)
    assert "copied collection 'docs'" in capfd.readouterr().err
    same_results(top_k(edge, "docs"), expected)
    assert edge.count("docs").count == sum(1 for _ in store.iter_chunks("docs", limit=None, client=edge))

    edge.delete_collection("docs")  # deleted on purpose: it does not come back
    store.close_clients()
    assert not store.open_qdrant().collection_exists("docs")
    assert "copied" not in capfd.readouterr().err
    store.close_clients()  # the old local-mode files are untouched and still readable
    assert store.open_qdrant(backend="local").count("docs").count > 0


def test_only_local_mode_warns_past_its_size(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "LOCAL_MODE_SLOW_POINTS", 3)
    local = store.open_qdrant(path=tmp_path / "local", backend="local")
    edge = store.open_qdrant(path=tmp_path / "edge", backend="edge")
    assert store.size_warning(local, 3) is None
    message = store.size_warning(local, 4)
    assert message and "QDRANT_URL" in message and "RAG_EVAL_EMBEDDED_STORE" in message
    assert store.size_warning(edge, 10**6) is None


def test_the_edge_store_is_held_by_one_process(tmp_path, monkeypatch):
    store.open_qdrant(path=tmp_path / "s")
    code = ("import sys; from rag_eval.rag.store import open_qdrant, QdrantBusy\n"
            "try:\n    open_qdrant(path=sys.argv[1])\nexcept QdrantBusy as e:\n    print(e); sys.exit(3)\n")
    env = {"RAG_EVAL_QDRANT_WAIT_S": "0.2", "PATH": "/usr/bin:/bin", "RAG_EVAL_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 3 and "busy" in proc.stdout, proc.stderr[-800:]
    store.close_clients()
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stdout + proc.stderr[-800:]


def test_the_cli_warns_on_stderr_when_a_local_mode_collection_is_past_the_size(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rag_eval.cli import cli

    folder = tmp_path / "small"
    folder.mkdir()
    (folder / "a.txt").write_text("Qdrant is a vector database written in Rust.", encoding="utf-8")
    (folder / "b.txt").write_text("Cats sleep most of the day.", encoding="utf-8")
    monkeypatch.setattr(store, "LOCAL_MODE_SLOW_POINTS", 1)
    runner = CliRunner()
    quiet = runner.invoke(cli, ["ingest", str(folder), "--collection", "small"])  # Edge: no warning
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr, quiet.output
    store.close_clients()
    monkeypatch.setenv("RAG_EVAL_EMBEDDED_STORE", "local")
    loud = runner.invoke(cli, ["ingest", str(folder), "--collection", "local-small"])
    assert loud.exit_code == 0, loud.output
    assert "holds 2 chunks" in loud.stderr and "QDRANT_URL" in loud.stderr
    listing = runner.invoke(cli, ["collections"])
    assert "warning: collection 'local-small'" in listing.stderr
