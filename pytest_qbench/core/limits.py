"""`Limits`: the caps on the text kept per test, one for the plugin and for ``ingest-junit``."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_qbench.core.text import DEFAULT_MAX_OUTPUT
from pytest_qbench.core.text import DEFAULT_MAX_TRACE


MAX_MESSAGE = 4000
"""Characters kept per error message."""


@dataclass(frozen=True)
class Limits:
    """Caps on the text kept per test (the ``--qbench-max-*`` options)."""

    max_output: int = DEFAULT_MAX_OUTPUT
    """Characters kept per captured stream."""
    max_trace: int = DEFAULT_MAX_TRACE
    """Characters kept per stack trace (the end is kept)."""
    max_message: int = MAX_MESSAGE
    """Characters kept per error message (the start is kept)."""


__all__ = ["MAX_MESSAGE", "Limits"]
