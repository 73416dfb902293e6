"""``--qbench-quarantine``, through real pytest runs: a quarantined test's known failure does not
fail the run (exit 0, one line naming it, report.md's "Quarantined" section); a new failure
(fingerprint never seen for that test) or a failure that is not quarantined does; ``auto``
quarantines what the flaky monitors call flaky, never a broken test; a bad value is refused."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main

from conftest import QBenchRun
from conftest import RunQBench


SUITE = """
    import pathlib

    def plan(name):
        for word in pathlib.Path("plan.txt").read_text().split():
            key, _, value = word.partition("=")
            if key == name:
                return value
        return "pass"

    def test_target():
        how = plan("target")
        if how == "old":
            raise TimeoutError("the service did not answer")
        if how == "new":
            raise KeyError("total")

    def test_other():
        assert plan("other") == "pass"

    def test_stable():
        pass
"""
TARGET = "test_suite.py::test_target"


def run(
    pytester: pytest.Pytester, run_qbench: RunQBench, run_id: str, plan: str, *args: str
) -> QBenchRun:
    pytester.makepyfile(test_suite=SUITE)
    pytester.path.joinpath("plan.txt").write_text(plan)
    return run_qbench(f"--qbench-run-id={run_id}", *args, run_dir=run_id)


def history(pytester: pytest.Pytester, run_qbench: RunQBench, *plans: str) -> None:
    """Runs ``h1``, ``h2``... without the quarantine, one per plan."""
    for number, plan in enumerate(plans, 1):
        run(pytester, run_qbench, f"h{number}", plan)


def quarantine(pytester: pytest.Pytester, nodeid: str) -> None:
    assert (
        main(
            [
                "quarantine",
                "add",
                nodeid,
                "--reason",
                "slow service",
                "--dir",
                str(pytester.path / ".qbench"),
            ]
        )
        == 0
    )


def lines(done: QBenchRun) -> list[str]:
    return [line for line in done.result.outlines if line.startswith("qbench: quarantine:")]


def test_a_quarantined_known_failure_does_not_fail_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on")
    assert done.result.ret == 0
    done.result.assert_outcomes(failed=1, passed=2)
    assert lines(done)[0].startswith(
        f"qbench: quarantine: {TARGET} failed and is quarantined (slow service); a known failure"
    )
    assert "every failure is a quarantined test's known failure: exit status 0" in lines(done)[-1]
    assert done.report.run.exit_code == 0
    assert (
        "## Quarantined" in done.markdown and f"{TARGET} failed and is quarantined" in done.markdown
    )
    without = run(pytester, run_qbench, "r2", "target=old")  # off: pytest's own status
    assert without.result.ret == 1 and lines(without) == []


def test_a_new_failure_of_a_quarantined_test_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=new", "--qbench-quarantine=on")
    assert done.result.ret == 1
    assert "but with a NEW failure" in lines(done)[0]
    assert "1 quarantined test(s) failed in a new way: the run fails" in lines(done)[-1]
    assert done.report.run.exit_code == 1


def test_a_failure_beside_a_quarantined_one_fails_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old other=fail", "--qbench-quarantine=on")
    assert done.result.ret == 1
    assert "a known failure" in lines(done)[0]
    assert "1 failure(s) not quarantined: the run fails" in lines(done)[-1]


def test_a_quarantine_without_history_keeps_the_run_failed(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    quarantine(pytester, TARGET)  # the failure was never seen: it is new
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on")
    assert done.result.ret == 1 and "NEW failure" in lines(done)[0]


SUBTESTS = """
    import unittest

    class T(unittest.TestCase):
        def test_sub(self):
            for i in range(3):
                with self.subTest(i=i):
                    self.assertNotEqual(i, 1)

    def test_pysub(subtests):
        for i in range(3):
            with subtests.test(i=i):
                assert i != 2

    def test_stable():
        pass
"""


@pytest.mark.skipif(pytest.version_tuple < (9,), reason="subtests are pytest 9's")
@pytest.mark.parametrize("xdist", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_quarantined_tests_failing_in_subtests_do_not_fail_the_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, xdist: list[str]
) -> None:
    """pytest 9 fails a test whose subtests failed ("contains 1 failed subtest") after its
    session counted the test's report, as passed: its count of failures is one short of its
    line's, and a run whose every failure was quarantined stayed failed, "pytest counted 2
    failures, the quarantine saw 3" (found trial14). Under xdist the workers fail it first,
    and the session counts it."""
    pytester.makepyfile(test_suite=SUBTESTS)
    run_qbench("--qbench-run-id=h1", run_dir="h1")
    for nodeid in ("test_suite.py::T::test_sub", "test_suite.py::test_pysub"):
        quarantine(pytester, nodeid)
    done = run_qbench("--qbench-run-id=r1", "--qbench-quarantine=on", *xdist, run_dir="r1")
    done.result.stdout.fnmatch_lines(["*= 3 failed, 2 passed in *"])
    assert "every failure is a quarantined test's known failure: exit status 0" in lines(done)[-1]
    assert done.result.ret == 0 and done.report.run.exit_code == 0
    pytester.makepyfile(
        test_suite=SUBTESTS.replace(
            "def test_stable():\n        pass", "def test_stable():\n        assert 0"
        )
    )
    beside = run_qbench("--qbench-run-id=r2", "--qbench-quarantine=on", *xdist, run_dir="r2")
    assert beside.result.ret == 1
    assert "1 failure(s) not quarantined: the run fails" in lines(beside)[-1]


def test_auto_quarantines_a_flaky_test(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    history(pytester, run_qbench, "", "target=old", "", "target=old", "")
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=auto")
    assert done.result.ret == 0
    assert f"{TARGET} failed and is quarantined (flaky: " in lines(done)[0]


def test_auto_that_cannot_ask_the_monitors_excuses_nothing(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """With ``auto`` the monitors are asked at the end about the failures; when that read
    fails, no failure is excused and the terminal says why (fail closed)."""
    history(pytester, run_qbench, "", "target=old", "", "target=old", "")
    pytester.makeconftest(
        """
        import pytest_qbench.history.quarantine as quarantine

        ORIGINAL = quarantine.flaky_among

        def broken(*args, **kwargs):
            raise RuntimeError("the index went away")

        def pytest_configure(config):
            quarantine.flaky_among = broken

        def pytest_unconfigure(config):  # the module outlives this in-process run
            quarantine.flaky_among = ORIGINAL
        """
    )
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=auto")
    assert done.result.ret == 1
    assert lines(done) == [
        "qbench: quarantine: the flaky monitors could not be read (RuntimeError: the index went "
        "away): no failure is excused"
    ]


def test_auto_never_quarantines_a_broken_test(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "", "target=old", "target=old")
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=auto")
    assert done.result.ret == 1
    assert lines(done) == ["qbench: quarantine: 1 failure(s) not quarantined: the run fails"]


def test_a_bad_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nqbench = true\nqbench_quarantine = sometimes\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "qbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini qbench_quarantine must be off, on or auto, given: 'sometimes'*"]
    )


def test_a_run_stopped_early_stays_failed(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on", "-x")
    assert done.result.ret == 1
    assert lines(done)[-1] == (
        "qbench: quarantine: the run stopped early: the quarantine does not change its status"
    )


def test_the_quarantine_file_of_the_repository(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    history(pytester, run_qbench, "target=old")
    pytester.makeini("[pytest]\nqbench_quarantine = on\nqbench_quarantine_file = quarantine.txt\n")
    pytester.path.joinpath("quarantine.txt").write_text(f"# reviewed\n{TARGET}  # ticket 7\n")
    done = run(pytester, run_qbench, "r1", "target=old")
    assert done.result.ret == 0
    assert f"{TARGET} failed and is quarantined (ticket 7); a known failure" in lines(done)[0]


def test_a_quarantined_known_failure_is_labelled_everywhere(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """report.md and MCP's run_test_workflow call a quarantined test's known failure
    quarantined, and tell an assistant not to fix it; a new failure is labelled NEW."""
    from mcp_helpers import mcp_call
    from mcp_helpers import structured

    history(pytester, run_qbench, "target=old")
    quarantine(pytester, TARGET)
    done = run(pytester, run_qbench, "r1", "target=old", "--qbench-quarantine=on")
    label = done.by_name("test_target").history
    assert label is not None and label.status == "quarantined"
    assert label.summary.startswith(
        "quarantined (known failure: a quarantined flaky test's usual failure, not a bug to fix)"
    )
    assert f"History: {label.summary}" in done.markdown
    pytester.makeini("[pytest]\nqbench_quarantine = on\n")
    answer = mcp_call(pytester.path, "run_test_workflow", {})
    failures = structured(answer)["failures"]
    assert [(f["test_name"], f["history"][:26]) for f in failures] == [
        (TARGET, "quarantined (known failure")
    ]
    assert f"Do not fix {TARGET}: a quarantined flaky test's known failure" in " ".join(
        structured(answer)["next_steps"]
    )
    assert "History: quarantined (known failure" in answer.content[0].text
    pytester.path.joinpath("plan.txt").write_text("target=new")
    failures = structured(mcp_call(pytester.path, "run_test_workflow", {}))["failures"]
    assert failures[0]["history"].startswith("quarantined (NEW failure")


CI_SUITE = """
    import pathlib

    def test_flaky():
        how = pathlib.Path("plan.txt").read_text().strip()
        attempted = pathlib.Path("attempted")
        fails = how == "every-attempt" or (how == "first-attempt" and not attempted.exists())
        attempted.write_text("x")
        if how == "break":
            raise KeyError("total")
        if fails:
            raise TimeoutError("the service did not answer")

    def test_stable():
        pass
"""


def test_a_team_turning_on_auto_quarantine(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's end to end: a CI with ``--reruns 1`` where a test's timeout once passed on
    rerun and once failed every attempt (a red build); with ``qbench_quarantine = auto`` in the
    ini that timeout no longer fails the run, a new failure of the test (a real break) still
    does, and ``qbench flaky`` names the status, the monitor, the evidence and the score."""
    from test_history_flaky import qbench

    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(test_suite=CI_SUITE)

    def ci(run_id: str, how: str) -> QBenchRun:
        pytester.path.joinpath("plan.txt").write_text(how)
        pytester.path.joinpath("attempted").unlink(missing_ok=True)
        args = ("-p", "pytest_rerunfailures", "--reruns=1")
        return run_qbench(f"--qbench-run-id={run_id}", *args, run_dir=run_id)

    plans = ["first-attempt", "pass", "every-attempt", "pass"]
    assert [ci(f"c{n}", how).result.ret for n, how in enumerate(plans, 1)] == [0, 0, 1, 0]
    pytester.makeini("[pytest]\nqbench_quarantine = auto\n")
    known = ci("c5", "every-attempt")
    assert known.result.ret == 0 and known.report.run.exit_code == 0
    assert lines(known)[0].startswith(
        "qbench: quarantine: test_suite.py::test_flaky failed and is quarantined (flaky: passed "
        "after a rerun in 1 run (c1), and the same failure failed alone in 1 run (c3)); a known "
        "failure"
    )
    broke = ci("c6", "break")
    assert broke.result.ret == 1 and broke.report.run.exit_code == 1
    assert "but with a NEW failure" in lines(broke)[0]
    status, found, text = qbench(capsys, "flaky")
    assert status == 0
    [flaky] = found["tests"]
    assert (flaky["nodeid"], flaky["status"], flaky["monitor"]) == (
        "test_suite.py::test_flaky",
        "flaky",
        "pass-on-retry",
    )
    assert flaky["evidence_runs"] == ["c1", "c3"]  # c5 and c6 failed in a row: not alone
    assert flaky["score"] == round(4 / 6, 4)
    assert "flaky   pass-on-retry" in text and "test_suite.py::test_flaky" in text
