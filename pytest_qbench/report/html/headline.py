"""The headline in pytest's words, as ``summary.md.j2`` words it for ``report.md``; whether it
is green is `pytest_qbench.report.verdict.run_green`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_qbench.core import summary_words as words


def summary_parts(summary: Mapping[str, Any]) -> list[str]:
    """``["1 failed", "10 passed", "2 warnings"...]``: the counts that are not zero, in the order
    and the words of pytest's summary line (other plugins' words last)."""
    return words.summary_parts(summary, other=summary["other"])
