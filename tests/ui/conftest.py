"""Dashboard test fixtures: each test's embedded Qdrant client is closed afterwards,
so its folder lock is released and no client is left for interpreter shutdown."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _close_qdrant_clients():
    yield
    from rag_eval.rag.store import close_clients

    close_clients()
