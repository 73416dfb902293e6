"""The gates' verdicts inside pytest, and the one place that fails the run for them.

Every gate (``--qbench-cov-fail-under``, ``--qbench-metric-min``, ``--qbench-baseline``,
``--qbench-max-errors``) hands its verdict to `Verdicts.judge`. A gate whose judging raises, or
whose set-up failed, is a failed ``GateResult`` that names the gate and the internal error: a
verdict qbench could not reach fails closed, it never passes. `Verdicts.pytest_sessionfinish`,
the outermost wrapper, turns any failed gate into exit status 1, before the report records the
exit status and before the terminal summary; it never touches a status other than 0 or 5 (no
tests collected), so a run that failed or was interrupted keeps its own. One exception, asked
for with ``--qbench-quarantine``: it first turns 1 into 0 when every failure is a quarantined
test's known failure (``Verdicts.forgive``, ``plugin/quarantine.py``; an error there keeps 1).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.plugin import registered
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.plugin.options.settings import Settings
    from pytest_qbench.report.models import GateKind
    from pytest_qbench.report.records import GateResultRecord

PLUGIN_NAME = "qbench-verdicts"
GATE_FAILING_STATUSES = (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
"""The exit statuses a failed gate turns into 1 (pytest-cov's rule: a failed test run keeps its
own status)."""

EXPLAINED_BY_PYTEST = (pytest.ExitCode.INTERRUPTED,)
"""The failing statuses pytest's own closing lines explain (``Interrupted: ...``)."""

Note = Callable[[str, BaseException], None]
UNJUDGED = (
    "not judged, so it fails: the run ended before its tests ran (pytest.exit while "
    "collecting, say)"
)
"""The ``detail`` of a gate asked for that nothing judged by the session's end."""


def error_text(exc: BaseException) -> str:
    """``RuntimeError: boom``: the exception's type and message, on one line."""
    return " ".join("".join(traceback.format_exception_only(type(exc), exc)).split())


class Verdicts:
    """Every gate's verdict of the run; fails the run when one failed."""

    def __init__(
        self,
        gates: list[GateResultRecord],
        note: Note | None = None,
        redact: Callable[[str], str] = str,
        expected: Sequence[tuple[GateKind, str]] = (),
    ) -> None:
        self.gates = gates
        """The verdicts, in the order judged (the session's list: the report's gates)."""
        self.expected = list(expected)
        """The gates the user asked for (`configured_gates`): one of a kind never judged when
        the session ends (the test loop never ran: ``pytest.exit`` while collecting) fails."""
        self.note = note
        self.redact = redact
        self.errored: list[GateResultRecord] = []
        """The gates qbench could not judge; their terminal lines are written here."""
        self.session: pytest.Session | None = None
        """The session, once it finishes (its final status, for the terminal summary)."""
        self.forgive: Callable[[pytest.Session], bool] | None = None
        """``--qbench-quarantine``: whether a failed run's failures are all quarantined known
        ones (``plugin/quarantine.py``); the only way its status 1 becomes 0."""

    def judge(
        self, kind: GateKind, name: str, decide: Callable[[], list[GateResultRecord]]
    ) -> list[GateResultRecord]:
        """Record what ``decide`` returns; when it raises, one failed gate ``kind`` ``name``
        that names the error."""
        try:
            gates = decide()
        except Exception as exc:
            gates = [self.fail(kind, name, exc)]
        else:
            self.gates.extend(gates)
        return gates

    def fail(self, kind: GateKind, name: str, exc: BaseException) -> GateResultRecord:
        """Record gate ``kind`` ``name`` as failed by an internal error (``exc``)."""
        from pytest_qbench.report.gates.text import errored_detail  # only when a gate errs
        from pytest_qbench.report.gates.text import gate_label

        gate = new(
            "GateResult",
            kind=kind,
            name=name,
            passed=False,
            detail=self.redact(errored_detail(error_text(exc))),
        )
        if self.note is not None:
            self.note(f"the {gate_label(gate)} {name}", exc)
        self.errored.append(gate)
        self.gates.append(gate)
        return gate

    @contextmanager
    def setting_up(self, settings: Settings, *kinds: GateKind) -> Iterator[None]:
        """Set up the gates of ``kinds``: an exception fails each of them that is configured
        (a gate is never dropped silently); with none configured it is only noted."""
        try:
            yield
        except Exception as exc:
            own = [(kind, name) for kind, name in configured_gates(settings) if kind in kinds]
            for kind, name in own:
                self.fail(kind, name, exc)
            if not own and self.note is not None:
                self.note(f"setting up {', '.join(kinds)}", exc)

    def failed(self) -> bool:
        """Whether a gate failed."""
        return any(gate["passed"] is False for gate in self.gates)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, object, object]:
        # before the other implementations: the report and the summary see the final status
        self.session = session
        self.settle(session)
        return (yield)

    def settle(self, session: pytest.Session) -> None:
        """Set the run's exit status from the verdicts. An error here is noted, and fails the
        run when a gate was asked for (its verdict could not be read: closed), else leaves
        pytest's status as it is."""
        try:
            if session.exitstatus == pytest.ExitCode.TESTS_FAILED and self._forgiven(session):
                session.exitstatus = pytest.ExitCode.OK
            if not session.config.option.collectonly:  # no gate is judged then
                self._fail_unjudged()
            failed = self.failed()
        except Exception as exc:
            failed = bool(self.expected or self.gates)
            if self.note is not None:
                self.note("the gates' verdicts" + (" (the run fails)" if failed else ""), exc)
        if failed and session.exitstatus in GATE_FAILING_STATUSES:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _fail_unjudged(self) -> None:
        """Fail each gate asked for of a kind none was judged of (by kind: the baseline's are
        named by metric)."""
        kinds = {gate["kind"] for gate in self.gates}
        for kind, name in self.expected:
            if kind not in kinds:
                kinds.add(kind)
                gate = new("GateResult", kind=kind, name=name, passed=False, detail=UNJUDGED)
                self.errored.append(gate)
                self.gates.append(gate)

    def _forgiven(self, session: pytest.Session) -> bool:
        """The quarantine's answer; an error in it keeps the run failed, named."""
        if self.forgive is None:
            return False
        try:
            return self.forgive(session)
        except Exception as exc:
            if self.note is not None:
                self.note("the quarantine (the run stays failed)", exc)
            return False

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        try:
            unexplained = self._unexplained(terminalreporter.stats)
        except Exception:  # a bug in the verdicts, noted at the session's end already
            unexplained = None
        if unexplained:
            terminalreporter.write_line(f"qbench: {unexplained}", red=True, bold=True)
        if not self.errored:
            return
        from pytest_qbench.report.gates.text import gate_lines

        for gate in self.errored:
            for line, markup in gate_lines(gate):
                terminalreporter.write_line(f"qbench: {line}", **markup)

    def _unexplained(self, stats: dict[str, list[object]]) -> str | None:
        # the session's status, not the terminal summary's argument: a pytest_sessionfinish
        # may have set it; a plugin's session.shouldfail has the session-failed note
        session = self.session
        if session is None or isinstance(session.shouldfail, str):
            return None
        return self.unexplained_status(int(session.exitstatus), stats)

    def unexplained_status(self, status: int, stats: dict[str, list[object]]) -> str | None:
        """The line saying why the run is red when pytest's ``status`` fails it, yet no test
        failed (pytest's ``stats``), no gate failed, and pytest's own lines say nothing of it
        (a plugin or a conftest set ``session.exitstatus``); ``None`` otherwise."""
        if status in (*GATE_FAILING_STATUSES, *EXPLAINED_BY_PYTEST) or self.failed():
            return None
        if any(reports and ("failed" in key or "error" in key) for key, reports in stats.items()):
            return None  # "subtests failed" too
        from pytest_qbench.core.exit_codes import PYTEST_MEANINGS

        meaning = PYTEST_MEANINGS.get(status, "a status of a failed run")
        return (
            f'pytest exits {status}, its status for "{meaning}", though its line counts no failed '
            "test and no gate of qbench's failed: a plugin or a conftest set that status (see "
            "its output)"
        )


def register(config: pytest.Config, verdicts: Verdicts) -> Verdicts:
    """Register ``verdicts`` beside the session (unregistered with qbench's other plugins)."""
    registered.register(config, verdicts, PLUGIN_NAME)
    return verdicts


def configured_gates(settings: Settings) -> list[tuple[GateKind, str]]:
    """The gates the user asked for, as (kind, name), before any was judged."""
    gates: list[tuple[GateKind, str]] = []
    if settings.coverage.fail_under is not None:
        gates.append(("coverage", "coverage"))
    gates.extend(("metric_min", name) for name in settings.gates.metric_min)
    if settings.gates.baseline is not None:
        gates.append(("baseline", settings.gates.baseline.source))
    if settings.checks.max_errors is not None:
        gates.append(("max_errors", ", ".join(settings.checks.tools)))
    return gates


def fail_at_start(config: pytest.Config, settings: Settings, exc: BaseException) -> None:
    """qbench could not start: each gate the user configured fails, naming ``exc`` (a gate is
    never dropped silently); without one, nothing changes."""
    gates = configured_gates(settings)
    if not gates:
        return
    verdicts = register(config, Verdicts([]))
    for kind, name in gates:
        verdicts.fail(kind, name, exc)


__all__ = ["Verdicts", "configured_gates", "fail_at_start", "register"]
