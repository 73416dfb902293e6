"""`Limits`: the caps on the text kept per test, one for the plugin and for ``ingest-junit``."""

from __future__ import annotations

from pytest_qbench.core.records import dataclass
from pytest_qbench.core.text import DEFAULT_MAX_OUTPUT
from pytest_qbench.core.text import DEFAULT_MAX_TRACE


MAX_MESSAGE = 4000
"""Characters kept per error message."""


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class Limits:
    """Caps on the text kept per test (the ``--qbench-max-*`` options)."""

    max_output: int = DEFAULT_MAX_OUTPUT
    """Characters kept per captured stream."""
    max_trace: int = DEFAULT_MAX_TRACE
    """Characters kept per stack trace (the end is kept)."""
    max_message: int = MAX_MESSAGE
    """Characters kept per error message (the start is kept)."""


MIB = 1 << 20
DEFAULT_ATTACH_MAX_SIZE = 10 * MIB
DEFAULT_ATTACH_MAX_TOTAL = 100 * MIB


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class AttachLimits:
    """Caps on attachments (``--qbench-attach-max-size``, ``--qbench-attach-max-total``)."""

    max_size: int = DEFAULT_ATTACH_MAX_SIZE
    """Bytes per attachment; a larger one is not stored."""
    max_total: int = DEFAULT_ATTACH_MAX_TOTAL
    """Bytes of all the run's attachments; those beyond are not stored."""


__all__ = [
    "DEFAULT_ATTACH_MAX_SIZE",
    "DEFAULT_ATTACH_MAX_TOTAL",
    "MAX_MESSAGE",
    "MIB",
    "AttachLimits",
    "Limits",
]
