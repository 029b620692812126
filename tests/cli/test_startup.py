"""The command line starts at once: importing it, or asking any command for ``--help``,
loads none of the heavy libraries (each command imports what it uses when it runs).

No timing here (bench/bench_cli_startup.py prints the figures): each check runs in a
fresh interpreter and reads ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.cli_paths import command_paths

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "sklearn", "qdrant_client", "torch", "onnxruntime", "streamlit", "pandas", "sentence_transformers",
         "openai", "pyarrow", "scipy", "transformers", "pysbd", "plotly", "altair")

# Runs in a fresh interpreter: import the CLI, then (optionally) one `--help`; prints the heavy modules loaded.
PROBE = """
import json, sys
from rag_eval.cli import cli
args = json.loads(sys.argv[1])
if args:
    try:
        cli.main(args, prog_name="rag-eval", standalone_mode=False)
    except SystemExit:
        pass
heavy = json.loads(sys.argv[2])
print(json.dumps(sorted(name for name in heavy if name in sys.modules)))
"""


def heavy_after(args: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_command_is_found() -> None:
    names = {p[0] for p in command_paths()}
    assert {"score", "judge", "ingest", "ask", "run", "runs", "compare", "dataset", "synth"} <= names


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert heavy_after([]) == []


def test_help_loads_no_heavy_library() -> None:
    loaded = {" ".join(path) or "--help": heavy_after([*path, "--help"]) for path in [(), *command_paths()]}
    assert {cmd: mods for cmd, mods in loaded.items() if mods} == {}


def test_python_m_entry_point_prints_help() -> None:
    out = subprocess.run([sys.executable, "-m", "rag_eval.cli", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert "Usage: rag-eval" in out.stdout and "judge" in out.stdout
