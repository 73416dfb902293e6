"""``--qbench-quarantine``: a quarantined test still runs; its failure does not fail the run
unless its failure fingerprint is new for that test.

`QuarantinePlugin.forgive` is the only way it changes the exit status, through `Verdicts`
(``plugin/verdicts.py``): pytest's 1 becomes 0 only when every failure pytest counted is a
quarantined test failing with a fingerprint its history has seen before. Anything qbench cannot
decide (the quarantine or the index unreadable, a failure without a fingerprint, counts that do
not agree, a run stopped early) keeps the run failed, the reason on the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.history.flakiness import DEFAULT_MONITORS
from pytest_qbench.history.sql import FAILING
from pytest_qbench.plugin import registered
from pytest_qbench.plugin.verdicts import error_text


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.settings import Settings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.plugin.verdicts import Verdicts
    from pytest_qbench.report.models import ReportSection
    from pytest_qbench.report.records import TestResultRecord

PLUGIN_NAME = "qbench-quarantine"


@dataclass(frozen=True)
class Judged:
    """A quarantined test's failure in this run."""

    nodeid: str
    why: str
    """Why it is quarantined (the reason given, or the flaky monitor's evidence)."""
    fingerprint: str | None
    known: bool
    """Whether it failed with this fingerprint in an earlier indexed run."""

    def line(self) -> str:
        """The terminal's and report.md's line."""
        fp = self.fingerprint or "none"
        if self.known:
            return (
                f"{self.nodeid} failed and is quarantined ({self.why}); a known failure "
                f"(fingerprint {fp}): it does not fail the run"
            )
        return (
            f"{self.nodeid} failed and is quarantined ({self.why}), but with a NEW failure "
            f"(fingerprint {fp}, never seen in its history): it fails the run"
        )


class QuarantinePlugin:
    """Tells quarantined failures apart, and whether they alone failed the run."""

    def __init__(self, session: QBenchSession, settings: Settings) -> None:
        self.session = session
        self.settings = settings
        self.quarantined: dict[str, str] = {}
        self.failing: list[str] = []
        """Node ids (redacted) of the failures pytest counted, in order."""
        self.uncounted = 0
        """Of them, tests pytest failed for their failed subtests after its session counted
        them (as passed; in a serial run, not under xdist, whose workers fail them first):
        pytest's ``testsfailed`` leaves them out, its closing line not."""
        self.pytest_session: pytest.Session | None = None
        self.counted = 0
        """pytest's ``testsfailed`` when this plugin last saw a failure (the session counts
        before it: ``tryfirst``)."""
        self.prints: dict[str, str | None] = {}
        """Fingerprints of the quarantined tests' failing results."""
        self.judged: list[Judged] = []
        self.verdict = ""
        """The line saying what the quarantine did to the exit status."""
        session.result_listeners.append(self.take_result)

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from pytest_qbench.history.database import existing_index
        from pytest_qbench.history.quarantine import quarantined_tests

        self.pytest_session = session

        settings = self.settings
        try:
            index = existing_index(settings.qbench_dir, settings.db)
            try:  # auto's monitors are asked at the end, about the failures only
                self.quarantined = quarantined_tests(index, settings.quarantine_file)
            finally:
                if index is not None:
                    index.close()
        except Exception as exc:
            self.verdict = f"the quarantine could not be read ({error_text(exc)}): none applies"

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and not hasattr(report, "wasxfail"):  # as pytest counts testsfailed
            self.failing.append(self.session.redact(report.nodeid))
            counted = self.pytest_session.testsfailed if self.pytest_session else 0
            if counted == self.counted and _failed_by_its_subtests(report):
                self.uncounted += 1
            self.counted = counted

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.failing.append(self.session.redact(report.nodeid) or "collection")
            self.counted = self.pytest_session.testsfailed if self.pytest_session else 0

    def take_result(self, result: TestResultRecord) -> None:
        """Keep the fingerprint of a quarantined test's failure (with ``auto``, of every
        failure: which tests the monitors call flaky is asked at the end)."""
        auto = self.settings.quarantine == "auto"
        if result["outcome"] in FAILING and (auto or result["nodeid"] in self.quarantined):
            from pytest_qbench.history.fingerprint import fingerprint_of

            self.prints[result["nodeid"]] = fingerprint_of(result)

    def forgive(self, session: pytest.Session) -> bool:
        """Whether the run's failures are all quarantined known failures (pytest's status 1
        becomes 0); the terminal's lines are kept."""
        if self.verdict:  # the quarantine could not be read
            return False
        if self.settings.quarantine == "auto":
            try:
                self.quarantined = {**self.flaky_failures(), **self.quarantined}
            except Exception as exc:
                self.verdict = (
                    f"the flaky monitors could not be read ({error_text(exc)}): no failure is "
                    "excused"
                )
                return False
        quarantined = [
            nodeid for nodeid in dict.fromkeys(self.failing) if nodeid in self.quarantined
        ]
        self.judged = self._judge(quarantined)
        self.session.quarantined = {j.nodeid: j.known for j in self.judged}
        others = len(self.failing) - sum(self.failing.count(n) for n in quarantined)
        new = [j for j in self.judged if not j.known]
        if session.shouldstop or session.shouldfail:
            self.verdict = "the run stopped early: the quarantine does not change its status"
        elif session.testsfailed != len(self.failing) - self.uncounted:
            self.verdict = (
                f"pytest counted {session.testsfailed + self.uncounted} failures, the "
                f"quarantine saw {len(self.failing)}: the run stays failed"
            )
        elif new:
            self.verdict = f"{len(new)} quarantined test(s) failed in a new way: the run fails"
        elif others:
            self.verdict = f"{others} failure(s) not quarantined: the run fails"
        elif self.judged:
            self.verdict = (
                "every failure is a quarantined test's known failure: exit status 0 "
                f"(--qbench-quarantine {self.settings.quarantine})"
            )
            return True
        return False

    def flaky_failures(self) -> dict[str, str]:
        """The run's failures that the flaky monitors call flaky in the history, and why."""
        from pytest_qbench.history.database import existing_index
        from pytest_qbench.history.quarantine import flaky_among

        failing = [n for n in dict.fromkeys(self.failing) if n not in self.quarantined]
        if not failing:
            return {}
        index = existing_index(self.settings.qbench_dir, self.settings.db)
        if index is None:
            return {}
        try:
            return flaky_among(index, failing, self.settings.monitors or DEFAULT_MONITORS)
        finally:
            index.close()

    def _judge(self, nodeids: list[str]) -> list[Judged]:
        """Each quarantined failure, and whether its fingerprint is known (an index that does
        not exist knows none)."""
        from pytest_qbench.history.database import existing_index
        from pytest_qbench.history.quarantine import failed_before_with

        if not nodeids:
            return []
        index = existing_index(self.settings.qbench_dir, self.settings.db)
        try:
            judged = []
            for nodeid in nodeids:
                fp = self.prints.get(nodeid)
                known = (
                    index is not None and fp is not None and failed_before_with(index, nodeid, fp)
                )
                judged.append(Judged(nodeid, self.quarantined[nodeid], fp, known))
            return judged
        finally:
            if index is not None:
                index.close()

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for judged in self.judged:
            terminalreporter.write_line(
                f"qbench: quarantine: {judged.line()}", yellow=judged.known, red=not judged.known
            )
        if self.verdict:
            terminalreporter.write_line(f"qbench: quarantine: {self.verdict}", bold=True)

    @pytest.hookimpl
    def pytest_qbench_markdown_sections(self) -> list[ReportSection] | None:
        if not self.judged and not self.verdict:
            return None
        from pytest_qbench.report.models import ReportSection

        lines = [f"- {judged.line()}" for judged in self.judged]
        if self.verdict:
            lines.append(f"\n{self.verdict}.")
        return [ReportSection(title="Quarantined", body="\n".join(lines))]


def register(
    config: pytest.Config, session: QBenchSession, settings: Settings, judged: Verdicts
) -> None:
    """Register the quarantine beside the session; `Verdicts` asks it to forgive."""
    plugin = QuarantinePlugin(session, settings)
    registered.register(config, plugin, PLUGIN_NAME)
    judged.forgive = plugin.forgive


def _failed_by_its_subtests(report: pytest.TestReport) -> bool:
    """Whether pytest 9's subtests plugin failed this passing test for its failed subtests: it
    does so in ``pytest_report_teststatus``, after the session's ``pytest_runtest_logreport``
    counted the report as passed; its ``longrepr`` is then only the words it writes."""
    longrepr = report.longrepr
    return (
        report.when == "call"
        and isinstance(longrepr, str)
        and longrepr.startswith("contains ")
        and longrepr.endswith((" failed subtest", " failed subtests"))
        and not hasattr(report, "context")  # a subtest's own report
    )
