"""A pytest plugin of the candidates' batch runs (``-p pytest_qbench.generate._alarm``): each
test is stopped ``QBENCH_TEST_SECONDS`` seconds after its set-up starts, by an alarm that raises
`CandidateHung`. That is a ``BaseException``, which neither Hypothesis nor a test's ``except
Exception`` catches, so a hanging candidate fails with a verdict of its own and the batch goes
on with the next; the time counts the test alone, not the child's start. It imports no pytest:
the hooks need none."""

from __future__ import annotations

import os
import signal
from typing import Any


SECONDS = "QBENCH_TEST_SECONDS"


class CandidateHung(BaseException):
    """A test ran past its seconds."""


def _on_alarm(signum: int, frame: object) -> None:
    raise CandidateHung(f"ran longer than {os.environ.get(SECONDS)}s")


def pytest_runtest_setup(item: Any) -> None:
    """Start the test's clock."""
    seconds = float(os.environ.get(SECONDS, "0") or 0)
    if seconds > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)


def pytest_runtest_teardown(item: Any, nextitem: Any) -> None:
    """Stop it."""
    signal.setitimer(signal.ITIMER_REAL, 0)
