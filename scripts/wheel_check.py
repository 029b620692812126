"""Build the wheel and run every command-line feature from it, as a pip user would.

A library user runs ``pip install rag_eval-*.whl``: pip resolves pyproject.toml's *ranges*
(not the locks), and nothing of this repository is on ``sys.path``. This script does that:

1. builds the wheel from the repository (``uv build --wheel``, the PEP 517 build in an isolated
   environment, as ``python -m build`` would) and checks it holds every file the package needs at
   run time: each tracked non-Python file under ``rag_eval/`` (the demo rows and their attribution,
   the local judge's weights);
2. installs it with ``pip install <wheel>`` into a virtual environment outside the repository,
   on the pinned Python; the environment is kept under ``$RAG_EVAL_WHEEL_CACHE`` (default
   ``/var/tmp/rag-eval-wheel-check``) keyed on the wheel's dependencies and the Python build, and
   only the wheel itself is reinstalled when they are unchanged (``--fresh`` rebuilds it: pip then
   takes the newest releases that the ranges admit); ``pip check`` must be clean;
3. runs, with the working directory and ``HOME`` in a fresh temporary folder, no API key and
   ``HF_HUB_OFFLINE=1``: ``rag-eval ingest`` of an HTML page of Debian's Python tutorial, a PDF and a
   Markdown file (tests/data/docs), ``ask`` on that collection, ``judge --judge local`` of real
   RAGBench rows, ``run demo`` and ``report`` of that run, each expected to exit 0 and say what it did;
   first it checks that ``rag_eval`` is imported from the environment, not from the repository.

Prints the time of every step. Exit code 0 when all passed, 1 on a failure (the step, its command
and its output are printed).

Usage: ``make wheel-check`` or ``.venv/bin/python scripts/wheel_check.py [--fresh] [--keep]``
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("RAG_EVAL_WHEEL_CACHE", "/var/tmp/rag-eval-wheel-check"))
STAMP = ".wheel-check-complete"
PYTHON_VERSION = "3.11"  # the README front matter's python_version
DOCS = ROOT / "tests" / "data" / "docs"
# One file of each kind the ingest reads (tests/data/docs/ATTRIBUTION.md says where each comes from).
INGEST_FILES = ("venv.html", "shared-mime-info-spec.pdf", "local-project-installs.md")
LABELLED_ROWS = ROOT / "tests" / "data" / "ragbench_sample.jsonl"
QUESTION = "How do I create a virtual environment?"
COLLECTION = "wheel-check-docs"
RUN_NAME = "wheel-check-demo"
# Environment variables of this machine the commands keep (OpenBLAS needs these here).
PASS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "TZ", "PIP_CACHE_DIR", "UV_CACHE_DIR")


class CheckFailed(Exception):
    """A step failed: the message names it and carries its output."""


def timed(label: str, times: list[tuple[str, float]]):
    """Context manager printing and recording how long ``label`` took."""

    class _Timer:
        def __enter__(self) -> None:
            self.start = time.perf_counter()
            print(f"{label} ...", flush=True)

        def __exit__(self, exc_type, *_exc: object) -> None:
            seconds = time.perf_counter() - self.start
            times.append((label, seconds))
            print(f"{label}: {'failed' if exc_type else 'ok'} in {seconds:.1f}s", flush=True)

    return _Timer()


def run(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None, expect: str | None = None,
        timeout_s: float = 1800) -> str:
    """Run ``cmd``; fail on a non-zero exit or when ``expect`` is not in its output."""
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    text = out.stdout + out.stderr
    if out.returncode != 0 or (expect is not None and expect not in text):
        why = f"exit code {out.returncode}" if out.returncode else f"no {expect!r} in the output"
        raise CheckFailed(f"{' '.join(cmd)} ({why}):\n{text[-4000:]}")
    return text


def pinned_python() -> str:
    for candidate in (shutil.which(f"python{PYTHON_VERSION}"), f"/usr/bin/python{PYTHON_VERSION}"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise CheckFailed(f"no python{PYTHON_VERSION} on this machine")


# ---------------------------------------------------------------- the wheel
def build_wheel(out_dir: Path) -> Path:
    uv = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if uv is None:
        raise CheckFailed("uv is not installed: `make setup` installs it into .venv (requirements-dev.txt)")
    # a copy of the tracked files: a build leaves build/ and *.egg-info behind, never in the repository
    src = out_dir / "src"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in (f for f in files if f and (ROOT / f).is_file()):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    run([uv, "build", "--wheel", "--quiet", "--out-dir", str(out_dir / "dist"), str(src)], cwd=out_dir)
    wheels = sorted((out_dir / "dist").glob("rag_eval-*.whl"))
    if len(wheels) != 1:
        raise CheckFailed(f"expected one wheel, found {[w.name for w in wheels]}")
    return wheels[0]


def check_contents(wheel: Path) -> None:
    """Every tracked file under rag_eval/ that is not Python is package data the wheel must hold."""
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", "rag_eval"],
                             capture_output=True, text=True, check=True).stdout.split()
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    missing = [f for f in tracked if f not in names and (ROOT / f).is_file() and "__pycache__" not in f]
    if missing:
        raise CheckFailed(f"{wheel.name} lacks {missing}: add their patterns to [tool.setuptools.package-data]")


def requires_dist(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(zf.read(meta).decode("utf-8"))
    return sorted(message.get_all("Requires-Dist") or [])


def environment(python: str, wheel: Path, fresh: bool, times: list[tuple[str, float]]) -> Path:
    """A venv holding the wheel and what pip resolves for its ranges (reused while they are unchanged)."""
    digest = hashlib.sha256("\n".join(requires_dist(wheel)).encode())
    digest.update(subprocess.run([python, "-VV"], capture_output=True, text=True, check=True).stdout.encode())
    venv = CACHE / f"venv-{digest.hexdigest()[:12]}"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    if (venv / STAMP).is_file() and not fresh:
        with timed(f"reinstall the wheel into {venv} (same dependencies and Python; --fresh rebuilds)", times):
            run([*pip, "install", "--quiet", "--force-reinstall", "--no-deps", str(wheel)], cwd=CACHE)
    else:
        for old in CACHE.glob("venv-*"):  # one build at a time on disk
            shutil.rmtree(old, ignore_errors=True)
        with timed(f"build {venv}: pip install {wheel.name} (its ranges, newest admitted releases)", times):
            run([python, "-m", "venv", str(venv)], cwd=CACHE)
            run([*pip, "install", "--quiet", str(wheel)], cwd=CACHE)
        (venv / STAMP).write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    with timed("pip check (the wheel's environment)", times):
        run([*pip, "check"], cwd=CACHE)
    return venv


# ---------------------------------------------------------------- the features
def features(venv: Path, work: Path, times: list[tuple[str, float]]) -> None:
    home, cwd = work / "home", work / "cwd"
    home.mkdir()
    cwd.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **{k: os.environ[k] for k in PASS_ENV if k in os.environ}}
    cli = str(venv / "bin" / "rag-eval")

    def step(label: str, cmd: list[str], expect: str | None = None) -> str:
        with timed(label, times):
            return run(cmd, cwd=cwd, env=env, expect=expect)

    where = step("rag_eval is imported from the wheel", [str(venv / "bin" / "python"), "-c",
                 "import rag_eval.cli, sys; print(rag_eval.cli.__file__); print(list(rag_eval.__path__)); print(sys.path)"])
    if str(ROOT) in where or not where.startswith(str(venv)):
        raise CheckFailed(f"rag_eval was not imported from the installed wheel:\n{where}")
    docs = [str(DOCS / name) for name in INGEST_FILES]
    ingested = step("rag-eval ingest (HTML, PDF, Markdown)", [cli, "ingest", *docs, "--collection", COLLECTION],
                    expect=f"Collection '{COLLECTION}'")
    # the per-file summary: "Collection 'NAME': 3 file(s): 3 ingested (66 chunks), 0 unchanged (skipped), 0 failed; ..."
    added = re.search(rf"Collection '{COLLECTION}': \d+ file\(s\): (\d+) ingested \(\d+ chunks\), \d+ unchanged \(skipped\), 0 failed",
                      ingested)
    if "error:" in ingested or not added or int(added.group(1)) < len(INGEST_FILES):
        raise CheckFailed(f"ingest did not take every file of {INGEST_FILES}:\n{ingested}")
    step("rag-eval ask (that collection, local judge)", [cli, "ask", QUESTION, "--collection", COLLECTION], expect="venv")
    out = work / "judged.jsonl"
    step("rag-eval judge --judge local (RAGBench rows)", [cli, "judge", str(LABELLED_ROWS), "--judge", "local", "--out", str(out)])
    if not out.is_file() or not out.read_text(encoding="utf-8").strip():
        raise CheckFailed(f"rag-eval judge wrote no rows to {out}")
    # the Python API from the wheel: a DataFrame of the same rows equals the CLI's output, field for field
    api = (
        "import json, sys, pandas as pd, rag_eval\n"
        "rows = [json.loads(x) for x in open(sys.argv[1], encoding='utf-8') if x.strip()]\n"
        "cli = {r['id']: r for r in (json.loads(x) for x in open(sys.argv[2], encoding='utf-8') if x.strip())}\n"
        "result = rag_eval.evaluate(pd.DataFrame(rows), progress=False)\n"
        "keep = lambda r: {k: v for k, v in r.items() if k not in ('latency_s', 'metadata')}\n"
        "bad = [r['id'] for r in result.rows if keep(r) != keep(cli[r['id']])]\n"
        "print(f'python api: {len(result.rows)} rows, {len(bad)} differ from rag-eval judge', bad[:3])\n"
        "sys.exit(1 if bad or len(result.rows) != len(cli) else 0)\n"
    )
    step("rag_eval.evaluate(DataFrame) equals rag-eval judge", [str(venv / "bin" / "python"), "-c", api,
                                                                  str(LABELLED_ROWS), str(out)], expect="0 differ")
    step("rag-eval run demo", [cli, "run", "demo", "--name", RUN_NAME])
    report = work / "report.html"
    step("rag-eval report (that run)", [cli, "report", RUN_NAME, "--out", str(report)], expect="wrote")
    if "<html" not in report.read_text(encoding="utf-8", errors="replace")[:2000].lower():
        raise CheckFailed(f"{report} is not an HTML page")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="Rebuild the environment (newest releases the ranges admit).")
    parser.add_argument("--keep", action="store_true", help="Keep the work folder (wheel, HOME, outputs; path printed).")
    args = parser.parse_args()
    times: list[tuple[str, float]] = []
    start = time.perf_counter()
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rag-eval-wheel-"))
    try:
        with open(CACHE / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one check at a time on a machine: they share the environment
            python = pinned_python()
            with timed("build the wheel", times):
                wheel = build_wheel(work)
                check_contents(wheel)
            venv = environment(python, wheel, args.fresh, times)
            features(venv, work, times)
    except (CheckFailed, subprocess.SubprocessError, OSError) as err:
        print(f"\nFAILED: {err}")
        return 1
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nwheel check passed in {time.perf_counter() - start:.0f}s: "
          + ", ".join(f"{label.split(' (')[0]} {seconds:.0f}s" for label, seconds in times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
