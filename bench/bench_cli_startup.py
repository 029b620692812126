"""How long the command line takes to start: ``rag-eval --help`` and ``rag-eval judge
--help`` against bare Python importing click, each in a fresh interpreter, in one run.

Targets (issue 35): ``rag-eval --help`` <= 0.3 s and ``rag-eval judge --help`` <= 0.4 s on
an idle machine. Each command's CPU time (the interpreter's user + system seconds, read
with ``getrusage`` of the child) is printed beside its wall time and the load average,
since other jobs may share the machine; the ratio to bare Python + click is what stays
comparable between a busy and an idle machine. ``--all`` times every command's
``--help``. Also prints the slowest imports of ``import rag_eval.cli`` (``python -X
importtime``) so a regression names its culprit.

Usage: ``.venv/bin/python bench/bench_cli_startup.py [--repeat 7] [--all]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cli_paths import command_paths  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
BARE = [sys.executable, "-c", "import click"]
TARGETS_S = {"rag-eval --help": 0.3, "rag-eval judge --help": 0.4}


def run_timed(command: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``command``, its own children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli_command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "rag_eval.cli", *args]


def measure(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) per command; the commands take turns, so a burst of load
    elsewhere touches all of them alike."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for command in commands.values():  # warm the page cache and .pyc files
        run_timed(command)
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(run_timed(command))
    return {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for name, r in runs.items()}


def slowest_imports(n: int = 10) -> list[tuple[int, str]]:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import rag_eval.cli"], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, check=True)
    rows = []
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="Runs per command (the median is reported).")
    parser.add_argument("--all", action="store_true", help="Also every command's --help.")
    args = parser.parse_args()
    commands = {"bare Python + click": BARE, "rag-eval --help": cli_command(["--help"]),
                "rag-eval judge --help": cli_command(["judge", "--help"])}
    if args.all:
        for path in command_paths():
            commands.setdefault(f"rag-eval {' '.join(path)} --help", cli_command([*path, "--help"]))
    load_before = os.getloadavg()
    figures = measure(commands, args.repeat)
    load_after = os.getloadavg()
    bare_wall, bare_cpu = figures["bare Python + click"]
    print(f"median of {args.repeat} runs each, {os.cpu_count()} cores; load average (1 min) "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after\n")
    print("| command | wall s | CPU s | wall / bare | CPU / bare | target (idle, wall) |")
    print("|---|---:|---:|---:|---:|---|")
    for name, (wall, cpu) in figures.items():
        target = TARGETS_S.get(name)
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {wall / bare_wall:.2f} | {cpu / bare_cpu:.2f} | "
              f"{f'<= {target} s' if target else '-'} |")
    print("\nSlowest imports of `import rag_eval.cli` (cumulative microseconds, python -X importtime):")
    for micros, name in slowest_imports():
        print(f"  {micros:>8}  {name.strip()}")


if __name__ == "__main__":
    main()
