"""Static checkers beside the tests (``--qbench-check``, issue 13.4).

The checkers start as child processes when the session starts (on the controller only under
xdist: workers have no session; not with ``--collect-only``, which runs nothing), so they run
while the tests run. When the test loop ends, each is waited for up to the timeout
(``--qbench-check-timeout``), then stopped with a note; their diagnostics go into the session's
report, and ``--qbench-max-errors`` is judged through `pytest_qbench.plugin.verdicts`, which
fails the run for every gate (an error while starting the checkers or judging their errors fails
it). Their raw logs are in the run directory.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.plugin import registered
from pytest_qbench.report.gates.text import gate_lines
from pytest_qbench.report.gates.text import is_errored


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.checks import CheckSettings
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.plugin.verdicts import Verdicts
    from pytest_qbench.report.records import GateResultRecord
    from pytest_qbench.tools.runner import Started

PLUGIN_NAME = "qbench-checks"


class CheckCollector:
    """Starts the checkers at session start, collects them when the tests are done."""

    def __init__(
        self,
        config: pytest.Config,
        session: QBenchSession,
        settings: CheckSettings,
        verdicts: Verdicts,
    ) -> None:
        self.config = config
        self.session = session
        self.settings = settings
        self.verdicts = verdicts
        self.running: list[Started] = []
        self.start_error: Exception | None = None
        self.lines: list[str] = []
        self.gate: GateResultRecord | None = None
        self.collected = False

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Start the checkers (after the session made the run directory: it runs first)."""
        if self.config.option.collectonly:
            return
        try:
            from pytest_qbench.tools.runner import start_checks

            self.running = start_checks(
                list(self.settings.tools),
                self.config.rootpath,
                [],
                self.session.run_dir,
                self.frontend(),
            )
        except Exception as exc:  # the gate, if any, fails when the tests are done
            self.start_error = exc
            if self.settings.max_errors is None:
                self.session.note_internal_error("starting the static checkers", exc)

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
        return result

    def frontend(self) -> Path | None:
        """The front end's directory when a front-end checker (tsc, eslint...) is asked for:
        ``qbench_frontend``, else the nearest ``package.json`` under the rootdir.

        Raises:
            QBenchError: ``qbench_frontend`` names no directory with a ``package.json``.
        """
        from pytest_qbench.tools.frontend import find_frontend
        from pytest_qbench.tools.registry import registry

        found = registry()
        if all(found.checker(name).tool.target != "frontend" for name in self.settings.tools):
            return None
        configured = str(self.config.getini("qbench_frontend") or "") or None
        return find_frontend(self.config.rootpath, configured)

    def collect(self) -> None:
        """Wait for the checkers (up to the timeout), put what they found into the report, and
        judge ``--qbench-max-errors``."""
        if self.config.option.collectonly or self.collected:
            return
        self.collected = True
        if self.settings.max_errors is None:
            with self.session.guard("collecting the static checkers"):
                self._collect()
        else:
            tools = ", ".join(self.settings.tools)
            (self.gate,) = self.verdicts.judge("max_errors", tools, self._judge)

    def _judge(self) -> list[GateResultRecord]:
        from pytest_qbench.report.checks.intest import max_errors_gate

        if self.start_error is not None:
            raise self.start_error
        assert self.settings.max_errors is not None
        counts = self._collect()
        runs = self.session.checks
        not_run = [run["run"]["tool"] for run in runs if run["status"] == "not_run"]
        crashed = [run["run"]["tool"] for run in runs if run["status"] == "crashed"]
        return [max_errors_gate(counts, self.settings.max_errors, not_run, crashed)]

    def _collect(self) -> dict[str, dict[str, int]]:
        """The checkers' runs and findings into the session; their counts per tool."""
        from pytest_qbench.report.checks.intest import count_line
        from pytest_qbench.report.checks.intest import report_parts
        from pytest_qbench.tools.runner import collect_one
        from pytest_qbench.tools.runner import stop_all

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
        return counts

    def stop(self) -> None:
        """Stop the checkers still running; nothing of theirs goes into the report."""
        with self.session.guard("stopping the static checkers"):
            from pytest_qbench.tools.runner import stop_all

            stop_all(self.running)
            self.collected = True
            self.session.notes.append("static checkers stopped: the run was interrupted")

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            clean = line.endswith(": clean")
            terminalreporter.write_line(f"qbench: {line}", green=clean, yellow=not clean)
        if self.gate is not None and not is_errored(self.gate):  # the verdicts tell those
            for text, markup in gate_lines(self.gate):
                terminalreporter.write_line(f"qbench: {text}", **markup)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.running and not self.collected:  # the session never reached the test loop
            from pytest_qbench.tools.runner import stop_all

            stop_all(self.running)


def register(
    config: pytest.Config, session: QBenchSession, settings: CheckSettings, verdicts: Verdicts
) -> None:
    """Register the checkers' plugin beside the session."""
    registered.register(config, CheckCollector(config, session, settings, verdicts), PLUGIN_NAME)


__all__ = ["CheckCollector", "register"]
