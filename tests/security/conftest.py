"""Security tests reuse the dashboard fixtures (demo store, closing Qdrant clients)."""

from tests.ui.conftest import _close_qdrant_clients, _demo_qdrant, demo_home  # noqa: F401  (fixtures)
