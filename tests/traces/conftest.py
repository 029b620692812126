"""A real Phoenix server for the trace tests, and the traced application's spans in it.

Phoenix (``arize-phoenix`` from PyPI) lives in its own venv, ``.venv-phoenix`` (``make
phoenix-deps``), so its many pins never touch the project's environment. The session starts
``phoenix serve`` on 127.0.0.1 with its working directory in a temporary folder, waits for its
health check and stops it at the end. Without that venv the tests FAIL (never skip): the
behaviour under test is talking to a real Phoenix.

The traced application (harness/traced_app.py) runs once per session, in the same venv, and
sends its spans over OTLP/HTTP to that server (and to an OTLP JSON file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.phoenix_server import (  # noqa: F401  (the trace tests import them from here)
    PAGING_TRACES,
    PROJECT,
    PhoenixServer,
    TracedRun,
    export_parquet,
    run_traced_app,
    running_phoenix,
    traced_app_command,
    wait_for_traces,
)


@pytest.fixture(scope="session")
def phoenix_server(tmp_path_factory) -> Iterator[PhoenixServer]:
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
        yield server


def _answer(body: dict) -> str:
    """The test model's answer: the first sentence of the context it was given."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    if "Context:\n" in prompt:
        context = prompt.split("Context:\n", 1)[1].split("\n\nQuestion:", 1)[0].strip()
        if context:
            return context.split(". ")[0].rstrip(".") + "."
    return "I cannot answer from the given context."


@pytest.fixture(scope="session")
def traced(phoenix_server, tmp_path_factory) -> TracedRun:
    """The traced application run once against the session's Phoenix (with the paging traces)."""
    from harness.openai_server import start_server

    server = start_server()
    server.set_handler(_answer)
    try:
        out = tmp_path_factory.mktemp("otlp") / "spans.jsonl"
        run = run_traced_app(phoenix_server, server.base_url, out, PROJECT, PAGING_TRACES)
    finally:
        server.stop()
    wait_for_traces(phoenix_server, PROJECT, len(run.kinds))
    return run


def rag_eval(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess (as a user runs it)."""
    return subprocess.run([sys.executable, "-m", "rag_eval.cli", *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})
