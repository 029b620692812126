"""The Hugging Face Space is built from what the tests run with.

A Space reads ``python_version`` and ``sdk_version`` from the README front matter and
installs ``requirements.txt`` alone; these checks keep the three (and ``pyproject.toml``)
in agreement, and cover where a Space keeps its files. ``make space-check``
(scripts/space_check.py) builds and starts the Space itself.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from rag_eval import config

ROOT = Path(__file__).resolve().parents[1]


def front_matter() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), "README.md must open with the Space's YAML front matter"
    return yaml.safe_load(text.split("---\n", 2)[1])


def requirements() -> dict[str, Requirement]:
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    reqs = [Requirement(line.split("#", 1)[0]) for line in lines if line.split("#", 1)[0].strip()]
    return {r.name.lower(): r for r in reqs}


def test_front_matter_pins_the_space_build() -> None:
    meta = front_matter()
    assert meta["sdk"] == "streamlit" and meta["app_file"] == "app.py"
    assert isinstance(meta["python_version"], str), "quote python_version (YAML reads 3.10 as 3.1)"
    assert isinstance(meta["sdk_version"], str)


def test_python_version_agrees_with_pyproject_and_the_test_interpreter() -> None:
    pinned = front_matter()["python_version"]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert SpecifierSet(requires).contains(f"{pinned}.0"), f"python_version {pinned} outside requires-python {requires}"
    assert f"{sys.version_info.major}.{sys.version_info.minor}" == pinned, (
        f"the tests run on Python {sys.version_info.major}.{sys.version_info.minor}, the Space on {pinned}")


def test_streamlit_version_agrees_with_requirements_and_the_test_environment() -> None:
    pinned = front_matter()["sdk_version"]
    assert requirements()["streamlit"].specifier.contains(pinned), "requirements.txt must admit the Space's Streamlit"
    assert version("streamlit") == pinned, "the tests must run on the Space's Streamlit"


def test_requirements_keep_torch_on_the_cpu_build() -> None:
    assert str(requirements()["torch"].specifier) == "==2.13.0"


@pytest.fixture
def space(monkeypatch, tmp_path: Path) -> Path:
    """A Space without RAG_EVAL_HOME, with a fresh HOME."""
    monkeypatch.setenv("SPACE_ID", "someone/rag-eval")
    monkeypatch.delenv("RAG_EVAL_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_space_with_persistent_storage_keeps_files_under_data(space: Path, monkeypatch) -> None:
    storage = space / "data"
    storage.mkdir()
    monkeypatch.setattr(config, "SPACE_STORAGE", storage)
    assert config.data_dir() == storage / "rag-eval"
    assert "persistent storage" in config.data_dir_note()


def test_space_without_storage_uses_the_ephemeral_home(space: Path, monkeypatch) -> None:
    monkeypatch.setattr(config, "SPACE_STORAGE", space / "no-such-mount")
    assert config.data_dir().is_relative_to(space / "home")
    assert "lost" in config.data_dir_note() and "ephemeral" in config.data_dir_note()


def test_off_a_space_data_is_never_chosen(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SPACE_ID", raising=False)
    storage = tmp_path / "data"
    storage.mkdir()
    monkeypatch.setattr(config, "SPACE_STORAGE", storage)
    assert not config.data_dir().is_relative_to(storage)  # RAG_EVAL_HOME (set by conftest) wins


def test_overview_says_offline_and_where_runs_are_kept(monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
    at.run()
    assert not at.exception
    assert any("Offline demo" in i.value for i in at.info)
    assert any("are kept in" in c.value for c in at.caption)


def test_space_check_reads_the_pins_and_copies_only_repository_files() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import space_check
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    meta = space_check.front_matter()
    assert (meta["python_version"], meta["sdk_version"]) == (front_matter()["python_version"], front_matter()["sdk_version"])
    files = space_check.repository_files()
    assert {"app.py", "dashboard.py", "requirements.txt", "README.md", ".streamlit/config.toml", "pages/ask.py"} <= set(files)
    assert not [f for f in files if f.startswith(".venv/") or "__pycache__" in f]


def test_repository_holds_no_binary_file() -> None:
    """The Hub refuses a push with binary files outside Xet/LFS storage, whatever their size:
    everything the Space needs at run time is text or comes from a PyPI package."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import space_check
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    binary = [rel for rel in space_check.repository_files() if b"\0" in (ROOT / rel).read_bytes()[:8000]]
    out = subprocess.run(["git", "-C", str(ROOT), "check-attr", "filter", "--", *binary],
                         capture_output=True, text=True, check=True).stdout if binary else ""
    outside_lfs = [line.split(":", 1)[0] for line in out.splitlines() if not line.endswith(": filter: lfs")]
    assert outside_lfs == [], f"binary files outside LFS (.gitattributes) would block a push to the Space: {outside_lfs}"


# ---------------------------------------------------------------- the locks (scripts/lock.py, make lock)
def _lock_script():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import lock
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return lock


def _pins(path: Path) -> dict[str, str]:
    return _lock_script().pinned(path.read_text(encoding="utf-8"))


def test_pyproject_declares_the_dependencies_itself() -> None:
    """The ranges live in pyproject.toml (what a wheel's users get), not in the Space's lock."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "dependencies" not in project["project"].get("dynamic", [])
    assert "ray" in project["project"]["optional-dependencies"]
    names = {Requirement(r).name.lower() for r in project["project"]["dependencies"]}
    assert {"lxml-html-clean", "lxml", "httpx", "starlette", "anyio", "scipy", "transformers", "tokenizers",
            "markupsafe"} <= {n.replace("_", "-") for n in names}
    # the DevTools client lives in harness/: websockets is a test dependency, not the package's
    assert "websockets" not in names
    assert "ray" not in names, "Ray stays an extra"


def test_the_locks_are_current_with_pyproject() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "lock.py"), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_a_dependency_added_without_relocking_fails_the_check(tmp_path: Path, monkeypatch) -> None:
    lock = _lock_script()
    for name in ("pyproject.toml", "requirements.txt", "requirements-dev.txt"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    monkeypatch.setattr(lock, "ROOT", tmp_path)
    assert [e for x in lock.LOCKS for e in lock.check(x)] == []
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(text.replace('  "tqdm>=4.66",\n', '  "tqdm>=4.66",\n  "humanize>=4",\n', 1),
                                             encoding="utf-8")
    errors = [e for x in lock.LOCKS for e in lock.check(x)]
    assert "requirements.txt is stale against pyproject.toml: run make lock" in errors
    assert any(e.startswith("requirements-dev.txt is stale") for e in errors)


def test_the_space_lock_pins_every_declared_dependency_inside_its_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = _pins(ROOT / "requirements.txt")
    for line in project["project"]["dependencies"]:
        req = Requirement(line)
        name = req.name.lower().replace("_", "-")
        assert name in pins, f"requirements.txt lacks {name}: run make lock"
        assert req.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]} is outside {req.specifier}"


def test_the_locks_stay_on_cpu_torch_and_agree() -> None:
    lock = _lock_script()
    space, dev = _pins(ROOT / "requirements.txt"), _pins(ROOT / "requirements-dev.txt")
    for spec in lock.LOCKS:
        assert lock.problems(spec, spec.path.read_text(encoding="utf-8")) == []
    assert {name: (version, dev.get(name)) for name, version in space.items() if dev.get(name) != version} == {}, (
        "the tests must run on the versions the Space installs")
    assert "ray" in dev and "ray" not in space
