"""``qbench show last`` after a run that ran no test (a usage error, a ``-m`` matching
nothing): such a run is never indexed, so ``last`` is the run before it, and show printed that
run, `exit code 0`, with no word that pytest's last run was another (trial11, parse). It still
shows the last indexed run, and says on stderr which run was left out and why."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main

from conftest import RunQBench


def test_show_last_says_a_later_run_ran_no_test(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    run_qbench("--qbench-run-id=r1", run_dir="r1")
    empty = run_qbench("--qbench-run-id=r2", "--strict-markers", "-m", "nosuch", run_dir="r2")
    assert empty.result.ret == 4
    qbench_dir = str(pytester.path / ".qbench")
    capsys.readouterr()
    assert main(["show", "--dir", qbench_dir, "last"]) == 0
    captured = capsys.readouterr()
    assert "r1" in captured.out
    assert "note: the last run, r2, ran no tests (pytest's exit status 4" in captured.err
    assert main(["show", "--dir", qbench_dir, "r1"]) == 0
    assert "note:" not in capsys.readouterr().err


def test_a_run_pytest_exit_stopped_with_status_0_is_not_called_all_passed(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``conftest.py`` that calls ``pytest.exit("...", returncode=0)`` before any test: pytest
    exits 0 with `no tests ran`. `qbench show last` noted that run as `(pytest's exit status 0:
    all tests passed)`, and MCP's `get_test_failure` said the same of it; both now say that
    pytest.exit stopped the session before every test ran."""
    from pytest_qbench.core.errors import ToolFailure
    from pytest_qbench.mcp.failure import find_result
    from pytest_qbench.report.readers import read_report

    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    run_qbench("--qbench-run-id=r1", run_dir="r1")
    pytester.makeconftest(
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    pytest.exit('enough', returncode=0)\n"
    )
    stopped = run_qbench("--qbench-run-id=r2", run_dir="r2")
    assert stopped.result.ret == 0 and stopped.report.run.interrupted
    qbench_dir = pytester.path / ".qbench"
    capsys.readouterr()
    assert main(["show", "--dir", str(qbench_dir), "last"]) == 0
    err = capsys.readouterr().err
    assert "all tests passed" not in err, err
    said = "(pytest's exit status 0: pytest.exit stopped the session before every test ran)"
    assert f"note: the last run, r2, ran no tests {said}" in err, err
    with pytest.raises(ToolFailure) as caught:
        find_result(read_report(qbench_dir / "runs" / "r2" / "report.json"), "test_ok")
    assert f"run r2 ran no test {said}" in str(caught.value)
