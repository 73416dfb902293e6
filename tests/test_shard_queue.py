"""``--qbench-queue=NAME``: several real pytest processes pulling units from one queue in the
history database; a killed machine's unit taken by another; a retried machine gets back its own
units (issue 25). SQLite here (processes on one machine); PostgreSQL in
test_history_postgres.py's style at the end, with a real server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from child_pytest import start_child
from postgres_server import PostgresServer


pytestmark = pytest.mark.runs_pytest  # pytest with qbench pulling its tests from the queue


MODULE = """
import time
import pytest

@pytest.fixture(scope="module")
def fixture():
    time.sleep(0.05)
    yield

def test_one(fixture):
    time.sleep({sleep})

def test_two(fixture):
    pass

def test_three(fixture):
    pass
"""
CONFTEST = """
import os
import pathlib
import time

from pytest_qbench.plugin import queue

# a machine whose queue's last units others hold looks again every 0.1 s, not every 2 s: the
# machines here end within the second, and what a look finds is the same
queue.POLL = 0.1

WAITED = []

def pytest_runtest_call(item):
    worker = os.environ.get("QBENCH_QUEUE_WORKER")
    if worker == "victim":
        os._exit(9)  # the machine dies in its first test
    if worker == "stopper":
        raise AssertionError("fails, and -x stops the machine")
    if worker in ("pair-a", "pair-b") and not WAITED:  # each runs a unit before the other ends
        WAITED.append(worker)
        pathlib.Path(item.config.rootpath, worker).touch()
        other = pathlib.Path(item.config.rootpath, "pair-b" if worker == "pair-a" else "pair-a")
        deadline = time.monotonic() + 300
        while not other.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
"""
MODULES = 4


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for number in range(MODULES):
        (tmp_path / f"test_m{number}.py").write_text(MODULE.format(sleep=0.02 * number))
    (tmp_path / "conftest.py").write_text(CONFTEST)
    return tmp_path


def everything() -> list[str]:
    return sorted(
        f"test_m{n}.py::test_{name}" for n in range(MODULES) for name in ("one", "two", "three")
    )


def start(suite: Path, worker: str, *args: str, lease: str = "300") -> subprocess.Popen[str]:
    run_id = f"{worker}-{len(list(suite.glob('.qbench/runs/*')))}"
    return start_child(
        suite,
        "-p",
        "no:cacheprovider",
        *args,
        run_id=run_id,
        env={"QBENCH_QUEUE_WORKER": worker, "QBENCH_QUEUE_LEASE": lease},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    out, _ = process.communicate(timeout=600)
    return out


def failed_outputs(processes: list[subprocess.Popen[str]], outputs: list[str]) -> str:
    """The whole output of each process that did not exit 0 (an assertion's repr of the list
    would cut them in the middle, where pytest's error is)."""
    return "\n\n".join(
        f"--- exit {p.returncode}:\n{out}"
        for p, out in zip(processes, outputs, strict=True)
        if p.returncode
    )


def ran(suite: Path, run_id: str) -> list[str]:
    report = json.loads((suite / ".qbench" / "runs" / run_id / "report.json").read_text())
    return [result["nodeid"] for result in report["results"]]


def test_processes_pulling_one_queue_run_every_test_exactly_once(suite: Path) -> None:
    processes = [start(suite, f"w{n}", "--qbench-queue=pipeline-1") for n in range(3)]
    outputs = [finish(p) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], failed_outputs(processes, outputs)
    runs = {p.name: ran(suite, p.name) for p in (suite / ".qbench" / "runs").iterdir()}
    assert sorted(n for nodeids in runs.values() for n in nodeids) == everything()
    joined = "\n".join(outputs)
    assert joined.count("(created)") == 1 and joined.count("(joined)") == 2
    assert " deselected in " in joined


def test_a_killed_machines_unit_is_run_by_another_after_its_lease(suite: Path) -> None:
    victim = start(suite, "victim", "--qbench-queue=pipeline-2", lease="1")
    finish(victim)
    assert victim.returncode == 9
    survivor = start(suite, "survivor", "--qbench-queue=pipeline-2")
    out = finish(survivor)
    assert survivor.returncode == 0, out
    (run_id,) = [
        p.name for p in (suite / ".qbench" / "runs").iterdir() if p.name.startswith("survivor")
    ]
    assert sorted(ran(suite, run_id)) == everything()  # the victim's claimed unit too


def test_a_retried_machine_gets_back_its_own_units(suite: Path) -> None:
    first = start(suite, "job-1", "--qbench-queue=pipeline-3")
    other = start(suite, "job-2", "--qbench-queue=pipeline-3")
    assert finish(first) and finish(other) and (first.returncode, other.returncode) == (0, 0)
    retried = start(suite, "job-1", "--qbench-queue=pipeline-3")
    out = finish(retried)
    assert retried.returncode == 0, out
    runs = sorted((suite / ".qbench" / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    names = [p.name for p in runs]
    first_run = next(n for n in names if n.startswith("job-1-0"))
    retry_run = next(n for n in names if n.startswith("job-1") and n != first_run)
    assert sorted(ran(suite, retry_run)) == sorted(ran(suite, first_run))


def test_a_merge_missing_a_queue_machines_report_is_not_green(suite: Path) -> None:
    """Two machines pull from one queue, each running at least a unit; the merge of one
    machine's report alone (the other's artifact lost) is not green: the queue's other tests
    ran nowhere, a note says how many, exit code 2. Before, it was `✅ 6 passed, 6 deselected`
    with exit code 0 (found on cachetools, sixth round). Both merged are whole and green."""
    from pytest_qbench.report.merge import Source
    from pytest_qbench.report.merge import merge_reports
    from pytest_qbench.report.models import TestReport
    from pytest_qbench.report.verdict import run_green

    pair = [start(suite, worker, "--qbench-queue=pipeline-5") for worker in ("pair-a", "pair-b")]
    outputs = [finish(p) for p in pair]
    assert [p.returncode for p in pair] == [0, 0], failed_outputs(pair, outputs)
    reports = [
        TestReport.model_validate_json((run / "report.json").read_text(encoding="utf-8"))
        for run in sorted((suite / ".qbench" / "runs").iterdir())
    ]
    assert all(0 < len(r.results) < len(everything()) for r in reports)
    for alone in reports:
        merged = merge_reports([Source("alone.json", alone)])
        assert merged.run.interrupted is True and merged.run.exit_code == 2
        assert not run_green(merged.model_dump(mode="json"))
        (note,) = [w.message for w in merged.warnings if w.code == "merge-missing-shards"]
        held = len(everything())
        assert note.startswith(f"queue pipeline-5: {held - len(alone.results)} of its {held} tests")
    whole = merge_reports([Source(f"{n}.json", r) for n, r in enumerate(reports)])
    assert whole.run.interrupted is False and whole.run.exit_code == 0
    assert run_green(whole.model_dump(mode="json"))
    assert sorted(r.nodeid for r in whole.results) == everything()
    # a machine stopped by -x at its first failure left the rest unrun on purpose: red for
    # the failure (exit code 1, as its pytest), not a missing report
    stopper = start(suite, "stopper", "-x", "--qbench-queue=pipeline-6")
    assert finish(stopper) and stopper.returncode == 1
    (stopped,) = [
        TestReport.model_validate_json((run / "report.json").read_text(encoding="utf-8"))
        for run in (suite / ".qbench" / "runs").iterdir()
        if run.name.startswith("stopper")
    ]
    alone = merge_reports([Source("stopped.json", stopped)])
    assert (alone.summary.failed, alone.run.exit_code, alone.run.interrupted) == (1, 1, False)
    assert not [w for w in alone.warnings if w.code == "merge-missing-shards"]


@pytest.mark.usefixtures("suite")
def test_four_processes_on_postgresql(suite: Path, postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    processes = [
        start(suite, f"pg{n}", "--qbench-queue=pipeline-pg", f"--qbench-db={url}") for n in range(4)
    ]
    outputs = [finish(p) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0, 0], failed_outputs(processes, outputs)
    runs = [ran(suite, p.name) for p in (suite / ".qbench" / "runs").iterdir()]
    assert sorted(n for nodeids in runs for n in nodeids) == everything()


def test_a_queue_goes_with_its_runs_under_retention(tmp_path: Path) -> None:
    """A queue created before the oldest run the index keeps is removed with the runs."""
    from history_data import index_args
    from history_data import report
    from history_data import result

    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.indexer import index_run
    from pytest_qbench.history.queue import claim_next
    from pytest_qbench.history.queue import create_queue
    from pytest_qbench.history.shardplan import Unit

    index = open_index(tmp_path, None, create=True)
    try:
        units = [Unit("a.py", ("a.py::t",), 1.0), Unit("b.py", ("b.py::t",), 0.5)]
        assert create_queue(index, "old", units) and not create_queue(index, "old", units)
        assert create_queue(index, "new", units)
        index.write(
            lambda c: c.execute(
                "UPDATE queue_units SET created_at = '2026-01-02T03:04:30.000000Z' WHERE queue = 'old'"
            )
        )
        for minute in range(3):  # runs at T0 + 0, 1, 2 minutes; keep the last one
            index_run(index, *index_args(report(f"r{minute}", minute, [result("a")])), keep_runs=1)
        assert claim_next(index, "old", "w", "r", 60) is None  # gone with the runs before it
        claim = claim_next(index, "new", "w", "r", 60)
        assert claim is not None and claim.unit == "a.py"  # longest first
    finally:
        index.close()


FROZEN_CONFTEST = """
import sqlite3
import sys
import time
from pathlib import Path

import pytest

FROZEN = 1326511294.0  # 2012-01-14, freezegun's favourite
LATE = []


def freeze_and_leak():
    # what freezegun's freeze_time(...).start() does, left unstopped: the time module's clocks,
    # and every module attribute holding one, replaced by a frozen one
    real = {time.time: lambda: FROZEN, time.monotonic: lambda: FROZEN}
    for module in list(sys.modules.values()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            try:
                fake = real.get(value)
            except TypeError:  # an unhashable attribute
                continue
            if fake is not None:
                setattr(module, name, fake)


@pytest.fixture(autouse=True)
def leases_in_the_future(request):
    yield
    if time.time() != FROZEN:
        return
    # the units this run holds must be leased into the future of the database's (real) clock,
    # or another machine takes them and runs their tests a second time
    index = Path(request.config.rootpath, ".qbench", "index.sqlite")
    with sqlite3.connect(index) as db:
        (past,) = db.execute(
            "SELECT COUNT(*) FROM queue_units WHERE run_id IS NOT NULL AND done = 0"
            " AND lease_until < (julianday('now') - 2440587.5) * 86400.0"
        ).fetchone()
    LATE.append(past)


def pytest_sessionfinish(session):
    Path(session.config.rootpath, "late.txt").write_text(" ".join(map(str, LATE)))
"""
LEAKER = """
from conftest import freeze_and_leak

def test_leaks_a_freeze():
    freeze_and_leak()

def test_two():
    pass

def test_three():
    pass
"""


def test_a_test_that_freezes_the_clock_does_not_expire_its_machines_leases(
    tmp_path: Path,
) -> None:
    """A test that freezes the clock and leaves it frozen (freezegun's ``start()`` without
    ``stop()``; a module-scoped freeze does the same until the module ends) made this machine
    lease its next units until 2012 + 300 s: another machine took them at once as a dead
    machine's and ran their tests a second time (found on freezegun's own suite, trial14). The
    leases are now from the database's clock."""
    (tmp_path / "conftest.py").write_text(FROZEN_CONFTEST)
    (tmp_path / "test_a.py").write_text(LEAKER)
    for name in ("b", "c"):
        (tmp_path / f"test_{name}.py").write_text("def test_one():\n    pass\n")
    machine = start(tmp_path, "frozen", "--qbench-queue=pipeline-7", lease="600")
    out = finish(machine)
    assert machine.returncode == 0, out
    late = (tmp_path / "late.txt").read_text().split()
    assert len(late) >= 3, out  # test_a's last two tests, and those after
    assert late == ["0"] * len(late), out


def test_a_unit_claimed_under_a_frozen_clock_is_still_renewed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A module-scoped freeze (freezegun) is on when the machine claims its next unit (before
    the module's last test): the claim's time was the frozen ``time.monotonic``, so once the
    freeze ended, the real clock never got ``lease / 4`` past it and the unit's lease was
    never renewed: another machine took it after the lease as a dead machine's. The renewals
    now keep qbench's own clock."""
    import time
    from types import SimpleNamespace

    from pytest_qbench.history.queue import Claim
    from pytest_qbench.plugin.queue import QueuePlugin

    claims: list[object] = []

    class Index:
        def claim(self, work: object) -> Claim | None:
            claims.append(work)
            return Claim("test_a.py", ("test_a.py::test_one",), 1.0) if len(claims) == 1 else None

    plugin = object.__new__(QueuePlugin)
    plugin.index = Index()  # type: ignore[assignment]
    plugin.name, plugin.lease, plugin.units, plugin.expected = "q", 1.0, 0, 0.0
    plugin.pid = os.getpid()  # the process that opened the queue
    plugin.session = SimpleNamespace(run_id="r")  # type: ignore[assignment]
    plugin.shard = SimpleNamespace(worker="w")  # type: ignore[assignment]
    with monkeypatch.context() as frozen:
        frozen.setattr(time, "monotonic", lambda: 1326511294.0)
        assert plugin._claim(wait=False) is not None
    time.sleep(plugin.lease / 4 + 0.05)  # at least a quarter of the lease later, really
    plugin._keep_alive()
    assert len(claims) == 2  # renewed
