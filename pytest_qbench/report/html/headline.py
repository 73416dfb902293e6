"""The headline in pytest's words, as ``summary.md.j2`` words it for ``report.md``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_qbench.core import summary_words as words
from pytest_qbench.core.exit_codes import RAN_CLEAN


def summary_parts(summary: Mapping[str, Any]) -> list[str]:
    """``["1 failed", "10 passed", "2 warnings"...]``: the counts that are not zero, in the order
    and the words of pytest's summary line (other plugins' words last)."""
    return words.summary_parts(summary, other=summary["other"])


def run_ok(report: Mapping[str, Any]) -> bool:
    """Whether the run is green: no failure, no error, not interrupted, no gate failed, and the
    runner's exit status (when known) one of a run in which nothing failed, as the digest's
    ``success``: pytest's 3 (internal error) or a plugin's 1 fails a CI job whatever the counts
    say."""
    s, coverage = report["summary"], report["coverage"]
    return not (
        s["failed"]
        or s["errors"]
        or report["run"]["interrupted"]
        or report["run"]["exit_code"] not in (*RAN_CLEAN, None)
        or (coverage and coverage["met"] is False)
        or any(g["passed"] is False for g in report["gates"])
    )
