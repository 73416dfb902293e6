"""Verdicts after a crash: pytest-xdist workers that crash until xdist stops the run, a run
that died and the next pytest run, the MCP server's history tools and a run that died outside
it. The tests that did not run are "did not run", never "removed"; a run that died is seen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_qbench.cli import main

from conftest import RunQBench


def qbench_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``qbench ARGS --json`` in process: exit status and parsed output."""
    capsys.readouterr()
    status = main([*args, "--json", "--dir", ".qbench"])
    return status, json.loads(capsys.readouterr().out)


CRASHING = """
    import os, signal, time

    def test_1():
        pass

    def test_crash():
        if os.environ.get("QBENCH_TEST_DIE"):
            os.kill(os.getpid(), signal.SIGKILL)

    {rest}
"""


def test_xdist_stopping_after_crashed_workers_is_an_unfinished_run(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker killed mid-test under ``--max-worker-restart=0``: xdist stops the run ("worker
    gw0 crashed and worker restarting disabled"), pytest exits 1 with the tests it reached. The
    run is interrupted (a ``workers-crashed`` warning), its crashed test failed with xdist's
    message, and `qbench diff`/`pr-comment` against the whole run before say its missing tests
    did not run. Before, the run was whole: diff called them "removed tests"."""
    pytest.importorskip("xdist")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test may run in a worker
    rest = "\n".join(f"def test_slow_{n}():\n    time.sleep(0.5)\n" for n in range(6))
    pytester.makepyfile(test_x=CRASHING.format(rest=rest.replace("\n", "\n    ")))
    args = ("-p", "xdist", "-n", "1", "--max-worker-restart=0", "-p", "no:randomly")
    whole = run_qbench(*args, "--qbench-run-id=r1", subprocess=True, run_dir="r1")
    assert whole.result.ret == 0 and whole.report.run.interrupted is False
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    run = run_qbench(*args, "--qbench-run-id=r2", subprocess=True, run_dir="r2")
    assert run.result.ret == 1
    run.result.stdout.fnmatch_lines(
        ["*xdist: worker gw0 crashed and worker restarting disabled*", "*1 failed, 1 passed*"]
    )
    assert run.report.run.interrupted is True
    (warning,) = [w for w in run.report.warnings if w.code == "workers-crashed"]
    assert "pytest-xdist stopped the run" in warning.message
    crashed = run.by_name("test_crash")
    assert crashed.outcome == "failed" and crashed.failure is not None
    assert (
        crashed.failure.error_message
        == "worker 'gw0' crashed while running 'test_x.py::test_crash'"
    )
    assert (run.report.summary.failed, run.report.summary.passed) == (1, 1)
    _, shown = qbench_json(capsys, "show", "r2")
    assert shown["interrupted"] is True
    status, diff = qbench_json(capsys, "diff", "r1", "r2")
    assert status == 1
    assert diff["removed_tests"] == []
    capsys.readouterr()
    main(["pr-comment", "r2", "--dir", ".qbench", "--base", "r1"])
    comment = capsys.readouterr().out
    assert "6 tests of run `r1` did not run here (the run did not finish)" in comment
    assert "Tests removed" not in comment


def test_xdist_replacing_a_crashed_worker_runs_on(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed mid-test that xdist replaces (restarts allowed): pytest runs every test,
    the crashed one failed with xdist's message; the run is whole, not interrupted."""
    pytest.importorskip("xdist")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    pytester.makepyfile(test_x=CRASHING.format(rest="def test_2():\n        pass\n"))
    run = run_qbench("-p", "xdist", "-n", "1", "-p", "no:randomly", subprocess=True)
    assert run.result.ret == 1
    run.result.stdout.fnmatch_lines(["*replacing crashed worker gw0*", "*1 failed, 2 passed*"])
    assert run.report.run.interrupted is False
    assert not [w for w in run.report.warnings if w.code == "workers-crashed"]
    crashed = run.by_name("test_crash")
    assert crashed.failure is not None
    assert (
        crashed.failure.error_message
        == "worker 'gw0' crashed while running 'test_x.py::test_crash'"
    )
