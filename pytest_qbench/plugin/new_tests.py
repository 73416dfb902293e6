"""``--qbench-new-tests-repeat N``: each test the history has never seen runs N times, so that a
new flaky test is reported before it reaches the main branch.

`NewTestsRunner` lives in the process that runs the tests (pytest's own, or each xdist worker):
before a new test's ordinary run it runs the test again with pytest's ``runtestprotocol``
without logging (as pytest-rerunfailures does), so pytest's counts, ``-x``, ``--lf`` and the
terminal see one run only, the last, whose outcome is the test's. The earlier runs' outcomes
travel on the last run's teardown report (``TRIES_ATTR``, JSON-safe for xdist) to the session,
which marks the result flaky when they differ from it (``collectors.TestAccumulator``). Each run
tears the test's own fixtures down and sets them up again; what an extra run leaves on the item
(its captured output, its ``record_property`` pairs) is taken back, and a doctest gets back its
globals, which doctest's runner clears after each run.

Time: the extra runs of all new tests share ``budget`` seconds (split between xdist workers);
each new test gets an equal share of what is left, so a slow test runs fewer times. A run
already started finishes. A test using pytest's ``subtests`` fixture is not repeated (its
subtests log their reports themselves, which would change pytest's counts). Under ``--pdb`` or
``--trace`` no test is repeated: an extra run's failure (or its first line, with ``--trace``)
would open the debugger on a run pytest does not report; the terminal says so.

Which tests are new: those without a result in the history index. With no index, or an index
holding no run, nothing is repeated (there is no history to tell a new test by); with an index
that cannot be read, nothing is repeated and the terminal says why.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import pytest
from _pytest.runner import runtestprotocol

from pytest_qbench.core.summary_words import plural
from pytest_qbench.plugin import registered
from pytest_qbench.plugin.collectors import TRIES_ATTR
from pytest_qbench.plugin.collectors import is_subtest_report
from pytest_qbench.plugin.collectors import outcome_of_phases
from pytest_qbench.plugin.collectors import put_fact
from pytest_qbench.plugin.verdicts import error_text


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.settings import Settings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.report.records import TestResultRecord

RUNNER_NAME = "qbench-new-tests"
REPORT_NAME = "qbench-new-tests-report"
UNREPEATABLE_FIXTURES = ("subtests",)
"""Fixtures whose tests are not repeated: they log reports of their own."""

KnownTests = Callable[[list[str]], "set[str] | None"]


def known_in_history(qbench_dir: Path, db: str | None) -> KnownTests:
    """A function telling which node ids the history index has a result of (``None``: no
    index, or no run in it)."""

    def known(nodeids: list[str]) -> set[str] | None:
        from pytest_qbench.history.database import existing_index
        from pytest_qbench.history.queries import known_tests

        index = existing_index(qbench_dir, db)
        if index is None:
            return None
        try:
            return known_tests(index, nodeids)
        finally:
            index.close()

    return known


def debugger_option(config: pytest.Config) -> str:
    """``--pdb`` or ``--trace`` when the run hands tests to the debugger (then no new test is
    repeated), else ``""``."""
    for option, name in (("usepdb", "--pdb"), ("trace", "--trace")):
        if config.getoption(option, False):
            return name
    return ""


def outcome_of(reports: Sequence[pytest.TestReport], subtest_failed: bool = False) -> str:
    """One run's outcome from its phase reports, as pytest decides it (failed when one of its
    subtests failed, as the reported run's)."""
    phases = {str(r.when): str(r.outcome) for r in reports}
    return outcome_of_phases(phases, any(hasattr(r, "wasxfail") for r in reports), subtest_failed)


class NewTestsRunner:
    """Runs each new test ``repeat - 1`` extra times (fewer when the budget runs short) before
    its reported run, and puts their outcomes on that run's teardown report."""

    def __init__(
        self, repeat: int, budget: float, known: KnownTests, redact: Callable[[str], str]
    ) -> None:
        self.repeat = repeat
        self.left = budget
        """Seconds of the budget left."""
        self.known = known
        self.redact = redact
        self.new: set[str] = set()
        """Node ids of the new tests not run yet."""
        self.tries: dict[str, list[str]] = {}
        self.note = ""
        """Why no test is repeated, when none is for a reason the user should know."""
        self.trying: str | None = None
        """The node id of the test in an extra run."""
        self.subtest_failed = False
        """Whether a subtest failed in the extra run going on (unittest's ``subTest``)."""

    # trylast: the tests left once -k, -m and other plugins deselected theirs
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        debugger = debugger_option(config)
        if debugger:
            self.note = (
                f"no test repeated under {debugger}: the debugger is for the run pytest reports "
                "(an extra run would stop at its prompt, out of pytest's log)"
            )
            return
        try:
            known = self.known([self.redact(item.nodeid) for item in items])
        except Exception as exc:
            self.note = f"the history could not be read ({error_text(exc)}): no test repeated"
            return
        if known is None:
            self.note = "no indexed run yet to tell new tests by: no test repeated"
            return
        self.new = {
            item.nodeid
            for item in items
            if self.redact(item.nodeid) not in known
            and not any(f in UNREPEATABLE_FIXTURES for f in getattr(item, "fixturenames", ()))
        }

    # tryfirst: the extra runs come before the ordinary protocol (this returns None, so it runs)
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        if item.nodeid not in self.new:
            return
        share = self.left / len(self.new)
        self.new.discard(item.nodeid)
        tries: list[str] = []
        spent = last = 0.0
        while (
            len(tries) < self.repeat - 1 and self.left > 0 and (not tries or spent + last <= share)
        ):
            start = time.perf_counter()
            self.trying, self.subtest_failed = item.nodeid, False
            # nextitem=the item's parent: the test's own fixtures are torn down and set up
            # again for its next run (with nextitem=item they were not, nor was the item: its
            # next run had none of them, KeyError), those of wider scopes stay
            # the extra run's warnings are its own (with the same filters: -W error still
            # raises): pytest's list would count them once a run
            with (
                self.quiet_sub_tests(item),
                _leaving_no_trace(item),
                warnings.catch_warnings(record=True),
            ):
                reports = runtestprotocol(item, log=False, nextitem=_keeping_parents(item))
            tries.append(outcome_of(reports, self.subtest_failed))
            last = time.perf_counter() - start
            spent += last
            self.left -= last
        self.trying = None
        self.tries[item.nodeid] = tries

    @contextmanager
    def quiet_sub_tests(self, item: pytest.Item) -> Iterator[None]:
        """unittest's ``subTest`` results of an extra run, kept from pytest's log: pytest logs
        each (``TestCaseFunction.addSubTest``), which counted every extra run's subtests on its
        closing line (``9 subtests passed`` for 3). pytest's own ``addSubTest`` still runs
        whole (the report it makes, the skips it settles on Python 3.10), with hooks that keep
        its report from the log; a failed one marks the run failed."""
        add = getattr(type(item), "addSubTest", None)
        if add is None:
            yield
            return
        session: Any = item.session  # its hooks replaced for one call: an instance attribute
        result: Any = item  # unittest calls its result's (the item's) addSubTest

        def add_sub_test(test_case: object, test: object, exc_info: Any) -> None:
            hooks = session.gethookproxy
            session.gethookproxy = lambda path: _UnloggedHooks(hooks(path), self)
            try:
                add(item, test_case, test, exc_info)
            finally:
                del session.gethookproxy

        result.addSubTest = add_sub_test
        try:
            yield
        finally:
            del result.addSubTest

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # a subtest's report another plugin logs in an extra run (pytest-subtests on pytest 8:
        # log=False covers the phases only; pytest 9's unittest subTests: quiet_sub_tests)
        if report.nodeid == self.trying and report.failed and is_subtest_report(report):
            self.subtest_failed = True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        # the extra runs' own reports come before their outcomes are kept: only the last run's
        # teardown carries them
        if report.when == "teardown" and item.nodeid in self.tries:
            put_fact(report, TRIES_ATTR, self.tries.pop(item.nodeid))
        return report


class _UnloggedHooks:
    """pytest's hooks, but a report logged goes no further than the runner, which notes a
    failed one, and no failure is handed to the debugger: an extra run's subtests."""

    def __init__(self, hooks: Any, runner: NewTestsRunner) -> None:
        self.hooks = hooks
        self.runner = runner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hooks, name)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.runner.subtest_failed = True

    def pytest_exception_interact(self, **kwargs: object) -> None:
        return None


@contextmanager
def _leaving_no_trace(item: pytest.Item) -> Iterator[None]:
    """What an extra run leaves on the item, taken back for the next run and the reported one:
    its captured output's sections (pytest's report of the last run, its terminal and JUnit
    XML showed every run's ``print``) and its ``record_property`` pairs (JUnit XML had each
    run's), and a doctest's globals, which doctest's runner clears once it has run a test
    (``DocTestRunner.run``'s ``clear_globs``: each run after the first met none of its
    module's names, ``NameError``, and a passing doctest was reported failed)."""
    lists = [
        (kept, list(kept))
        for kept in (
            getattr(item, "_report_sections", None),
            getattr(item, "user_properties", None),
        )
        if isinstance(kept, list)
    ]
    globs = getattr(getattr(item, "dtest", None), "globs", None)
    kept_globs = dict(globs) if isinstance(globs, dict) else None
    try:
        yield
    finally:
        for kept, before in lists:
            kept[:] = before
        if kept_globs is not None and isinstance(globs, dict):
            globs.clear()
            globs.update(kept_globs)


def _keeping_parents(item: pytest.Item) -> pytest.Item | None:
    """What to give pytest's teardown as the next item so that it tears down ``item`` (its
    function-scoped fixtures, the request it ran with) and keeps its collectors (their class,
    module, package and session fixtures): its parent, whose chain is theirs. pytest's teardown
    reads only the next item's chain (``SetupState.teardown_exact``)."""
    return cast("pytest.Item | None", item.parent)


class NewTestsReport:
    """What the session learned of the new tests: the terminal's lines."""

    def __init__(self, session: QBenchSession, settings: Settings, runner: NewTestsRunner) -> None:
        self.settings = settings
        self.runner = runner
        self.tried = 0
        self.not_repeated = 0
        self.flaky: list[str] = []
        session.result_listeners.append(self.take_result)

    def take_result(self, result: TestResultRecord) -> None:
        """Count a new test's result; keep a flaky one's line."""
        tries = result.get("new_test_tries")
        if tries is None:
            return
        if not tries:
            self.not_repeated += 1
            return
        self.tried += 1
        if result["flaky"]:
            outcomes = ", ".join([*tries, result["outcome"]])
            self.flaky.append(
                f"{result['nodeid']} is flaky: a new test that did not give the same outcome "
                f"in its {len(tries) + 1} runs ({outcomes})"
            )

    def lines(self) -> list[str]:
        """The terminal's lines (none when no test was new)."""
        if self.runner.note:
            return [self.runner.note]
        if not (self.tried or self.not_repeated):
            return []
        summary = (
            f"{plural(self.tried, 'new test')} run up to {self.settings.new_tests_repeat} "
            f"times: {len(self.flaky)} flaky"
        )
        if self.not_repeated:
            summary += (
                f"; {self.not_repeated} not repeated, the {self.settings.new_tests_budget:g}s "
                "budget was spent (--qbench-new-tests-budget)"
            )
        return [*self.flaky, summary]

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines():
            terminalreporter.write_line(f"qbench: new tests: {line}", yellow="flaky:" in line)


def register(config: pytest.Config, session: QBenchSession, settings: Settings) -> None:
    """Repeat the new tests in this process (under xdist only workers run tests, and
    `worker_input` tells them to), and report them at the end."""
    runner = NewTestsRunner(
        settings.new_tests_repeat,
        settings.new_tests_budget,
        known_in_history(settings.qbench_dir, settings.db),
        session.redact,
    )
    registered.register(config, runner, RUNNER_NAME)
    registered.register(config, NewTestsReport(session, settings, runner), REPORT_NAME)


def worker_input(settings: Settings) -> dict[str, Any]:
    """What an xdist worker needs to repeat new tests (JSON-safe)."""
    return {
        "repeat": settings.new_tests_repeat,
        "budget": settings.new_tests_budget,
        "qbench_dir": str(settings.qbench_dir),
        "db": settings.db,
    }


def configure_worker(
    config: pytest.Config, given: dict[str, Any], workers: int, redact: Callable[[str], str]
) -> None:
    """Repeat new tests on this xdist worker, with its share of the budget."""
    known = known_in_history(Path(given["qbench_dir"]), given["db"])
    budget = float(given["budget"]) / max(1, workers)
    runner = NewTestsRunner(int(given["repeat"]), budget, known, redact)
    registered.register(config, runner, RUNNER_NAME)
