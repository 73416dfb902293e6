"""History on PostgreSQL: where the setting comes from, errors that name the fix, machines writing
at the same time, retention across machines, and real pytest runs with qbench_db (issue 5).

The behaviour both backends share is tested on both in test_history_index.py and
test_history_cli.py (the ``history_db`` fixture); the server is tests/postgres_server.py's.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.synchronize
import sys
from pathlib import Path
from typing import Any

import pytest
from history_data import index_args
from history_data import index_reports
from history_data import report
from history_data import result
from history_data import run_at_once
from history_data import write_run
from history_data import writer_runs
from postgres_server import PostgresServer
from postgres_server import free_port
from postgres_server import open_and_create

from pytest_qbench.cli import main
from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.redact import Redactor
from pytest_qbench.history.database import configured_db
from pytest_qbench.history.database import ini_value
from pytest_qbench.history.database import open_index
from pytest_qbench.history.database import require_psycopg
from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.history.dburl import parse_db
from pytest_qbench.history.dburl import redact
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.queries import list_runs
from pytest_qbench.history.session_end import record_run

from conftest import RunQBench


@pytest.fixture
def db_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database."""
    return postgres_server.new_database()


# --- the setting -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://ci:s3cret@db:5432/qbench", "postgresql://ci:***@db:5432/qbench"),
        ("postgres://ci@db/qbench", "postgres://ci@db/qbench"),
        ("postgresql://ci@/qbench?host=/run/pg&password=s3cret", "host=/run/pg&password=***"),
        ("postgresql://ci:p%40ss@h1:5432,h2:5433/q", "postgresql://ci:***@h1:5432,h2:5433/q"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    """The password, in the user part or the query, never reaches a message."""
    assert shown in redact(url)
    assert "s3cret" not in redact(url) and "p%40ss" not in redact(url)


def test_url_passwords_never_reach_a_report() -> None:
    """A URL's password in any environment variable (QBENCH_DB, DATABASE_URL) is redacted
    wherever it shows; on the command line, every URL's password is."""
    redact_text = Redactor({"QBENCH_DB": "postgresql://ci:longsecret@db/q", "HOME": "/root"})
    assert redact_text("connect with longsecret") == "connect with [redacted]"
    assert redact_text.argv(["--qbench-db=postgresql://ci:pw@db/q", "-k", "a:b@c"]) == [
        "--qbench-db=postgresql://ci:[redacted]@db/q",
        "-k",
        "a:b@c",
    ]


@pytest.mark.parametrize("value", ["", None, "sqlite", " sqlite "])
def test_sqlite_or_nothing_is_the_local_index(value: str | None) -> None:
    """No value, or 'sqlite', names <qbench dir>/index.sqlite."""
    assert parse_db(value) is None


@pytest.mark.parametrize("value", ["mysql://u@h/db", "db.example.com:5432", "postgresql:/x"])
def test_a_value_that_is_not_a_postgresql_url_is_refused(value: str) -> None:
    """The message names the setting, the value and the form wanted."""
    with pytest.raises(
        HistoryError, match=r"^--qbench-db is not a PostgreSQL URL, given: "
    ) as info:
        parse_db(value)
    assert "give postgresql://USER@HOST:PORT/DBNAME (or 'sqlite' for the local index)" in str(
        info.value
    )
    assert info.value.slug == "db-url"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\nqbench_db = {url}\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\nqbench_db = "{url}"\n'),
        ("pyproject.toml", '[tool.pytest]\nqbench_db = "{url}"\n'),
        ("pytest.toml", '[pytest]\nqbench_db = "{url}"\n'),
        ("tox.ini", "[tox]\n[pytest]\nqbench_db = {url}\n"),
        ("setup.cfg", "[tool:pytest]\nqbench_db = {url}\n"),
    ],
)
def test_commands_read_qbench_db_where_pytest_would(tmp_path: Path, name: str, text: str) -> None:
    """The configuration file pytest reads, from the working directory up, gives qbench_db."""
    url = "postgresql://ci@db/qbench"
    (tmp_path / name).write_text(text.format(url=url))
    (tmp_path / "sub").mkdir()
    assert ini_value(tmp_path / "sub", "qbench_db") == (tmp_path / name, url)


def test_commands_take_db_then_the_environment_then_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--db wins over QBENCH_DB, which wins over the file; the first configuration file found
    counts, as for pytest, even without the value; 'sqlite' opts out of a database."""
    pytest.importorskip("psycopg")  # a URL needs it
    (tmp_path / "pytest.ini").write_text("[pytest]\nqbench_db = postgresql://file@db/q\n")
    assert configured_db(None, tmp_path) == "postgresql://file@db/q"
    monkeypatch.setenv(ENV_VAR, "postgresql://env@db/q")
    assert configured_db(None, tmp_path) == "postgresql://env@db/q"
    assert configured_db("postgresql://flag@db/q", tmp_path) == "postgresql://flag@db/q"
    assert configured_db("sqlite", tmp_path) is None
    monkeypatch.delenv(ENV_VAR)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "tox.ini").write_text("[pytest]\naddopts = -q\n")
    assert configured_db(None, tmp_path / "sub") is None
    (tmp_path / "sub" / "setup.cfg").write_text("[tool:pytest]\nqbench_db = nonsense\n")
    assert configured_db(None, tmp_path / "sub") is None  # tox.ini comes first
    (tmp_path / "sub" / "tox.ini").unlink()
    with pytest.raises(HistoryError, match=r"^qbench_db in .*setup.cfg is not a PostgreSQL URL"):
        configured_db(None, tmp_path / "sub")


def test_without_psycopg_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> None:
    """One line: which setting, and what to install; pytest stops before any test runs."""
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(HistoryError) as info:
        require_psycopg("--db")
    message = str(info.value)
    assert message.startswith("--db is a PostgreSQL URL, which needs psycopg (")
    assert message.endswith(f"; install it: {sys.executable} -m pip install 'psycopg[binary]>=3.1'")
    assert "\n" not in message and info.value.slug == "postgres-missing"
    pytester.makepyfile(test_one="def test_ok(): pass")
    monkeypatch.setenv(ENV_VAR, "postgresql://ci@db/q")
    ran = pytester.runpytest("-p", "qbench")
    assert ran.ret == pytest.ExitCode.USAGE_ERROR
    ran.stderr.fnmatch_lines(
        [
            "ERROR: $QBENCH_DB is a PostgreSQL URL, which needs psycopg (*); install it: * -m pip install *"
        ]
    )


# --- connection problems -----------------------------------------------------------------------


@pytest.mark.engine
def test_an_unreachable_server_is_one_line_naming_the_url_and_the_fix(
    postgres_server: PostgresServer,
) -> None:
    """Nothing listens there: the URL without its password, the driver's reason, what to check."""
    url = f"postgresql://qbench:s3cret@127.0.0.1:{free_port()}/qbench"
    with pytest.raises(HistoryError) as info:
        open_index(None, url)
    message = str(info.value)
    assert message.startswith(
        "cannot connect to the history database postgresql://qbench:***@127.0.0.1:"
    )
    assert "Connection refused" in message and "s3cret" not in message and "\n" not in message
    assert message.endswith("or set QBENCH_DB=sqlite to use the local index")
    assert info.value.slug == "db-connect"


@pytest.mark.engine
def test_a_wrong_password_or_database_is_a_connect_error(postgres_server: PostgresServer) -> None:
    """The server's refusal is in the message; the password is not."""
    wrong = postgres_server.url().replace(postgres_server.password, "wrong-pass")
    with pytest.raises(HistoryError, match="password authentication failed") as info:
        open_index(None, wrong)
    assert "wrong-pass" not in str(info.value)
    with pytest.raises(HistoryError, match='database "nowhere" does not exist'):
        open_index(None, postgres_server.url("nowhere"))


def test_a_url_libpq_refuses_is_a_url_error() -> None:
    """An unknown query parameter: refused before connecting, naming the URL."""
    pytest.importorskip("psycopg")
    with pytest.raises(HistoryError, match='invalid URI query parameter: "colour"') as info:
        open_index(None, "postgresql://ci@db/q?colour=red")
    assert info.value.slug == "db-url"


@pytest.mark.engine
def test_a_lost_connection_is_made_again(db_url: str, postgres_server: PostgresServer) -> None:
    """The server ends the session (a restart, a proxy's timeout): the next transaction
    reconnects and succeeds."""
    import psycopg

    index_reports(Path(), report("r1", 0, [result("a")]), db=db_url)
    index = open_index(None, db_url)
    try:
        pid = index._conn.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(postgres_server.url(), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert [r.run_id for r in list_runs(index, 5)] == ["r1"]
    finally:
        index.close()


@pytest.mark.engine
def test_values_json_cannot_carry_are_indexed_too(db_url: str) -> None:
    """A NUL in a failure message (PostgreSQL text holds none) and a NaN score (JSON has none)
    are indexed: the NUL as U+FFFD, the NaN as NaN. The models refuse a NaN score (issue 12.11),
    so the record is changed after it was built: the backend still copes with one."""
    failing = result("a", "failed", message="bad\x00byte")
    scored = result("b", metrics={"m": 0.5})
    record = report("r1", 0, [failing, scored])
    record["results"][1]["metric_results"][0]["score"] = float("nan")
    index_reports(Path(), record, db=db_url)
    index = open_index(None, db_url)
    try:
        rows = index.read(
            lambda c: c.execute("SELECT message FROM results WHERE message IS NOT NULL").fetchall()
        )
        scores = index.read(lambda c: c.execute("SELECT score FROM metrics").fetchall())
    finally:
        index.close()
    assert rows == [("bad\ufffdbyte",)]
    assert str(scores[0][0]) == "nan"


# --- permissions -------------------------------------------------------------------------------


@pytest.mark.engine
def test_what_each_database_user_may_do(db_url: str, postgres_server: PostgresServer) -> None:
    """A user without CREATE cannot make the tables; with SELECT only it reads the history and
    cannot record runs; each refusal says which privileges are needed."""
    import psycopg

    reader = f"reader{free_port()}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {reader} LOGIN PASSWORD 'readpw'")
    reader_url = db_url.replace(f"qbench:{postgres_server.password}@", f"{reader}:readpw@")
    with pytest.raises(HistoryError, match="permission denied for database") as info:
        open_index(None, reader_url, create=True)
    assert info.value.slug == "db-permission"
    assert "needs CREATE on the database" in str(info.value)
    index_reports(Path(), report("r1", 0, [result("a")]), db=db_url)
    with pytest.raises(HistoryError, match="permission denied for schema qbench") as info:
        open_index(None, reader_url)
    assert info.value.slug == "db-permission"
    with psycopg.connect(db_url, autocommit=True) as owner:
        owner.execute(f"GRANT USAGE ON SCHEMA qbench TO {reader}")
        owner.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA qbench TO {reader}")
    index = open_index(None, reader_url)
    try:
        assert [r.run_id for r in list_runs(index, 5)] == ["r1"]
        record = report("r2", 1, [result("a")])
        with pytest.raises(HistoryError, match="permission denied for table runs") as info:
            index_run(index, *index_args(record))
        assert info.value.slug == "db-permission"
    finally:
        index.close()


# --- writers at the same time ------------------------------------------------------------------

WRITERS, RUNS_EACH, RESULTS_EACH = 4, 6, 150


def _write_runs(url: str, writer: int, keep: int, start: multiprocessing.synchronize.Event) -> None:
    start.wait(30)
    records = writer_runs(writer, RUNS_EACH, RESULTS_EACH, own_test=True)
    index_reports(Path(), *records, keep_runs=keep, db=url)


def _read_runs(url: str, start: multiprocessing.synchronize.Event, seen: Any) -> None:
    start.wait(30)
    counts: set[int] = set()
    for _ in range(30):
        try:
            index = open_index(None, url)
        except HistoryError:  # no writer has created the tables yet
            continue
        try:
            rows = index.read(
                lambda cursor: cursor.execute(
                    "SELECT COUNT(res.run_ref) FROM runs r "
                    "LEFT JOIN results res ON res.run_ref = r.id GROUP BY r.id"
                ).fetchall()
            )
        finally:
            index.close()
        counts.update(row[0] for row in rows)
    seen.put(sorted(counts))


@pytest.mark.engine
@pytest.mark.parametrize("keep", [0, 10])
def test_machines_writing_at_the_same_time_lose_no_run(db_url: str, keep: int) -> None:
    """Four processes start on an empty database at once (so they race to create the tables)
    and index 6 runs each, sharing most test names, one reading meanwhile: every run is there
    whole, no reader saw a half-written run; with retention, exactly the newest runs stay (the
    last indexed: of each machine, its last ones) and no test is left without results."""
    ctx = multiprocessing.get_context("spawn")
    start, seen = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_write_runs, args=(db_url, w, keep, start)) for w in range(WRITERS)]
    procs.append(ctx.Process(target=_read_runs, args=(db_url, start, seen)))
    assert run_at_once(start, procs) == [0] * (WRITERS + 1)
    every = {f"w{w}-r{n}" for w in range(WRITERS) for n in range(RUNS_EACH)}
    index = open_index(None, db_url)
    try:
        runs = index.read(lambda c: c.execute("SELECT run_id, id FROM runs").fetchall())
        per_run = index.read(
            lambda c: c.execute("SELECT COUNT(*) FROM results GROUP BY run_ref").fetchall()
        )
        orphans = index.read(
            lambda c: c.execute(
                "SELECT COUNT(*) FROM tests t WHERE NOT EXISTS "
                "(SELECT 1 FROM results res WHERE res.test_ref = t.id)"
            ).fetchone()
        )
        metrics = index.read(lambda c: c.execute("SELECT COUNT(*) FROM metrics").fetchone())
    finally:
        index.close()
    kept = {run_id for run_id, _ in runs}
    assert kept <= every and len(kept) == (keep or len(every))
    for w in range(WRITERS):  # runs are kept in the order they were indexed: a machine's last
        mine = [n for n in range(RUNS_EACH) if f"w{w}-r{n}" in kept]
        assert mine == list(range(RUNS_EACH - len(mine), RUNS_EACH))
    expected = kept
    assert per_run == [(RESULTS_EACH,)] * len(expected)
    assert (orphans[0], metrics[0]) == (0, len(expected))
    # the reader put it before it exited: a wait for the queue's pipe only (a safety net)
    assert set(seen.get(timeout=600)) <= {RESULTS_EACH}


@pytest.mark.engine
def test_machines_starting_on_an_empty_database_create_the_tables_once(
    postgres_server: PostgresServer,
) -> None:
    """Four processes at once, three times: the tables are made once, and each process that
    waited for the creator sees them (it once failed with "relation meta already exists").
    The same four processes make the three rounds, each on a new database, all four let go
    together by a barrier."""
    ctx = multiprocessing.get_context("spawn")
    urls = [postgres_server.new_database() for _round in range(3)]
    together = ctx.Barrier(4)
    procs = [ctx.Process(target=open_and_create, args=(urls, together)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0] * 4


@pytest.mark.engine
def test_a_writer_waits_for_the_lock_then_gives_up_clearly(db_url: str) -> None:
    """Another writer holding the lock longer than `wait`: a clear error, nothing written; once
    it is free, the same write succeeds."""
    import psycopg

    from pytest_qbench.history.postgres import WRITE_LOCK
    from pytest_qbench.history.postgres import PostgresIndex

    index_reports(Path(), report("r1", 0, [result("a")]), db=db_url)
    index = PostgresIndex(db_url, wait=0.3)
    record = report("r2", 1, [result("a")])
    try:
        with psycopg.connect(db_url, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK,))
            with pytest.raises(HistoryError, match="another qbench run held the write lock for"):
                index_run(index, *index_args(record))
            assert [r.run_id for r in list_runs(index, 5)] == ["r1"]  # readers never wait
        index_run(index, *index_args(record))
        assert [r.run_id for r in list_runs(index, 5)] == ["r2", "r1"]
    finally:
        index.close()


@pytest.mark.engine
@pytest.mark.parametrize("sqlstate", ["40001", "40P01"])
def test_a_serialization_failure_or_deadlock_retries_the_transaction(
    db_url: str, sqlstate: str
) -> None:
    """The whole transaction runs again, and its work is committed once."""
    index = open_index(None, db_url, create=True)
    attempts = []

    def work(cursor: Any) -> int:
        attempts.append(1)
        cursor.execute("INSERT INTO meta (key, value) VALUES ('probe', ?)", (str(len(attempts)),))
        if len(attempts) < 3:
            cursor.execute(
                f"DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '{sqlstate}'; END $$"
            )
        return len(attempts)

    try:
        assert index.write(work) == 3
        probe = index.read(
            lambda c: c.execute("SELECT value FROM meta WHERE key = 'probe'").fetchall()
        )
        assert probe == [("3",)]
    finally:
        index.close()


# --- retention across machines -----------------------------------------------------------------


@pytest.mark.engine
def test_retention_deletes_runs_everywhere_and_directories_here(
    tmp_path: Path, db_url: str
) -> None:
    """Two machines share the database with qbench_keep_runs = 2: the database keeps the two
    newest runs of both; each machine deletes only its own run directories."""
    machine_a, machine_b = tmp_path / "a", tmp_path / "b"
    removed = []
    for qbench_dir, run_id, minute in [
        (machine_a, "a1", 0),
        (machine_a, "a2", 1),
        (machine_b, "b1", 2),
        (machine_b, "b2", 3),
        (machine_b, "b3", 4),
    ]:
        record = report(run_id, minute, [result("test_x")])
        write_run(qbench_dir, record)
        done = record_run(qbench_dir, record, None, record["results"], keep_runs=2, db=db_url)
        removed.append(done.removed)
    assert removed == [[], [], ["a1"], ["a2"], ["b1"]]
    index = open_index(None, db_url)
    try:
        assert [r.run_id for r in list_runs(index, 10)] == ["b3", "b2"]
    finally:
        index.close()
    assert sorted(p.name for p in (machine_a / "runs").iterdir()) == ["a1", "a2"]
    assert sorted(p.name for p in (machine_b / "runs").iterdir()) == ["b2", "b3"]


# --- the commands and the MCP tools ------------------------------------------------------------


@pytest.mark.engine
def test_commands_use_the_database_without_a_qbench_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    db_url: str,
) -> None:
    """On a machine without .qbench: qbench index REPORT.json --db URL, then runs and show."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(report("merged-1", 0, [result("a"), result("b", "failed")])))
    assert main(["index", str(path), "--db", db_url, "--json"]) == 0
    indexed = json.loads(capsys.readouterr().out)
    assert indexed["index"] == db_url.replace(db_url.split(":")[2].split("@")[0], "***")
    assert main(["show", "last", "--db", db_url, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["run_id"], shown["report"]) == ("merged-1", None)
    assert [f["nodeid"] for f in shown["failures"]] == ["t.py::b"]
    assert main(["runs", "--db", "postgresql://qbench@127.0.0.1:1/x"]) == 1
    assert "cannot connect to the history database" in capsys.readouterr().err


@pytest.mark.engine
def test_the_mcp_tools_read_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    """list_runs and flaky_tests read the database the project's configuration names."""
    from pytest_qbench.mcp import run_history as runs
    from pytest_qbench.mcp.config import ServerConfig

    records = [
        report(f"r{i}", i, [result("flip", "failed" if i % 2 else "passed")]) for i in range(4)
    ]
    index_reports(Path(), *records, db=db_url)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nqbench_db = {db_url}\n")
    config = ServerConfig(root=tmp_path, qbench_dir=tmp_path / ".qbench")
    assert [r.run_id for r in runs.recent_runs(config, 10).runs] == ["r3", "r2", "r1", "r0"]
    assert [t.nodeid for t in runs.flaky(config, 10, 30).tests] == ["t.py::flip"]


def test_the_mcp_server_logs_its_tool_calls_in_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    """(issue 13.8) With qbench_db set, the server's tool calls are logged in the database
    (its tables made when missing), where qbench mcp-log --db reads them."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from pytest_qbench.history.toollog import tool_totals
    from pytest_qbench.mcp.config import ServerConfig
    from pytest_qbench.mcp.server import build_server

    (tmp_path / "pytest.ini").write_text(f"[pytest]\nqbench_db = {db_url}\n")
    config = ServerConfig(root=tmp_path, qbench_dir=tmp_path / ".qbench")

    async def calls() -> None:
        async with Client(build_server(config), raise_exceptions=True) as client:
            await client.call_tool("list_runs", {"limit": 3})
            await client.call_tool("get_run_output", {"run_id": "nope"})

    anyio.run(calls)
    assert not (tmp_path / ".qbench" / "index.sqlite").exists()
    index = open_index(None, db_url)
    try:
        totals = {t.tool: (t.calls, t.succeeded) for t in tool_totals(index)}
    finally:
        index.close()
    assert totals == {"get_run_output": (1, 0), "list_runs": (1, 1)}
    monkeypatch.chdir(tmp_path)
    assert main(["mcp-log", "--db", db_url, "--json"]) == 0


# --- real pytest runs --------------------------------------------------------------------------

SUITE = """
    import pathlib

    def test_flaky():
        assert pathlib.Path("plan.txt").read_text() == "pass"

    def test_ok():
        pass
"""


def run_suite(pytester: pytest.Pytester, run_qbench: RunQBench, run_id: str, plan: str) -> Any:
    """One run of SUITE, test_flaky passing or failing as ``plan`` says."""
    pytester.path.joinpath("plan.txt").write_text(plan)
    return run_qbench(f"--qbench-run-id={run_id}", run_dir=run_id)


def test_pytest_runs_with_qbench_db_share_their_history(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    db_url: str,
) -> None:
    """qbench_db in the ini file: each run is indexed in the database (no index.sqlite), a
    failing test carries its history, and qbench flaky reads the same database."""
    pytester.makeini(f"[pytest]\nqbench_db = {db_url}\n")
    pytester.makepyfile(test_suite=SUITE)
    runs = [run_suite(pytester, run_qbench, f"r{i}", p) for i, p in enumerate(["fail", "pass"])]
    third = run_suite(pytester, run_qbench, "r2", "fail")
    assert [r.result.ret for r in [*runs, third]] == [1, 0, 1]
    history = third.by_name("test_flaky").history
    assert history is not None
    assert (history.status, history.last_passed_run) == ("known flaky", "r1")
    assert not (pytester.path / ".qbench" / "index.sqlite").exists()
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()
    assert main(["flaky", "--json"]) == 0
    flaky = json.loads(capsys.readouterr().out)
    assert [t["nodeid"] for t in flaky["tests"]] == ["test_suite.py::test_flaky"]


def test_the_command_line_wins_over_the_environment_and_the_ini_file(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    db_url: str,
) -> None:
    """--qbench-db, then QBENCH_DB, then ini qbench_db; --qbench-db=sqlite uses the local index."""
    pytester.makeini("[pytest]\nqbench_db = postgresql://nobody@127.0.0.1:1/none\n")
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv(ENV_VAR, db_url)
    first = run_suite(pytester, run_qbench, "env", "pass")
    assert not first.report.warnings
    run_qbench("--qbench-db=sqlite", "--qbench-run-id=local", run_dir="local")
    assert (pytester.path / ".qbench" / "index.sqlite").is_file()
    index = open_index(None, db_url)
    try:
        assert [r.run_id for r in list_runs(index, 5)] == ["env"]
    finally:
        index.close()


def test_an_unreachable_database_costs_the_history_only(
    pytester: pytest.Pytester, run_qbench: RunQBench, postgres_server: PostgresServer
) -> None:
    """The server is down: the reports are written without history, a warning names the URL
    (never its password), and pytest's exit status is unchanged."""
    url = f"postgresql://ci:s3cret@127.0.0.1:{free_port()}/qbench"
    pytester.makepyfile(test_one="def test_bad(): assert 0")
    run = run_qbench(f"--qbench-db={url}")
    assert run.result.ret == 1
    assert run.by_name("test_bad").history is None
    (warning,) = [w for w in run.report.warnings if w.code == "history"]
    assert warning.message.startswith(
        "run not indexed, so no history in its reports: cannot connect to the history database "
        "postgresql://ci:***@127.0.0.1:"
    )
    run.result.stdout.fnmatch_lines(["qbench: run not indexed*postgresql://ci:***@*"])
    written = (run.run_dir / "report.json").read_text() + run.markdown + run.result.stdout.str()
    assert "s3cret" not in written


def test_a_bad_qbench_db_is_refused_before_any_test_runs(pytester: pytest.Pytester) -> None:
    """A value that is not a PostgreSQL URL: a usage error naming where it came from."""
    pytester.makepyfile(test_one="def test_ok(): pass")
    pytester.makeini("[pytest]\nqbench_db = mysql://u:pw@h/db\n")
    ran = pytester.runpytest("-p", "qbench")
    assert ran.ret == pytest.ExitCode.USAGE_ERROR
    ran.stderr.fnmatch_lines(
        ["ERROR: ini qbench_db is not a PostgreSQL URL, given: mysql://u:***@h/db; give *"]
    )
