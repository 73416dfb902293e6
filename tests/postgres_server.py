"""A throwaway PostgreSQL server for the history tests (a pytest plugin of tests/conftest.py).

The session's first test that needs it finds the server binaries (``initdb``, ``pg_ctl``,
``postgres``), initialises a cluster in a temporary directory and starts it on a free port of
127.0.0.1, its unix socket in that directory; the session's end stops it and deletes the
directory (in a process of its own that the run does not wait for). As root, the binaries run
as the ``postgres`` user (PostgreSQL refuses root). Without binaries or psycopg, the tests
that need a server are skipped, saying so. Under pytest-xdist each worker starts its own (about
2 seconds, mostly initdb).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.history.backend import Index
from pytest_qbench.history.database import open_index
from pytest_qbench.history.dburl import ENV_VAR


BINARIES = ("initdb", "pg_ctl", "postgres")
USER = "qbench"
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
"""Durability is not under test; these make the server start and write faster."""


def find_bindir() -> Path | None:
    """A directory holding initdb, pg_ctl and postgres: ``$QBENCH_TEST_PG_BIN``, the one of
    ``pg_ctl`` on PATH, ``pg_config --bindir``, or the newest ``/usr/lib/postgresql/*/bin``."""
    candidates = [os.environ.get("QBENCH_TEST_PG_BIN", "")]
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(str(Path(on_path).resolve().parent))
    pg_config = shutil.which("pg_config")
    if pg_config:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(done.stdout.strip())
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(versions, key=lambda p: int(Path(p).parent.name), reverse=True)
    for candidate in filter(None, candidates):
        if all((Path(candidate) / name).is_file() for name in BINARIES):
            return Path(candidate)
    return None


@dataclass
class PostgresServer:
    """A running server; ``new_database()`` gives each test a database of its own."""

    bindir: Path
    base: Path
    port: int
    password: str
    run_as: list[str]
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    def url(self, dbname: str = "postgres", *, password: bool = True) -> str:
        """The URL of ``dbname`` over TCP (with the password unless told not to)."""
        secret = f":{self.password}" if password else ""
        return f"postgresql://{USER}{secret}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """Create an empty database; return its URL."""
        import psycopg

        name = f"qb{os.getpid()}_{next(self._numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a server binary (as the postgres user when this is root)."""
        return subprocess.run(
            [*self.run_as, str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            cwd=self.base,
            check=False,
        )

    def start(self) -> None:
        """initdb, then start on a free port (another one if that port was taken meanwhile)."""
        pwfile = self.base / "password"
        pwfile.write_text(self.password + "\n")
        self._give_away(pwfile)
        done = self.run(
            "initdb",
            "-D",
            str(self.base / "data"),
            "-U",
            USER,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        if done.returncode:
            raise RuntimeError(f"initdb failed:\n{done.stdout}{done.stderr}")
        for _attempt in range(3):
            self.port = free_port()
            options = f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 "
            started = self.run(
                "pg_ctl", "-D", str(self.base / "data"), "-l", str(self.base / "log"),
                "-w", "-t", "30", "-o", options + SERVER_OPTIONS, "start",
            )  # fmt: skip
            if started.returncode == 0:
                return
        log = (self.base / "log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"PostgreSQL did not start:\n{started.stderr}\n{log}")

    def stop(self) -> None:
        """Stop the server and delete its directory. ``immediate``: no shutdown checkpoint of
        the session's hundreds of databases (dirty pages written out only to be deleted); the
        tests read what they wrote through the running server, never through its files."""
        try:
            self.run("pg_ctl", "-D", str(self.base / "data"), "-m", "immediate", "-w", "stop")
        finally:
            _delete_behind(self.base)

    def _give_away(self, path: Path) -> None:
        if self.run_as:
            shutil.chown(path, user="postgres")


def _delete_behind(path: Path) -> None:
    """Delete ``path`` in a process of its own that nothing waits for: a session's cluster
    holds hundreds of databases and their WAL (about 1 GB), whose deletion on a busy disk held
    each worker's last test for 40-50 s, though no test reads its outcome. A shell starts the
    deletion in the background and exits at once, so no ``Popen`` of a running process is left
    for Python to warn about at exit."""
    try:
        subprocess.run(
            ["sh", "-c", 'rm -rf -- "$1" &', "sh", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        shutil.rmtree(path, ignore_errors=True)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server() -> PostgresServer:
    """A started server, or a skip saying what is missing."""
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: install "
            "PostgreSQL (apt-get install postgresql) or set QBENCH_TEST_PG_BIN"
        )
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run PostgreSQL as")
        run_as = ["runuser", "-u", "postgres", "--"]
    base = Path(tempfile.mkdtemp(prefix="qbench-pg-"))  # short: the socket path has a limit
    server = PostgresServer(bindir, base, 0, secrets.token_hex(8), run_as)
    server._give_away(base)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session (skips without psycopg or server binaries)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
    server = start_server()
    yield server
    server.stop()


def open_and_create(urls: list[str], together: Any) -> None:
    """Open the index of each of ``urls`` in turn, making its tables, each once every process
    sharing the barrier ``together`` got there (a process's target: this module imports
    little, so that spawning is quick)."""
    for url in urls:
        together.wait(60)
        open_index(None, url, create=True).close()


@dataclass
class HistoryDB:
    """Where a test's history index is: the local SQLite file, or a fresh PostgreSQL database."""

    qbench_dir: Path
    url: str | None

    @property
    def backend(self) -> str:
        return "sqlite" if self.url is None else "postgres"

    def open(self, *, create: bool = False) -> Index:
        """The index (``open_index``)."""
        return open_index(self.qbench_dir, self.url, create=create)

    def query(self, sql_text: str, parameters: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """The rows of one statement (``?`` placeholders)."""
        index = self.open()
        try:
            return index.read(lambda cursor: list(cursor.execute(sql_text, parameters).fetchall()))
        finally:
            index.close()


@pytest.fixture(params=["sqlite", "postgres"])
def history_db(request: pytest.FixtureRequest, tmp_path: Path) -> HistoryDB:
    """The history index of a test, on each backend: ``<tmp_path>/index.sqlite``, or a new
    database of the session's PostgreSQL server."""
    if request.param == "sqlite":
        return HistoryDB(tmp_path, None)
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return HistoryDB(tmp_path, server.new_database())


@pytest.fixture(autouse=True)
def _no_outer_history_db(monkeypatch: pytest.MonkeyPatch) -> None:
    """A QBENCH_DB of the machine running the tests (tox passes QBENCH_*) reaches no test."""
    monkeypatch.delenv(ENV_VAR, raising=False)
