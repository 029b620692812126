"""Fixtures shared by the whole suite.

- Every test gets its own ``RAG_EVAL_HOME`` (data directory: qdrant/, runs.sqlite,
  cache/) under ``tmp_path``, except that the extracted embedding model is shared
  through a session directory so it is unpacked once.
- ``make test`` runs the suite on both cores (pytest-xdist, ``-n auto --dist loadgroup``):
  each worker is a process with its own session fixtures (a PostgreSQL or Phoenix server
  on a free port, temporary folders under its own base temp). A module's tests stay on one
  worker, so module fixtures (a dashboard server in Chromium) start once; folders that are
  costly to build (the extracted and exported models, the demo collection) are built once
  per run under a file lock and shared by the workers (:func:`built_once`).
- ``shared_data`` is the shared dataset folder (``RAG_EVAL_SHARED_DATA``, default
  ``../shared/data``); tests that need it skip with a reason when it is absent.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

# The local OpenAI-compatible HTTP server (real sockets on loopback) used by judge,
# generation and synthetic-data tests.
pytest_plugins = ["harness.openai_server", "harness.pg_server"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TESTS_DIR = Path(__file__).parent
DATA_DIR = TESTS_DIR / "data"
PROJECT_ROOT = TESTS_DIR.parent


# Test folders whose modules share one worker (one group): their session fixtures take minutes.
ONE_WORKER_FOLDERS = {
    "traces": "one Phoenix server and one run of the traced application for all trace tests",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group each test for ``--dist loadgroup``: by module, or by folder for ONE_WORKER_FOLDERS;
    an ``xdist_group`` marker set on a test wins."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        relative = item.path.relative_to(TESTS_DIR) if item.path.is_relative_to(TESTS_DIR) else item.path
        group = relative.parts[0] if relative.parts[0] in ONE_WORKER_FOLDERS else relative.as_posix()
        item.add_marker(pytest.mark.xdist_group(group))


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name``, made by ``build`` once per test run: by the first worker to ask,
    under a file lock, in the folder every pytest-xdist worker of the run shares (the parent
    of the worker's base temp); in a run without workers, in the session's base temp."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            folder.mkdir(exist_ok=True)
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def _session_models_dir(tmp_path_factory) -> Path:
    """The models folder every test's data directory links to: the packaged model is extracted,
    and each ONNX model exported, once per run (rag_eval.encoders locks them across processes)."""
    return built_once(tmp_path_factory, "models-home", lambda folder: None)


@pytest.fixture(autouse=True)
def rag_eval_home(tmp_path, monkeypatch, _session_models_dir) -> Path:
    home = tmp_path / "rag-eval-home"
    home.mkdir()
    (home / "models").symlink_to(_session_models_dir, target_is_directory=True)
    monkeypatch.setenv("RAG_EVAL_HOME", str(home))
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.delenv("RAG_EVAL_EMBEDDED_STORE", raising=False)
    monkeypatch.delenv("RAG_EVAL_DB_URL", raising=False)
    monkeypatch.delenv("RAG_EVAL_DB", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield home
    _stop_background_work()
    _stop_sharing_limits()
    _trust_config_files_again()


def _trust_config_files_again() -> None:
    """A configuration file a test read withholds keys in this process (its endpoints, a key
    variable other than the environment's: ``rag_eval.config.key_for``); the next test starts clean."""
    config = sys.modules.get("rag_eval.config")
    if config is not None:
        config._keyless_endpoints.clear()
        config._withheld_variables.clear()


def _stop_sharing_limits() -> None:
    """A locked dashboard a test opened makes the process share the owner's LLM limits
    (``rag_eval.llm.limiter.share_limits``): the next test's clients get their own again."""
    limiter = sys.modules.get("rag_eval.llm.limiter")
    if limiter is not None:
        limiter.stop_sharing()


def _stop_background_work() -> None:
    """Cancel and wait for the dashboard's background jobs a test started (a button a page
    test pressed): a job left running holds the embedded store's lease, so the next test's
    dashboard never releases its own store, and it reads the next test's settings."""
    jobs = sys.modules.get("rag_eval.ui.jobs")
    left = jobs.stop_all(timeout_s=300) if jobs is not None else []
    for thread in threading.enumerate():
        if thread.name == "rag-eval-prepare":
            thread.join(300)
    assert not left, f"background jobs still running after the test: {[job.label for job in left]}"


RUBRIC = DATA_DIR / "rubrics" / "politeness.yaml"
RUBRIC_KEY = "test-key-not-real-rubric-5b5b"  # the tests look for it in every artefact


@pytest.fixture
def rubric_endpoint(openai_server, monkeypatch, fast_backoff):
    """The environment's LLM settings (what an installed rubric metric scores with) point at
    the local OpenAI-compatible server, with ``RUBRIC_KEY``; the politeness rubric a test
    installed leaves the metric registry afterwards."""
    from rag_eval.metrics.registry import METRICS

    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("RAG_EVAL_LLM_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_API_KEY", RUBRIC_KEY)
    monkeypatch.setenv("RAG_EVAL_LLM_MAX_RETRIES", "1")
    yield openai_server
    METRICS.unregister("politeness")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    from rag_eval.config import shared_data_dir

    path = shared_data_dir()
    if not (path / "ragbench").is_dir():
        pytest.skip(f"shared data not found at {path} (set RAG_EVAL_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def ragbench_rows() -> list[dict]:
    """The committed RAGBench fixture rows (CC-BY-4.0, see tests/data/ATTRIBUTION.md)."""
    with open(DATA_DIR / "ragbench_sample.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# A tiny corpus on disk for the pipeline tests (tests/rag and tests/runs).
CORPUS_DOCS = {
    "qdrant.txt": "Qdrant is a vector database written in Rust. It stores points with payloads and supports filters.",
    "cats.md": "# Cats\n\nCats are small domesticated carnivores. They sleep for most of the day.",
    "dogs.html": "<html><head><title>Dogs</title></head><body><p>Dogs bark at strangers.</p>"
                 "<p>Dogs are loyal companions and enjoy long walks.</p></body></html>",
    "bm25.txt": "BM25 ranks documents by term frequency and inverse document frequency. Rare terms weigh more.",
}


@pytest.fixture
def corpus_dir(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in CORPUS_DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
