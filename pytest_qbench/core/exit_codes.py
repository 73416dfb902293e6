"""Exit statuses, named once: pytest's (the values of ``pytest.ExitCode``, without importing
pytest) and those of qbench's own commands (as coverage.py's ``OK``, ``ERR``)."""

from __future__ import annotations

from enum import IntEnum


class PytestExit(IntEnum):
    """pytest's exit statuses, by ``pytest.ExitCode``'s names (a test checks they agree; an
    older pytest lacks the newer ones)."""

    OK = 0
    TESTS_FAILED = 1
    INTERRUPTED = 2
    INTERNAL_ERROR = 3
    USAGE_ERROR = 4
    NO_TESTS_COLLECTED = 5
    MAX_WARNINGS_ERROR = 6
    """pytest 9: every test passed, but there were more warnings than ``--max-warnings``."""


PYTEST_MEANINGS: dict[int, str] = {
    PytestExit.OK: "all tests passed",
    PytestExit.TESTS_FAILED: "tests failed",
    PytestExit.INTERRUPTED: "interrupted",
    PytestExit.INTERNAL_ERROR: "internal error",
    PytestExit.USAGE_ERROR: "usage error",
    PytestExit.NO_TESTS_COLLECTED: "no tests collected",
    PytestExit.MAX_WARNINGS_ERROR: "tests passed, but more warnings than --max-warnings allows",
}
"""pytest's exit status in words."""
STOPPED_EARLY_OK = "pytest.exit stopped the session before every test ran"
"""Status 0 of a run pytest marked interrupted (``pytest.exit(..., returncode=0)`` in a test or
a hook): the tests it did not reach never ran, so not "all tests passed"."""


def pytest_meaning(code: int | None, interrupted: bool, default: str = "") -> str:
    """pytest's exit status ``code`` in words (``default`` for a status pytest does not use);
    status 0 of an ``interrupted`` run is `STOPPED_EARLY_OK`."""
    if code == PytestExit.OK and interrupted:
        return STOPPED_EARLY_OK
    return default if code is None else PYTEST_MEANINGS.get(code, default)


RAN_CLEAN = (PytestExit.OK, PytestExit.NO_TESTS_COLLECTED)
"""The statuses of a run in which nothing failed (no test, or every test, passed)."""
WROTE_RESULTS = (
    PytestExit.OK,
    PytestExit.TESTS_FAILED,
    PytestExit.NO_TESTS_COLLECTED,
    PytestExit.MAX_WARNINGS_ERROR,
)
"""The statuses of a run that ran to its end, so its results say what happened."""

OK = 0
"""A ``qbench`` command did what it was asked (``qbench check``: no error found)."""
ERR = 1
"""The command failed, or found what it reports as a failure (a new failure in ``diff``, a
checker's error in ``check``)."""
USAGE = 2
"""A usage error: an option or argument refused (argparse's own status)."""
INCOMPLETE = 3
"""``qbench check`` found no error, but a checker asked for did not run (not installed)."""


__all__ = [
    "ERR",
    "INCOMPLETE",
    "OK",
    "PYTEST_MEANINGS",
    "RAN_CLEAN",
    "STOPPED_EARLY_OK",
    "USAGE",
    "WROTE_RESULTS",
    "PytestExit",
    "pytest_meaning",
]
