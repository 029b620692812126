"""How long the command line takes to start: ``rag-eval --help`` and every command's
``--help``, each in a fresh interpreter, against the 0.5 s limit (issue: "a CLI that
starts at once"). Also prints the slowest imports of ``import rag_eval.cli``
(``python -X importtime``) so a regression names its culprit.

Usage: ``.venv/bin/python bench/bench_cli_startup.py [--repeat 5]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cli_paths import command_paths  # noqa: E402

LIMIT_S = 0.5
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def time_once(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rag_eval.cli", *args], cwd=ROOT, env=ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def slowest_imports(n: int = 8) -> list[tuple[int, str]]:
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
    parser.add_argument("--repeat", type=int, default=5, help="Runs per command (the median is reported).")
    args = parser.parse_args()
    baseline = statistics.median(time_once_python() for _ in range(args.repeat))
    print(f"Python interpreter start alone (python -c pass): {baseline:.3f} s (median of {args.repeat})\n")
    print(f"| command | median s | min s | ratio to the {LIMIT_S} s limit |")
    print("|---|---:|---:|---:|")
    worst = 0.0
    for path in [(), *command_paths()]:
        times = [time_once([*path, "--help"]) for _ in range(args.repeat)]
        median = statistics.median(times)
        worst = max(worst, median)
        print(f"| {' '.join(['rag-eval', *path, '--help'])} | {median:.3f} | {min(times):.3f} | {median / LIMIT_S:.2f} |")
    print(f"\nslowest command: {worst:.3f} s = {worst / LIMIT_S:.2f} of the limit "
          f"({'within' if worst < LIMIT_S else 'OVER'} {LIMIT_S} s)")
    print("\nSlowest imports of `import rag_eval.cli` (cumulative microseconds, python -X importtime):")
    for micros, name in slowest_imports():
        print(f"  {micros:>8}  {name.strip()}")


def time_once_python() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
