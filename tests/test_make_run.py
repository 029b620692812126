"""``make run`` serves the dashboard on the loopback address unless the owner widens it on the
command line (issue 46, item 10): with ``RAG_EVAL_DEPLOYMENT=local`` and a key in the shell, a
dashboard open to the network would let anyone send that key to their own endpoint.

``make -n`` prints the command without running it (nothing is installed or started). The Space
runs ``streamlit run app.py`` itself: the repository's Streamlit settings must not pin an address.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

def run_command(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["make", "-n", "run", *args], cwd=ROOT, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=60, check=True)
    return next(line for line in done.stdout.splitlines() if "streamlit run app.py" in line)


def test_make_run_listens_on_loopback_only() -> None:
    assert run_command().endswith("streamlit run app.py --server.address 127.0.0.1")


def test_an_exported_host_does_not_widen_it() -> None:
    assert run_command(env={"HOST": "0.0.0.0"}).endswith("--server.address 127.0.0.1")


def test_the_owner_widens_it_on_the_command_line() -> None:
    assert run_command("HOST=0.0.0.0").endswith("--server.address 0.0.0.0")


def test_the_spaces_own_start_up_sets_no_address() -> None:
    settings = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert "address" not in settings.get("server", {})
