"""A test that forks and whose child returns into pytest (an assertion or an exception in the
child's branch, before its ``os._exit``) makes the child run the rest of the session too, with
its own closing line. The run is the process that started it: the child's results, its session
end (report.json, the index, the run's mark) are never the run's. Found on a real suite
(docs/performance.md, "Verdicts found on real projects, tenth round")."""

from __future__ import annotations

import json
import os

import pytest


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork (POSIX)")

CHILD_GOES_ON = """
    import os

    def test_before():
        pass

    def test_forks():
        child = os.fork()
        if child == 0:
            assert False, "the child's side failed"  # no os._exit: pytest goes on in the child
        os.waitpid(child, 0)

    def test_after_one():
        pass

    def test_after_two():
        assert os.environ.get("NEVER") is None
"""


def test_a_forked_child_that_goes_on_with_the_session_is_not_recorded(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_fork=CHILD_GOES_ON)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "-p", "no:cacheprovider", "--qbench-run-id=f"
    )
    out = result.stdout.str()
    # pytest itself: the child's closing line, then the parent's (its exit status the parent's)
    assert out.index("1 failed, 3 passed in ") < out.rindex("4 passed in ")
    assert result.ret == 0
    run = pytester.path / ".qbench/runs/f"
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    results = [line for line in lines if line["kind"] == "result"]
    assert [r["result"]["nodeid"] for r in results] == [
        "test_fork.py::test_before",
        "test_fork.py::test_forks",
        "test_fork.py::test_after_one",
        "test_fork.py::test_after_two",
    ]
    assert [line["kind"] for line in lines].count("end") == 1
    report = json.loads((run / "report.json").read_text())
    assert [r["outcome"] for r in report["results"]] == ["passed"] * 4
    assert report["summary"]["passed"] == 4 and report["summary"]["failed"] == 0
    assert report["run"]["exit_code"] == 0
    # the child says why it records nothing, the parent writes the reports
    assert out.count("qbench: wrote ") == 1
    assert "forked by a test" in out


PID_MOCKED = """
    import os
    import time
    from unittest import mock

    from pytest_qbench.report import store

    def test_before():
        assert False, "a failure written while os.getpid is mocked"

    def test_pid_mocked():
        # a pid-file library's test: os.getpid mocked while the stream's timer writes
        with mock.patch("os.getpid", return_value=424242):
            deadline = time.monotonic() + 60
            while any(w._pending for w in list(store._WRITERS)) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert os.getpid() == 424242

    def test_leaks_the_mock():
        mock.patch("os.getpid", return_value=1).start()  # never stopped: the session ends so

    def test_after():
        assert False, "the last failure"
"""


def test_a_mocked_os_getpid_is_not_a_forked_child(pytester: pytest.Pytester) -> None:
    """A test that mocks ``os.getpid`` (a pid file's, a lock's tests) made the stream's writer
    take the process for a forked child: the lines waiting were dropped (the first failure
    missing from results.jsonl and report.json), and with the mock left on to the session's end
    nothing of the run was recorded. Found on a real-shaped suite (eleventh round)."""
    pytester.makepyfile(test_pid=PID_MOCKED)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "-p", "no:cacheprovider", "--qbench-run-id=p"
    )
    result.assert_outcomes(failed=2, passed=2)
    out = result.stdout.str()
    assert "forked by a test" not in out
    assert out.count("qbench: wrote ") == 1
    run = pytester.path / ".qbench/runs/p"
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert [line["result"]["nodeid"] for line in lines if line["kind"] == "result"] == [
        "test_pid.py::test_before",
        "test_pid.py::test_pid_mocked",
        "test_pid.py::test_leaks_the_mock",
        "test_pid.py::test_after",
    ]
    report = json.loads((run / "report.json").read_text())
    assert [r["outcome"] for r in report["results"]] == ["failed", "passed", "passed", "failed"]
    assert report["run"]["exit_code"] == 1


QUEUE_SUITE = {
    "test_a": CHILD_GOES_ON,
    "test_b": "def test_b1():\n    pass\n\n\ndef test_b2():\n    assert False, 'only b2 fails'\n",
    "test_c": "def test_c1():\n    pass\n",
}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_forked_child_in_a_queue_run_claims_no_unit(
    pytester: pytest.Pytester, request: pytest.FixtureRequest, backend: str
) -> None:
    """A `--qbench-queue` run whose test forks a child that goes on with pytest's session: the
    child claims no unit, marks none done and leaves the run's connection alone, so the run
    itself runs every unit and its failure (test_b2's) is in its report, red. Before, the
    child (the parent waiting for it) pulled and ran the rest of the queue, marked every unit
    done, and the run reported `3 passed, 3 deselected`, exit code 0: test_b2's failure ran
    only in the child, recorded nowhere, and no machine would run it again."""
    pytester.makepyfile(**QUEUE_SUITE)
    db = []
    if backend == "postgresql":
        db = [f"--qbench-db={request.getfixturevalue('postgres_server').new_database()}"]
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "-p", "no:cacheprovider", "--qbench-run-id=f",
        "--qbench-queue=fork-queue", *db,
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()
    out = result.stdout.str()
    assert out.count("qbench: queue fork-queue (created): ran ") == 1  # the machine's alone
    assert "forked by a test" in out
    report = json.loads((pytester.path / ".qbench/runs/f/report.json").read_text())
    assert sorted(r["nodeid"] for r in report["results"]) == [
        "test_a.py::test_after_one",
        "test_a.py::test_after_two",
        "test_a.py::test_before",
        "test_a.py::test_forks",
        "test_b.py::test_b1",
        "test_b.py::test_b2",
        "test_c.py::test_c1",
    ]
    assert (report["summary"]["failed"], report["summary"]["deselected"]) == (1, 0)
    assert report["run"]["exit_code"] == 1


PID_MOCKING_SUITE = {
    "test_a": (
        "import os\n\n\ndef test_mocks_pid(monkeypatch):\n"
        "    monkeypatch.setattr(os, 'getpid', lambda: 1)\n\n\n"
        "def test_leaks_pid_mock():\n    os.getpid = lambda: 2\n"
    ),
    "test_b": "def test_b1():\n    pass\n\n\ndef test_b2():\n    assert False, 'only b2 fails'\n",
    "test_c": "def test_c1():\n    pass\n",
}


def test_a_mocked_os_getpid_in_a_queue_run_is_not_a_fork(pytester: pytest.Pytester) -> None:
    """A `--qbench-queue` run whose tests mock ``os.getpid`` (one leaves the mock on): the
    queue is not taken for a forked child's, so the run claims and runs every unit, and
    test_b2's failure is in its report. With ``os.getpid`` read at each look, the queue stopped
    after the mocking test: the later units never ran here."""
    pytester.makepyfile(**PID_MOCKING_SUITE)
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-p", "no:randomly", "-p", "no:cacheprovider", "--qbench-run-id=p",
        "--qbench-queue=pid-queue",
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()
    assert "forked by a test" not in result.stdout.str()
    report = json.loads((pytester.path / ".qbench/runs/p/report.json").read_text())
    assert sorted(r["nodeid"] for r in report["results"]) == [
        "test_a.py::test_leaks_pid_mock",
        "test_a.py::test_mocks_pid",
        "test_b.py::test_b1",
        "test_b.py::test_b2",
        "test_c.py::test_c1",
    ]
    assert report["summary"]["failed"] == 1
