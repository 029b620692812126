"""A real Phoenix server (in its own venv, ``.venv-phoenix``: ``make phoenix-deps``) and the
traced RAG application (:mod:`harness.traced_app`) that sends its spans to it: what the trace
tests (tests/traces/) and ``bench/bench_traces.py`` run. Without that venv they fail (never
skip): the behaviour under test is talking to a real Phoenix.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PHOENIX_VENV = Path(os.environ.get("RAG_EVAL_PHOENIX_VENV", ROOT / ".venv-phoenix"))
PHOENIX_PYTHON = PHOENIX_VENV / "bin" / "python"
TRACED_APP = Path(__file__).with_name("traced_app.py")
# The traced application's many small traces (two spans each), read back through the pages: 600 traces are
# over 1,200 spans, so more than one page at Phoenix's and the importer's default 1,000 (the dashboard's import)
# and at least 12 at the trace tests' --page-size 100.
PAGING_TRACES = 600
PROJECT = "traced-rag"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PhoenixServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


def _require_venv() -> None:
    if not PHOENIX_PYTHON.exists():
        pytest.fail(f"Phoenix venv not found at {PHOENIX_VENV}: run 'make phoenix-deps' (the trace tests need a real "
                    "Phoenix server and fail without one)", pytrace=False)


@contextlib.contextmanager
def running_phoenix(work: Path, timeout_s: float = 180) -> Iterator[PhoenixServer]:
    """``phoenix serve`` on free loopback ports with its working directory in ``work``, until exit."""
    _require_venv()
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_TELEMETRY_ENABLED": "false", "DO_NOT_TRACK": "1"}
    env.pop("PHOENIX_COLLECTOR_ENDPOINT", None)
    log = work / "phoenix.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(PHOENIX_VENV / "bin" / "phoenix"), "serve"], env=env, stdout=out,
                                   stderr=subprocess.STDOUT, cwd=work)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"phoenix serve exited with {process.returncode}: {log.read_text()[-2000:]}",
                            pytrace=False)
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"phoenix serve did not answer /healthz in {timeout_s:.0f} s: {log.read_text()[-2000:]}",
                            pytrace=False)
            time.sleep(0.5)
        yield PhoenixServer(url, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class TracedRun:
    """What the traced application sent: trace id -> kind, and the OTLP JSON file."""

    kinds: dict[str, str]
    otlp_file: Path
    project: str


def traced_app_command(phoenix: PhoenixServer, openai_base_url: str, out: Path, project: str, paging: int,
                       *extra: str) -> list[str]:
    return [str(PHOENIX_PYTHON), str(TRACED_APP), "--endpoint", phoenix.url + "/v1/traces", "--openai-base-url",
            openai_base_url, "--project", project, "--out-otlp", str(out), "--paging", str(paging), *extra]


def run_traced_app(phoenix: PhoenixServer, openai_base_url: str, out: Path, project: str, paging: int,
                   *extra: str) -> TracedRun:
    """The traced application (``extra``: its --only-paging / --shift-seconds options), to its end."""
    done = subprocess.run(
        traced_app_command(phoenix, openai_base_url, out, project, paging, *extra),
        capture_output=True, text=True, timeout=600, env={**os.environ, "OTEL_SDK_DISABLED": "false"},
    )
    if done.returncode:
        pytest.fail(f"traced app failed: {done.stderr[-3000:]}", pytrace=False)
    kinds = json.loads(done.stdout.strip().splitlines()[-1])["kinds"]
    return TracedRun(kinds, out, project)


def wait_for_traces(phoenix: PhoenixServer, project: str, count: int, timeout_s: float = 120) -> None:
    """Phoenix ingests OTLP asynchronously: wait until ``count`` root spans are stored (failing
    only when ``timeout_s`` pass without one more arriving: a busy machine ingests slowly)."""
    deadline = time.monotonic() + timeout_s
    seen = best = 0
    while time.monotonic() < deadline:
        seen, cursor = 0, None
        while True:
            params: dict[str, str | int] = {"parent_id": "null", "limit": 1000}
            if cursor:
                params["cursor"] = cursor
            response = httpx.get(f"{phoenix.url}/v1/projects/{project}/spans", params=params, timeout=30)
            if response.status_code == 404:
                break
            body = response.json()
            seen += len(body["data"])
            cursor = body.get("next_cursor")
            if not cursor:
                break
        if seen >= count:
            return
        if seen > best:
            best, deadline = seen, time.monotonic() + timeout_s
        time.sleep(1.0)
    pytest.fail(f"Phoenix holds {seen} of {count} traces of {project} after {timeout_s} s", pytrace=False)


def export_parquet(phoenix: PhoenixServer, project: str, out: Path) -> dict:
    done = subprocess.run([str(PHOENIX_PYTHON), str(TRACED_APP), "--export-parquet", str(out), "--phoenix",
                           phoenix.url, "--project", project], capture_output=True, text=True, timeout=600)
    if done.returncode:
        pytest.fail(f"parquet export failed: {done.stderr[-3000:]}", pytrace=False)
    return json.loads(done.stdout.strip().splitlines()[-1])
