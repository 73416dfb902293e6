"""Static checkers beside the tests (``--qbench-check``, issue 13.4).

The checkers start as child processes when the session starts (on the controller only under
xdist: workers have no session; not with ``--collect-only``, which runs nothing), so they run
while the tests run. When the test loop ends, each is waited for up to the timeout
(``--qbench-check-timeout``), then stopped with a note; their diagnostics go into the session's
report, and ``--qbench-max-errors`` fails the run the way the coverage gate does
(``session.testsfailed`` raised in a ``pytest_runtestloop`` wrapper). Their raw logs are in the
run directory.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.plugin import registered


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.checks import CheckSettings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.report.checks.runner import Started
    from pytest_qbench.report.records import GateResultRecord

PLUGIN_NAME = "qbench-checks"


class CheckCollector:
    """Starts the checkers at session start, collects them when the tests are done."""

    def __init__(
        self, config: pytest.Config, session: QBenchSession, settings: CheckSettings
    ) -> None:
        self.config = config
        self.session = session
        self.settings = settings
        self.running: list[Started] = []
        self.lines: list[str] = []
        self.gate: GateResultRecord | None = None
        self.collected = False

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Start the checkers (after the session made the run directory: it runs first)."""
        if self.config.option.collectonly:
            return
        with self.session.guard("starting the static checkers"):
            from pytest_qbench.report.checks.runner import start_checks

            self.running = start_checks(
                list(self.settings.tools), self.config.rootpath, [], self.session.run_dir
            )

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            result = yield
        except (session.Interrupted, session.Failed):  # collection errors, -x: the tests ended
            self.collect()
            raise
        except BaseException:  # Ctrl-C, pytest.exit: stop them now
            self.stop()
            raise
        self.collect()
        if self.gate is not None and self.gate["passed"] is False:
            session.testsfailed += 1  # pytest then exits with 1, as with the coverage gate
        return result

    def collect(self) -> None:
        """Wait for the checkers (up to the timeout), put what they found into the report."""
        if not self.running or self.collected:
            return
        self.collected = True
        with self.session.guard("collecting the static checkers"):
            from pytest_qbench.report.checks.intest import count_line
            from pytest_qbench.report.checks.intest import max_errors_gate
            from pytest_qbench.report.checks.intest import report_parts
            from pytest_qbench.report.checks.runner import collect_one
            from pytest_qbench.report.checks.runner import stop_all

            timeout = self.settings.timeout
            limit = f"{timeout:g} s after the tests ended (--qbench-check-timeout)"
            # One deadline for all: the timeout counts from the end of the tests, not per checker.
            deadline = time.monotonic() + timeout
            try:
                checks = [
                    collect_one(
                        one,
                        self.config.rootpath,
                        self.session.run_dir,
                        max(0.0, deadline - time.monotonic()),
                        limit,
                    )
                    for one in self.running
                ]
            finally:
                stop_all(self.running)
            runs, found, counts = report_parts(checks)
            self.session.checks = runs
            self.session.diagnostics = found
            self.session.diagnostic_counts = counts
            self.lines = [count_line(run, counts.get(run["run"]["tool"], {})) for run in runs]
            if self.settings.max_errors is not None:
                self.gate = max_errors_gate(counts, self.settings.max_errors)
                self.session.gates.append(self.gate)

    def stop(self) -> None:
        """Stop the checkers still running; nothing of theirs goes into the report."""
        with self.session.guard("stopping the static checkers"):
            from pytest_qbench.report.checks.runner import stop_all

            stop_all(self.running)
            self.collected = True
            self.session.notes.append("static checkers stopped: the run was interrupted")

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            clean = line.endswith(": clean")
            terminalreporter.write_line(f"qbench: {line}", green=clean, yellow=not clean)
        if self.gate is not None:
            from pytest_qbench.report.gates.text import gate_lines

            for text, markup in gate_lines(self.gate):
                terminalreporter.write_line(f"qbench: {text}", **markup)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.running and not self.collected:  # the session never reached the test loop
            from pytest_qbench.report.checks.runner import stop_all

            stop_all(self.running)


def register(config: pytest.Config, session: QBenchSession, settings: CheckSettings) -> None:
    """Register the checkers' plugin beside the session."""
    registered.register(config, CheckCollector(config, session, settings), PLUGIN_NAME)


__all__ = ["CheckCollector", "register"]
