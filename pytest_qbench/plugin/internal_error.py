"""pytest's own ``INTERNALERROR``: a hook raised while pytest ran the tests (a test closed
``sys.stdout`` under ``-s``, and the terminal reporter raised writing a test's letter; an
xdist worker's internal error). pytest stops the run there and exits 3.

The report is written at the session's end as ever, with the results so far; this plugin
makes it say that the run did not finish and why (``pytest-internal-error``: the run is
``interrupted``, never green), and gives the session the report pytest was logging when the
hook raised, which never reached qbench's ``pytest_runtest_logreport`` (it runs last): pytest's
terminal counted that report already.
"""

from __future__ import annotations

import traceback
from types import TracebackType
from typing import TYPE_CHECKING

import pytest

from pytest_qbench.core.text import exception_line


if TYPE_CHECKING:
    from pytest_qbench.plugin.session import QBenchSession


TERMINAL = "terminalreporter"
CODE = "pytest-internal-error"
"""The code of the note (a qbench warning of the report) that says so."""


class PytestInternalError:
    """Registered beside the session (``qbench-internal-error``): no hook of it runs per test."""

    def __init__(self, config: pytest.Config, session: QBenchSession) -> None:
        self.config = config
        self.session = session
        self.noted: str | None = None
        """Whose internal error was noted: a worker's (xdist), pytest's, or none yet."""

    # tryfirst: the terminal reporter's implementation writes the INTERNALERROR lines, and
    # raises again when what broke is its own stream
    @pytest.hookimpl(tryfirst=True)
    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        session = self.session
        worker = _from_worker(excinfo.value)
        # the first error is the cause, unless a worker's comes after xdist's own (it raises for
        # the worker's test it had sent, or the worker's internal error)
        if session.ended or self.noted == "worker" or (self.noted and not worker):
            return
        self.noted = "worker" if worker else "pytest"
        with session.guard("pytest_internalerror"):
            lost = self.take_lost_report(excinfo.tb)
            keys = (*session.pending, *session.plain_tests)  # an xdist report's: (id, node)
            going = {str(key[0] if isinstance(key, tuple) else key) for key in keys} - {lost}
            session.interrupted = True
            text = internal_error_text(excinfo.value, lost, sorted(going))
            session.note_warning(CODE, text, None, None)

    # a plain implementation: it runs inside the session's wrapper, before the reports
    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.config.pluginmanager.get_plugin(TERMINAL) is None:
            return
        try:  # the terminal reporter writes its summary after the reports, unconditionally
            self.config.get_terminal_writer().flush()
        except (ValueError, OSError) as exc:  # its stream is closed (sys.stdout under -s)
            # as when a pytest_sessionfinish implementation raises (`session_end_broke`):
            # pytest's exit status is the traceback's (1), not the session's; the report is
            # incomplete, unless the INTERNALERROR that stream caused says why already
            self.session.end_broke = True
            if self.noted is None:
                self.session.note_internal_error("the session's end", closed_terminal_text(exc))

    def take_lost_report(self, tb: TracebackType | None) -> str | None:
        """Give the session the test report pytest was logging when a plugin's
        ``pytest_runtest_logreport`` raised before the session's ran; its node id, or ``None``
        when the error came from elsewhere (or the session had the report already)."""
        impls = self.config.hook.pytest_runtest_logreport.get_hookimpls()
        order = list(reversed(impls))  # pluggy calls the last first
        ours = self.config.pluginmanager.get_plugin("qbench-session")
        by_code = {getattr(impl.function, "__code__", None): impl for impl in impls}
        while tb is not None:  # the outermost implementation on the way is the one that raised
            impl = by_code.get(tb.tb_frame.f_code)
            if impl is not None:
                report = tb.tb_frame.f_locals.get("report")
                mine = [i for i in order if i.plugin is ours]
                if not isinstance(report, pytest.TestReport) or not mine:
                    return None
                if impl is mine[0] or order.index(mine[0]) < order.index(impl):
                    return None  # the session's ran before it
                mine[0].function(report=report)
                return str(report.nodeid)
            tb = tb.tb_next
        return None


def internal_error_text(error: BaseException, lost: str | None, going: list[str]) -> str:
    """The note: pytest's error in one line, and what of the run is missing."""
    detail = _one_line(error)
    root = error
    for _ in range(20):  # the first error of the chain (a warning made an error by
        # filterwarnings may be raised over it: pluggy's PluggyTeardownRaisedWarning)
        below = root.__cause__ or root.__context__
        if below is None:
            break
        root = below
    if root is not error:
        detail += f", raised over {_one_line(root)}"
    text = f"pytest stopped the run with an internal error (INTERNALERROR> {detail[:400]})"
    if lost is not None:
        text += f" as it logged a report of {lost} (in this report; the test's phases after it never ran)"
    if going:
        shown = ", ".join(going[:3]) + (f" and {len(going) - 3} more" if len(going) > 3 else "")
        text += f"; {shown} had not finished (no result)"
    return text


def closed_terminal_text(error: BaseException) -> str:
    """The note when the terminal's stream broke before pytest's summary."""
    detail = exception_line(error, 300)
    return (
        f"the terminal's stream broke before pytest's summary ({detail}; a test or a fixture's "
        "teardown closed sys.stdout under -s?): pytest stops with a traceback as it writes its "
        "summary (exit status 1), so pytest's closing line and what came after it are missing"
    )


def _one_line(error: BaseException) -> str:
    """An exception in one line: its type and first line; of the traceback xdist sends of a
    worker's internal error (``AssertionError: Traceback ...``), its last line."""
    lines = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
    if not lines:
        return type(error).__name__
    line = lines[0]
    if _from_worker(error):  # the first exception line of the text (frames are indented),
        # not the "assert False" that pytest's rewriting of xdist's assertion adds
        first, *rest = str(error).splitlines()
        if all(
            text.startswith(("  ", "assert ")) for text in rest if text
        ):  # as pytest's rewriting
            # of xdist's assertion indents it
            rest = [text[2:] for text in rest]
        heads = [
            text
            for text in (first, *rest)
            if text and not text[0].isspace() and not text.startswith(NOT_AN_ERROR)
        ]
        line = heads[0] if heads else lines[-1]
    return " ".join(line.split())[:200]


NOT_AN_ERROR = ("Traceback (", "During handling of", "The above exception", "assert ")
"""The lines of a traceback's text at its left margin that name no exception."""


def _from_worker(error: BaseException) -> bool:
    """Whether ``error`` is xdist's of a worker's internal error: an ``AssertionError`` whose
    message is the worker's traceback, as text."""
    return isinstance(error, AssertionError) and "Traceback (most recent call" in str(error)


def register(config: pytest.Config, session: QBenchSession) -> None:
    """Register the plugin beside ``session``."""
    from pytest_qbench.plugin import registered

    registered.register(config, PytestInternalError(config, session), "qbench-internal-error")


__all__ = ["CODE", "PytestInternalError", "internal_error_text", "register"]
