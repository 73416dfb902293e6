"""``--qbench-new-tests-repeat``, through real pytest runs: a test the history has never seen runs
N times; one that does not give the same outcome each time is reported flaky (terminal,
report.json, report.md, digest) while its reported outcome stays its last run's and pytest's
summary line agrees with the report; a test already in the history runs once; a new test passing
every time is not flagged; the time budget cuts the repeats; xdist workers repeat too."""

from __future__ import annotations

import json

import pytest

from conftest import QBenchRun
from conftest import RunQBench


OLD = """
    import pathlib

    def called(name):
        with pathlib.Path(name + ".calls").open("a") as calls:
            calls.write("x")

    def test_old():
        called("old")
"""
NEW = """
    import time

    def test_alternating():
        called("alternating")
        count = len(pathlib.Path("alternating.calls").read_text())
        assert count % 2 == 0, f"call {count} fails"

    def test_slow():
        called("slow")
        time.sleep(0.05)

    def test_steady():
        called("steady")
"""


def calls(pytester: pytest.Pytester, name: str) -> int:
    path = pytester.path / f"{name}.calls"
    return len(path.read_text()) if path.exists() else 0


def with_new_tests(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Index one run of the old test alone, then add the new tests."""
    pytester.makepyfile(test_suite=OLD)
    run_qbench("--qbench-run-id=h1", run_dir="h1")
    for name in ("old", "alternating", "steady", "slow"):
        (pytester.path / f"{name}.calls").unlink(missing_ok=True)
    pytester.makepyfile(test_suite=OLD + NEW)


def new_lines(done: QBenchRun) -> list[str]:
    return [line for line in done.result.outlines if line.startswith("qbench: new tests:")]


def test_a_new_test_failing_every_other_call_is_reported_flaky(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    with_new_tests(pytester, run_qbench)
    digest = pytester.path / "digest.json"
    done = run_qbench(
        "--qbench-run-id=r2",
        "--qbench-new-tests-repeat=3",
        f"--qbench-digest={digest}",
        run_dir="r2",
    )
    # three runs: fail, pass, fail; the reported outcome is the last run's, as pytest counts it
    done.result.assert_outcomes(passed=3, failed=1)
    summary = done.report.summary
    assert (summary.passed, summary.failed, summary.flaky) == (3, 1, 1)
    alternating = done.by_name("test_alternating")
    assert alternating.outcome == "failed"
    assert alternating.new_test_tries == ["failed", "passed"]
    assert alternating.flaky
    steady = done.by_name("test_steady")
    assert (steady.new_test_tries, steady.flaky) == (["passed", "passed"], False)
    old = done.by_name("test_old")
    assert (old.new_test_tries, old.flaky) == (None, False)
    assert (calls(pytester, "old"), calls(pytester, "steady")) == (1, 3)
    assert calls(pytester, "alternating") == 3
    lines = new_lines(done)
    assert lines[0].startswith(
        "qbench: new tests: test_suite.py::test_alternating is flaky: a new test that did not "
        "give the same outcome in its 3 runs (failed, passed, failed)"
    ), lines
    assert lines[-1] == "qbench: new tests: 3 new tests run up to 3 times: 1 flaky", lines
    assert "new test, outcomes: failed, passed, failed" in done.markdown
    steps = json.loads(digest.read_text())["next_steps"]
    assert any(
        s.startswith("Investigate flaky new test test_suite.py::test_alternating") for s in steps
    )


def test_the_budget_cuts_the_repeats_and_says_so(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    with_new_tests(pytester, run_qbench)
    done = run_qbench(
        "--qbench-run-id=r2",
        "--qbench-new-tests-repeat=5",
        "--qbench-new-tests-budget=0.01",
        "-k",
        "slow or steady or old",
        run_dir="r2",
    )
    done.result.assert_outcomes(passed=3)
    # test_slow runs first (file order): one extra run of 0.05 s spends the budget
    assert done.by_name("test_slow").new_test_tries == ["passed"]
    assert done.by_name("test_steady").new_test_tries == []
    assert calls(pytester, "steady") == 1
    assert new_lines(done)[-1] == (
        "qbench: new tests: 1 new test run up to 5 times: 0 flaky; 1 not repeated, the 0.01s "
        "budget was spent (--qbench-new-tests-budget)"
    )


def test_under_xdist_each_worker_repeats_its_new_tests(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    pytest.importorskip("xdist")
    with_new_tests(pytester, run_qbench)
    done = run_qbench(
        "--qbench-run-id=r2",
        "--qbench-new-tests-repeat=4",
        "-n",
        "2",
        "-p",
        "xdist",
        subprocess=True,
        run_dir="r2",
    )
    done.result.assert_outcomes(passed=4)
    alternating = done.by_name("test_alternating")
    assert (alternating.outcome, alternating.flaky) == ("passed", True)
    assert alternating.new_test_tries == ["failed", "passed", "failed"]
    assert done.by_name("test_steady").flaky is False
    assert done.by_name("test_old").new_test_tries is None
    assert calls(pytester, "old") == 1
    assert done.report.summary.flaky == 1


def test_without_history_nothing_is_repeated(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    pytester.makepyfile(test_suite=OLD + NEW)
    done = run_qbench("--qbench-run-id=r1", "--qbench-new-tests-repeat=3", run_dir="r1")
    assert calls(pytester, "steady") == 1
    assert all(r.new_test_tries is None for r in done.report.results)
    assert new_lines(done) == [
        "qbench: new tests: no indexed run yet to tell new tests by: no test repeated"
    ]


@pytest.mark.parametrize("value", ["0", "many", "101"])
def test_a_bad_repeat_count_is_refused(pytester: pytest.Pytester, value: str) -> None:
    pytester.makepyfile(test_suite=OLD)
    result = pytester.runpytest("-p", "qbench", f"--qbench-new-tests-repeat={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--qbench-new-tests-repeat" in "\n".join(result.errlines)
    assert calls(pytester, "old") == 0


FIXTURES = """
    import pathlib
    import unittest

    import pytest

    def event(text):
        with pathlib.Path("events.txt").open("a") as events:
            events.write(text + "\\n")

    @pytest.fixture(scope="module")
    def shared():
        event("module setup")
        yield
        event("module teardown")

    @pytest.fixture
    def resource():
        event("setup")
        yield {"ok": True}
        event("teardown")

    def test_with_fixtures(shared, resource):
        assert resource["ok"]
        event("call")

    class TestCase(unittest.TestCase):
        def setUp(self):
            self.value = 1

        def test_unittest(self):
            assert self.value == 1
            event("unittest call")
"""


def test_a_new_test_runs_each_time_with_its_fixtures_set_up_again(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Each extra run of a new test sets its function-scoped fixtures up and tears them down,
    keeping the module's: a new test using a fixture failed every run after the first with
    KeyError (its fixtures were neither torn down nor set up again), a passing test reported
    failed and pytest's exit status changed (trial9: aiofiles' async fixtures, any fixture)."""
    pytester.makepyfile(test_old="def test_old(): pass\n")
    run_qbench("--qbench-run-id=f1", run_dir="f1")
    pytester.makepyfile(test_new=FIXTURES)
    done = run_qbench("--qbench-run-id=f2", "--qbench-new-tests-repeat=3", run_dir="f2")
    done.result.assert_outcomes(passed=3)
    assert done.result.ret == 0
    assert [line for line in done.result.outlines if line.startswith("qbench: new tests:")] == [
        "qbench: new tests: 2 new tests run up to 3 times: 0 flaky"
    ]
    events = (pytester.path / "events.txt").read_text().splitlines()
    fixture_events = [e for e in events if not e.startswith("unittest")]
    assert fixture_events == [
        "module setup",
        *(["setup", "call", "teardown"] * 3),
        "module teardown",
    ]
    assert events.count("unittest call") == 3


SUB_TESTS = """
    import unittest

    calls = []

    class TestCase(unittest.TestCase):
        def test_sub_tests(self):
            for i in range(4):
                with self.subTest(i=i):
                    if i == 3:
                        self.skipTest("three")
                    assert i < 3

        def test_second_call_fails(self):
            calls.append(1)
            for i in range(2):
                with self.subTest(i=i):
                    assert len(calls) != 2 or i == 0

        def test_sub_test_fails_then_skips(self):  # the skip settled by pytest on Python 3.10
            with self.subTest(i=0):
                assert False
            self.skipTest("whole")
"""


@pytest.mark.skipif(pytest.version_tuple[:1] < (9,), reason="pytest 9 logs subTest results")
def test_a_new_unittest_tests_sub_tests_are_counted_once(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The extra runs' unittest ``subTest`` results stay out of pytest's log: pytest's line
    said `9 subtests passed` for a test of 3 (each extra run's were counted, tomli's data
    tests). A subtest failing in one extra run still makes the new test flaky."""
    pytester.makepyfile(test_old="def test_old(): pass\n")
    run_qbench("--qbench-run-id=u1", run_dir="u1")
    pytester.makepyfile(test_new=SUB_TESTS)
    done = run_qbench("-q", "--qbench-run-id=u2", "--qbench-new-tests-repeat=3", run_dir="u2")
    done.result.stdout.fnmatch_lines(["1 failed, 3 passed, 2 skipped, 5 subtests passed in *"])
    assert [line for line in done.result.outlines if line.startswith("qbench: new tests:")] == [
        "qbench: new tests: test_new.py::TestCase::test_second_call_fails is flaky: a new test "
        "that did not give the same outcome in its 3 runs (passed, failed, passed)",
        "qbench: new tests: 3 new tests run up to 3 times: 1 flaky",
    ]
    summary = done.report.summary
    assert (summary.failed, summary.passed, summary.skipped, summary.subtests_passed) == (
        1,
        3,
        2,
        5,
    )


def test_a_new_tests_extra_runs_warnings_are_not_counted(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The warnings of a new test's extra runs stay out of pytest's warnings summary: pytest
    said `3 warnings` for a test that warns once (pytest 9's --max-warnings would fail the run
    for them)."""
    pytester.makepyfile(test_old="def test_old(): pass\n")
    run_qbench("--qbench-run-id=w1", run_dir="w1")
    pytester.makepyfile(
        test_new="""
        import warnings

        calls = []

        def test_warns():
            calls.append(1)
            warnings.warn(f"careful {len(calls)}", UserWarning)
        """
    )
    done = run_qbench(
        "-W",
        "always::UserWarning",
        "--qbench-run-id=w2",
        "--qbench-new-tests-repeat=3",
        run_dir="w2",
    )
    done.result.assert_outcomes(passed=2, warnings=1)
    done.result.stdout.fnmatch_lines(["*UserWarning: careful 3"])
    assert "careful 1" not in done.result.stdout.str()
    assert done.report.summary.warnings == 1


def test_no_new_test_is_repeated_under_the_debugger(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """``--pdb``: a new test that fails only in its second run is not run again, so no extra
    run, which pytest does not report, opens the debugger (stdin closed: it would quit the
    session, exit status 2); the terminal says why nothing was repeated. Before, the extra run's
    failure opened the debugger."""
    pytester.makepyfile(test_suite=OLD)
    run_qbench("--qbench-run-id=h1", run_dir="h1")
    pytester.makepyfile(
        test_suite=OLD
        + """
    def test_second_call_fails():
        called("second")
        assert len(pathlib.Path("second.calls").read_text()) != 2
"""
    )
    done = run_qbench(
        "--qbench-run-id=r2", "--qbench-new-tests-repeat=3", "--pdb", subprocess=True, run_dir="r2"
    )
    assert done.result.ret == 0, done.result.stdout.str()
    assert "PDB" not in done.result.stdout.str()
    assert calls(pytester, "second") == 1
    assert new_lines(done) == [
        "qbench: new tests: no test repeated under --pdb: the debugger is for the run pytest "
        "reports (an extra run would stop at its prompt, out of pytest's log)"
    ]
    assert done.by_name("test_second_call_fails").new_test_tries is None


DOCTESTS = '''
    """A module doctest that uses the module's own names.

    >>> double(2)
    4
    >>> "bound" in globals()
    False
    >>> bound = 1
    """

    import math


    def double(x):
        """
        >>> math.floor(double(1.2))
        2
        """
        return 2 * x
'''


def test_a_new_doctest_runs_each_time_with_its_module_names(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Each extra run of a new doctest sees its module's names, as its first run does: doctest
    clears a test's globals once it has run, so every run after the first failed with
    NameError, a passing doctest reported failed and pytest's exit status changed (trial11:
    boltons' ``--doctest-modules``, ``2 passed`` became ``2 failed``). A name a run binds does
    not leak into the next run (each starts with the module's names, as the first did)."""
    pytester.makepyfile(test_old="def test_old(): pass\n")
    run_qbench("--qbench-run-id=d1", run_dir="d1")
    pytester.makepyfile(mod=DOCTESTS)
    pytester.maketxtfile(
        guide="""
        >>> import math
        >>> math.floor(2.5)
        2
        >>> __name__
        '__main__'
        """
    )
    done = run_qbench(
        "--doctest-modules",
        "--doctest-glob=*.txt",
        "--qbench-run-id=d2",
        "--qbench-new-tests-repeat=3",
        run_dir="d2",
    )
    done.result.assert_outcomes(passed=4)
    assert done.result.ret == 0
    assert new_lines(done) == ["qbench: new tests: 3 new tests run up to 3 times: 0 flaky"]
    assert done.by_name("mod.double").new_test_tries == ["passed", "passed"]


def test_a_new_tests_extra_runs_leave_no_output_or_properties(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """What the extra runs printed and recorded stays out of the reported run: pytest's
    terminal showed `printed in run 1`, `2` and `3` under the last run's failure, its JUnit
    XML had the `record_property` pair of every run, and so had report.json (its captured
    stdout too)."""
    pytester.makepyfile(test_old="def test_old(): pass\n")
    run_qbench("--qbench-run-id=p1", run_dir="p1")
    pytester.makepyfile(
        test_new="""
        calls = []

        def test_prints_and_records(record_property):
            calls.append(1)
            record_property("run", len(calls))
            print(f"printed in run {len(calls)}")
            assert False, "shows the captured output"
        """
    )
    junit = pytester.path / "junit.xml"
    done = run_qbench(
        f"--junitxml={junit}",
        "-o",
        "junit_family=xunit1",
        "--qbench-run-id=p2",
        "--qbench-new-tests-repeat=3",
        run_dir="p2",
    )
    done.result.assert_outcomes(passed=1, failed=1)
    out = done.result.stdout.str()
    assert "printed in run 3" in out
    assert "printed in run 1" not in out and "printed in run 2" not in out
    assert junit.read_text().count("<property ") == 1
    result = done.by_name("test_prints_and_records")
    assert result.user_properties == [("run", 3)]
    assert result.captured is not None and "printed in run 1" not in result.captured.stdout


def test_a_flaky_new_test_is_flaky_in_ctrf(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """CTRF marks a flaky new test flaky, as report.json, report.md and the digest do: its
    `summary.flaky` said 0 beside report.json's 1, and no test was flagged, so the CTRF
    reporters' flaky views missed it (trial11, attrs). Its extra runs are not retries."""
    with_new_tests(pytester, run_qbench)
    ctrf = pytester.path / "ctrf.json"
    done = run_qbench(
        "--qbench-run-id=c2", "--qbench-new-tests-repeat=3", f"--qbench-ctrf={ctrf}", run_dir="c2"
    )
    assert done.report.summary.flaky == 1
    results = json.loads(ctrf.read_text())["results"]
    assert results["summary"]["flaky"] == 1
    tests = {t["name"]: t for t in results["tests"]}
    alternating = tests["test_suite.py::test_alternating"]
    assert alternating["flaky"] is True and "retries" not in alternating
    assert alternating["extra"]["new_test_tries"] == ["failed", "passed", "failed"]
    assert "flaky" not in tests["test_suite.py::test_steady"]
