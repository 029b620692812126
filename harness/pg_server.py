"""A throwaway PostgreSQL server for the run-store tests (pytest plugin).

``postgres_server`` (session) runs Debian's ``postgresql`` binaries (``make setup``
installs them): ``initdb`` in a temporary directory (as the ``postgres`` user when the
tests run as root, which initdb refuses), ``pg_ctl start`` on a free loopback port
with password authentication, and ``pg_ctl stop`` at the end of the session. If the
server cannot start, every test that needs it FAILS with the reason: CI must prove
the PostgreSQL path, so it is never skipped.

``pg_url`` gives each test a fresh, empty database; ``store_url`` is parametrized over
``sqlite`` (a file under ``tmp_path``) and ``postgresql``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PG_PASSWORD = "test-pg-pass-not-real-42"  # a fake password: the redaction tests look for it
PG_USER = "postgres"


@dataclass
class PostgresServer:
    bin_dir: Path
    port: int
    password: str = PG_PASSWORD
    user: str = PG_USER

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=self.user, password=self.password,
                             dbname="postgres", autocommit=True) as conn:
            conn.execute(sql)

    def dump(self, database: str) -> str:
        """``pg_dump`` of one database (schema and data) as text."""
        env = dict(os.environ, PGPASSWORD=self.password)
        out = subprocess.run([str(self.bin_dir / "pg_dump"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user,
                              database], env=env, capture_output=True, text=True, timeout=120, check=True)
        return out.stdout


def _bin_dir() -> Path | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("pg_ctl")
    return Path(os.path.realpath(found)).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(cmd: list[str], user: str | None, **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=False, user=user, capture_output=True, text=True, timeout=120, **kwargs)


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A throwaway server for as long as the block runs (the fixture below, and bench/);
    raises ``RuntimeError`` with the reason when it cannot start."""
    bin_dir = _bin_dir()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        raise RuntimeError("PostgreSQL binaries not found (initdb/pg_ctl under /usr/lib/postgresql/*/bin); "
                           "run `make setup`, which installs Debian's postgresql package")
    as_root = os.geteuid() == 0
    user = PG_USER if as_root else None
    base = Path(tempfile.mkdtemp(prefix="rag-eval-pg-"))
    data, pwfile, log = base / "data", base / "pw", base / "server.log"
    pwfile.write_text(PG_PASSWORD + "\n")
    if as_root:
        shutil.chown(base, PG_USER)
        shutil.chown(pwfile, PG_USER)
    port = _free_port()
    started = False
    try:
        init = _run([str(bin_dir / "initdb"), "-D", str(data), "-U", PG_USER, "--pwfile", str(pwfile),
                     "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync"], user)
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr.strip()[-800:]}")
        options = (f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off -c synchronous_commit=off "
                   f"-c full_page_writes=off -c max_connections=60")
        start = _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60",
                      "start"], user)
        if start.returncode != 0:
            tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
            raise RuntimeError(f"PostgreSQL did not start: {start.stderr.strip()[-400:]} {tail}")
        started = True
        yield PostgresServer(bin_dir=bin_dir, port=port)
    finally:
        if started:
            _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], user)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    try:
        server = running_postgres()
        running = server.__enter__()
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield running
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database on the throwaway server; dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    postgres_server.admin(f"CREATE DATABASE {name}")
    yield postgres_server.url(name)
    postgres_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store location on each backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture(params=["sqlite", "postgresql"])
def dashboard_backend(request: pytest.FixtureRequest, rag_eval_home: Path,
                      monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The dashboard's run store on each backend: the default SQLite file in the test's
    ``RAG_EVAL_HOME``, then ``RAG_EVAL_DB_URL`` naming a fresh PostgreSQL database. Name
    it before fixtures that write runs, so they write where the pages read."""
    if request.param == "postgresql":
        monkeypatch.setenv("RAG_EVAL_DB_URL", str(request.getfixturevalue("pg_url")))
    yield str(request.param)
    if request.param == "postgresql":  # nothing fell back to the local file
        assert not (rag_eval_home / "runs.sqlite").exists(), "a page wrote runs.sqlite with RAG_EVAL_DB_URL set"
