"""Compile pyproject.toml's ranges into the two locks, or check that they are current.

``requirements.txt`` is what a Hugging Face Space installs (it reads no pyproject.toml): the
package's runtime dependencies at exact versions for the Space's Python. ``requirements-dev.txt``
adds the ``ray`` extra and the ``dev`` dependency group (tests, lint, benchmarks, the tools of
these checks), compiled with the Space lock as constraints, so the tests run on the very versions
the Space installs. Both are compiled by ``uv pip compile`` for Python 3.11 on x86_64 Linux;
an existing lock's versions are kept where pyproject.toml still admits them (uv reads the
output file as preferences), so a re-lock after adding one dependency changes only what that
dependency brings. ``--upgrade`` moves everything to the newest admitted versions.

torch: the only torch this machine installs is the CPU build in pip's ``find-links`` folder
(``torch==2.13.0+cpu``, no nvidia-* dependencies). uv resolves against it, then the lock line is
written ``torch==2.13.0``: pip, here and on a Space, takes the local ``+cpu`` wheel for it when
one is offered, and PyPI has no ``+cpu`` version to name. A lock that names any nvidia-*, CUDA or
triton package is refused.

Each lock starts with a line holding a digest of what it was compiled from (the dependency
tables of pyproject.toml, requires-python, the compile options); ``--check`` (in ``make test``)
recomputes it and fails with "requirements.txt is stale against pyproject.toml: run make lock".

Usage: ``make lock`` (``.venv/bin/python scripts/lock.py [--upgrade]``), ``scripts/lock.py --check``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON_VERSION = "3.11"  # the README front matter's python_version (tests/test_space.py checks they agree)
PLATFORM = "x86_64-manylinux_2_28"  # a Space's machine: x86_64 Linux, glibc >= 2.28
TORCH_PIN = "torch==2.13.0"
FIND_LINKS = "/opt/wheels"  # where this machine keeps torch's CPU wheel (pip config: global.find-links)
CPU_ONLY = re.compile(r"^(nvidia-|cuda-|triton\b|pytorch-triton)", re.IGNORECASE)
DIGEST_PREFIX = "# compiled from pyproject.toml, sha256 "


class Lock:
    """One lock file and the ``uv pip compile`` options that make it."""

    def __init__(self, name: str, options: list[str], constraints: str | None = None) -> None:
        self.name, self.options, self.constraints = name, options, constraints

    @property
    def path(self) -> Path:
        return ROOT / self.name


LOCKS = [
    Lock("requirements.txt", []),
    Lock("requirements-dev.txt", ["--extra", "ray", "--group", "pyproject.toml:dev"], constraints="requirements.txt"),
]


def uv() -> str:
    found = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        sys.exit("uv is not installed: `make setup` installs it into .venv (requirements-dev.txt)")
    return found


def digest(lock: Lock) -> str:
    """What the lock depends on in pyproject.toml (parsed, so comments and layout do not count)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    basis = {
        "requires-python": project["project"].get("requires-python"),
        "dependencies": project["project"].get("dependencies", []),
        "optional-dependencies": project["project"].get("optional-dependencies", {}),
        "dependency-groups": project.get("dependency-groups", {}),
        "options": [lock.options, lock.constraints, PYTHON_VERSION, PLATFORM, TORCH_PIN],
    }
    if lock.constraints:  # the dev lock follows the Space lock: a change there makes it stale too
        basis["constraints"] = pinned((ROOT / lock.constraints).read_text(encoding="utf-8"))
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def pinned(text: str) -> dict[str, str]:
    """name -> version of every ``name==version`` line of a lock."""
    pins = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9._-]+)(\[[^\]]*\])?==([^\s;#]+)", line)
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(3)
    return pins


def problems(lock: Lock, text: str) -> list[str]:
    """What no lock of this project may contain."""
    pins = pinned(text)
    found = [f"{lock.name} names a CUDA package: {name}" for name in pins if CPU_ONLY.match(name)]
    if pins.get("torch") != TORCH_PIN.split("==")[1]:
        found.append(f"{lock.name} must pin {TORCH_PIN} (the CPU wheel), has torch=={pins.get('torch')}")
    return found


def compile_lock(lock: Lock, upgrade: bool) -> None:
    cmd = [uv(), "pip", "compile", "pyproject.toml", *lock.options, "--python-version", PYTHON_VERSION,
           "--python-platform", PLATFORM, "--find-links", FIND_LINKS, "--no-emit-find-links",
           "--custom-compile-command", "make lock", "--quiet", "-o", lock.name]
    if upgrade:
        cmd.append("--upgrade")
    if lock.path.is_file():  # uv reads the output as preferences: keep the torch line it can match
        as_resolved(lock.path)
    print(f"lock: {' '.join(cmd[1:])}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if lock.constraints:  # with "==2.13.0" alone uv would take PyPI's CUDA build over the local wheel
            constraints = Path(tmp) / lock.constraints
            shutil.copyfile(ROOT / lock.constraints, constraints)
            as_resolved(constraints)
            cmd += ["--constraint", str(constraints)]
        subprocess.run(cmd, cwd=ROOT, check=True, env={**os.environ, "UV_NO_CONFIG": "1"})
        text = lock.path.read_text(encoding="utf-8")
        if lock.constraints:  # "via -c requirements.txt", not the temporary copy's path
            text = text.replace(str(Path(tmp) / lock.constraints), lock.constraints)
    # pip takes the local CPU wheel for ==2.13.0; PyPI has no "+cpu" version to name
    text = re.sub(r"^torch==2\.13\.0\+cpu$", TORCH_PIN, text, flags=re.MULTILINE)
    found = problems(lock, text)
    if found:
        sys.exit("\n".join(found))
    lock.path.write_text(f"{DIGEST_PREFIX}{digest(lock)}\n{text}", encoding="utf-8")
    print(f"lock: wrote {lock.name} ({len(pinned(text))} packages)")


def as_resolved(path: Path) -> None:
    """The torch line as uv resolves it (the local CPU wheel's version, ``+cpu``)."""
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"^torch==2\.13\.0$", f"{TORCH_PIN}+cpu", text, flags=re.MULTILINE), encoding="utf-8")


def check(lock: Lock) -> list[str]:
    if not lock.path.is_file():
        return [f"{lock.name} is missing: run make lock"]
    text = lock.path.read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    errors = problems(lock, text)
    if first != f"{DIGEST_PREFIX}{digest(lock)}":
        against = f"pyproject.toml{' and ' + lock.constraints if lock.constraints else ''}"
        errors.insert(0, f"{lock.name} is stale against {against}: run make lock")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Fail when a lock is stale (no network, nothing written).")
    parser.add_argument("--upgrade", action="store_true", help="Move every package to the newest admitted version.")
    args = parser.parse_args()
    if args.check:
        errors = [e for lock in LOCKS for e in check(lock)]
        for error in errors:
            print(error, file=sys.stderr)
        if not errors:
            print("locks: requirements.txt and requirements-dev.txt are current with pyproject.toml")
        return 1 if errors else 0
    for lock in LOCKS:  # the Space lock first: the dev lock is compiled with it as constraints
        compile_lock(lock, args.upgrade)
    return 0


if __name__ == "__main__":
    sys.exit(main())
