"""Dashboard test fixtures.

- Each test's embedded Qdrant client is closed afterwards, so its folder lock is
  released and no client is left for interpreter shutdown.
- ``demo_home``: the demo collection is built once per session (real ingestion with
  the packaged MiniLM) and its Qdrant folder copied into the test's ``RAG_EVAL_HOME``,
  so page tests that ask questions do not each re-embed the corpus.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import built_once


@pytest.fixture(autouse=True)
def _close_qdrant_clients():
    yield
    from rag_eval.rag.store import close_clients

    close_clients()


@pytest.fixture(scope="session")
def _demo_qdrant(tmp_path_factory) -> Path:
    """The demo collection's embedded Qdrant folder, built once per run (tests copy it)."""
    from rag_eval.demo import ensure_demo_collection
    from rag_eval.rag.store import close_clients, open_qdrant

    def build(folder: Path) -> None:
        client = open_qdrant(path=folder / "qdrant")
        ensure_demo_collection(client=client)
        close_clients()

    return built_once(tmp_path_factory, "demo-qdrant", build) / "qdrant"


@pytest.fixture
def demo_home(rag_eval_home: Path, _demo_qdrant: Path) -> Path:
    """``RAG_EVAL_HOME`` with the demo collection already in its embedded Qdrant."""
    shutil.copytree(_demo_qdrant, rag_eval_home / "qdrant")
    return rag_eval_home


@pytest.fixture(scope="session")
def local_judge_ready() -> None:
    """Skip (with the reason) when the packaged local judge cannot be built."""
    from rag_eval.judges.factory import build_judge

    try:
        build_judge("local")
    except (ValueError, OSError, ImportError) as err:
        pytest.skip(f"local judge unavailable: {err}")
