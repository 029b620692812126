"""The real documentation pages of tests/data/docs (see ATTRIBUTION.md there), copied
into a folder of a test's own, as a user's folder to ingest."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "data" / "docs"


def docs_folder(folder: Path, names: Iterable[str]) -> Path:
    """``folder`` (created) holding a copy of each named fixture."""
    folder.mkdir()
    for name in names:
        shutil.copy(DOCS / name, folder / name)
    return folder
