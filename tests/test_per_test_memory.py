"""What a qbench run keeps per test for the whole run: nothing that grows with the tests
(issue 28: the run's extra peak memory flat in the number of tests).

Measured in a fresh process each (how CPython lays out a report's attributes depends on what
the process did before), as the memory that qbench's own lines allocated (``tracemalloc``) and
that is still held when the session ends, after a full collection, at N and at 4N tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from child_pytest import child_env


SMALL, LARGE = 300, 1_200
MAX_BYTES_PER_TEST = 48
"""How much more qbench may hold a test: 36 bytes measured from 300 to 1 200 tests, the index's
row of each passing, skipped or xfailed result that the stream writer keeps (a reference to the
node id pytest holds, three times and an outcome packed in 25 bytes:
``test_history_written.py``), so that the session end never reads its own lines back (14.6 k
instructions a result fewer); 0.5 to 1.1 bytes before that; 78 to 85 before that again (a
failing test's report, one in ten here, which pytest's terminal reporter keeps to the end, 768
bytes larger for the failure's facts qbench had put on it under a name of their own, first set
after the names the reports share were settled). pytest itself keeps every report to the end
(several kilobytes a test). Measured after the stream's last batch is written: the lines
waiting (up to 64) depend on its timer, so without that the same build measured 25.7 to 60.3."""

PROBE = """
import gc, json, os, tracemalloc

import pytest


def pytest_configure(config):
    tracemalloc.start()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    # the stream's last batch (at most store.BATCH_RECORDS lines, however many tests ran) is
    # written first: how many lines wait depends on the timer, not on the number of tests
    session.config.pluginmanager.get_plugin("qbench-session").plugin.flush_stream()
    gc.collect()
    ours = tracemalloc.Filter(True, "*pytest_qbench*")
    held = tracemalloc.take_snapshot().filter_traces([ours]).traces
    with open(os.environ["MEMORY_OUT"], "w") as handle:
        json.dump(sum(trace.size for trace in held), handle)
    yield
"""

SUITE = """
import os
import time

import pytest


@pytest.mark.parametrize("n", range(int(os.environ["MEMORY_TESTS"])))
def test_case(n):
    if n < 10:  # the report's ten slowest tests, whatever the machine's load
        time.sleep(0.05)
    if n == 20:  # the last name the reports share: pytest's own, as in most suites
        pytest.xfail("a known bug")
    assert n < 30 or n % 10 != 9, "one in ten fails"
"""


def _held(root: Path, tests: int) -> int:
    """The bytes qbench's lines allocated and still held at the session's end of a run of
    ``tests`` tests."""
    out = root / f"memory-{tests}.json"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "qbench"]
    env = {"MEMORY_OUT": str(out), "MEMORY_TESTS": str(tests), "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        # the report keeps the first 10 failures: all runs keep as many
        [*command, f"--qbench-dir={root / 'store'}", "--qbench-md-max-items=10"],
        cwd=root,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    return int(json.loads(out.read_text()))


def test_qbench_keeps_nothing_per_test(tmp_path: Path) -> None:
    """qbench holds the same memory at the session's end at 300 and 1 200 tests: a failing
    test's report, which pytest keeps, is no larger for the facts qbench put on it."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(PROBE)
    (tmp_path / "test_many.py").write_text(SUITE)
    small, large = _held(tmp_path, SMALL), _held(tmp_path, LARGE)
    per_test = (large - small) / (LARGE - SMALL)
    assert per_test < MAX_BYTES_PER_TEST, (
        f"qbench holds {per_test:.1f} bytes more a test: {small} bytes at {SMALL} tests, "
        f"{large} at {LARGE}"
    )


REPORTS_PROBE = """
import json, os, sys

import pytest


def pytest_runtest_logreport(report):  # before qbench's, which runs last
    names = sorted(name for name in vars(report) if name.startswith("qbench"))
    if names:
        print("QBENCH ATTRIBUTES", report.when, names)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    stats = session.config.pluginmanager.get_plugin("terminalreporter").stats
    reports = [r for kept in stats.values() for r in kept if hasattr(r, "when")]
    sizes = [sys.getsizeof(vars(r)) for r in reports]
    with open(os.environ["MEMORY_OUT"], "w") as handle:
        json.dump({"reports": len(reports), "bytes": sum(sizes)}, handle)
"""


def _report_sizes(root: Path, plugin: str) -> tuple[dict[str, int], str]:
    out = root / f"reports-{plugin}.json"
    command = [sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider", "-p", plugin]
    done = subprocess.run(
        [*command, f"--qbench-dir={root / 'store'}"] if plugin == "qbench" else command,
        cwd=root,
        env=child_env({"MEMORY_OUT": str(out), "MEMORY_TESTS": "200", "PYTHONHASHSEED": "0"}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(out.read_text()), done.stdout


def test_a_report_of_this_process_carries_nothing_of_qbench(tmp_path: Path) -> None:
    """The reports of a run without xdist carry no attribute of qbench's (its facts are handed
    beside them), so pytest's reports, which its terminal reporter keeps to the end of the run,
    are exactly as large as without qbench: no slot for a name of qbench's in each (8 bytes a
    report, 24 a test, before)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(REPORTS_PROBE)
    (tmp_path / "test_many.py").write_text(SUITE)
    plain, _ = _report_sizes(tmp_path, "no:qbench")
    ours, output = _report_sizes(tmp_path, "qbench")
    assert "QBENCH ATTRIBUTES" not in output
    assert ours == plain
    assert plain["reports"] == 600
