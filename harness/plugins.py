"""Installing the plugin packages of ``tests/data/plugins`` for one test, without pip.

A distribution's entry points are found by :mod:`importlib.metadata` through a
``NAME-VERSION.dist-info`` folder on ``sys.path`` holding ``METADATA`` and
``entry_points.txt``; that is what ``pip install`` writes. :func:`install` writes exactly
that from each package's own ``pyproject.toml`` (its entry points declared once, there)
into a temporary site folder, and puts the site and the package sources on ``sys.path``
and on ``PYTHONPATH`` (for the CLI and page subprocesses). The shared venv is never touched.
"""

from __future__ import annotations

import importlib
import os
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent.parent / "tests" / "data" / "plugins"


def write_dist_info(project: Path, site: Path) -> Path:
    """The ``.dist-info`` of the package at ``project`` (a folder with pyproject.toml) in ``site``."""
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = meta["name"], meta["version"]
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = []
    for group, points in meta.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in points.items()]
        lines.append("")
    (dist / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return dist


def _reload() -> None:
    from rag_eval.judges.kinds import JUDGE_KINDS
    from rag_eval.metrics.registry import METRICS

    importlib.invalidate_caches()
    METRICS.reload_plugins()
    JUDGE_KINDS.reload_plugins()


@contextmanager
def install(site: Path, *names: str) -> Iterator[list[Path]]:
    """Make the plugin packages ``names`` (folders of tests/data/plugins) installed for
    the duration: their entry points load in this process and in subprocesses."""
    projects = [PLUGINS / n for n in names]
    for project in projects:
        write_dist_info(project, site)
    paths = [str(site), *(str(p) for p in projects)]
    old_path, old_env = list(sys.path), os.environ.get("PYTHONPATH")
    sys.path[:0] = paths
    os.environ["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [old_env])])
    try:
        _reload()
        yield projects
    finally:
        from rag_eval.judges.kinds import JUDGE_KINDS
        from rag_eval.metrics.registry import METRICS

        sys.path[:] = old_path
        if old_env is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_env
        for module in [m for m in sys.modules if m.split(".")[0] in {n.replace("-", "_") for n in names}]:
            del sys.modules[module]
        for metric in [m.name for m in METRICS if m.origin.split(" ")[0] in {"rag-eval-words", "rag-eval-broken"}]:
            METRICS.unregister(metric)
        for kind in [k.name for k in JUDGE_KINDS if k.origin.split(" ")[0] == "rag-eval-words"]:
            JUDGE_KINDS.unregister(kind)
        _reload()
