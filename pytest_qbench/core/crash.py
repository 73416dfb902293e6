"""A ``qbench`` or ``qbench-mcp`` command's unexpected exception: one line on stderr saying it is
a bug in qbench and where its full traceback went, never a traceback on the user's terminal
(unless asked for with ``QBENCH_DEBUG=1``), and a failing exit status."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from datetime import datetime
from datetime import timezone
from pathlib import Path

from pytest_qbench.core.exit_codes import ERR


DEBUG_VARIABLE = "QBENCH_DEBUG"
"""Set to ``1`` to print an internal error's traceback on stderr."""


def report_internal_error(exc: Exception, program: str = "qbench") -> int:
    """Tell the user about ``exc`` (a bug in qbench) in one line, as ``program``; return the
    exit status."""
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if os.environ.get(DEBUG_VARIABLE, "") not in ("", "0"):
        sys.stderr.write(trace)
    written = write_trace(trace)
    where = (
        f"full traceback in {written} ({DEBUG_VARIABLE}=1 prints it here)"
        if written
        else f"set {DEBUG_VARIABLE}=1 to see its traceback"
    )
    what = " ".join("".join(traceback.format_exception_only(type(exc), exc)).split())
    print(
        f"{program}: internal error (a bug in qbench, please report it): {what}; {where}",
        file=sys.stderr,
    )
    return ERR


def write_trace(trace: str) -> Path | None:
    """``trace`` in a new file in the temporary directory; ``None`` when it cannot be written."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    try:
        handle, name = tempfile.mkstemp(prefix=f"qbench-error-{stamp}-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(trace)
    except OSError:
        return None
    return Path(name)
