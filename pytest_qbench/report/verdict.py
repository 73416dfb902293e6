"""Whether a run is green: the one rule behind every verdict a report shows.

report.md's and summary.md's headline (the templates get it as ``green``), the HTML report's
headline, the digest's ``success`` and the CTRF document's ``extra.success`` all call
`run_green`; none writes the rule again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_qbench.core.exit_codes import RAN_CLEAN


MAX_RECORDING_ERRORS = 20
"""The errors ``RunMeta.recording_errors`` keeps; the last one kept says how many more."""


def recording_errors(report: Mapping[str, Any]) -> list[str]:
    """What qbench failed to record of the run (its own internal errors while recording):
    ``run.recording_errors``, or, in a report written before that field, the
    ``internal-error`` warnings of qbench. Empty when qbench recorded the whole run."""
    listed = report["run"].get("recording_errors")
    if listed:
        return list(listed)
    return [
        str(w["message"])
        for w in report.get("warnings") or ()
        if w.get("tool") == "qbench" and w.get("code") == "internal-error"
    ]


def run_green(report: Mapping[str, Any]) -> bool:
    """Whether the run is green (a ✅ headline, the digest's ``success``): every one of

    - no test failed and none errored (``summary.failed``, ``summary.errors``: failed
      subtests and collection errors count there, as in pytest's summary line);
    - the run was not interrupted (Ctrl-C, ``pytest.exit``, a process that died: a stream
      without its end record);
    - the runner's exit status is one of a run in which nothing failed (pytest's 0 or 5), or
      unknown: pytest's 3 (internal error) or a plugin's 1 fails a CI job whatever the
      counts say;
    - the coverage is not below its threshold, and no gate failed (a gate qbench could not
      judge has failed);
    - qbench recorded the whole run (`recording_errors` is empty): when qbench itself failed
      while recording, the report is incomplete, and an incomplete report is never green,
      whatever it counted.

    ``report`` is a ``TestReport`` record (``model_dump(mode="json")``).
    """
    summary, run, coverage = report["summary"], report["run"], report["coverage"]
    return not (
        summary["failed"]
        or summary["errors"]
        or run["interrupted"]
        or run["exit_code"] not in (*RAN_CLEAN, None)
        or (coverage and coverage["met"] is False)
        or any(gate["passed"] is False for gate in report["gates"])
        or recording_errors(report)
    )


def incomplete_text(errors: list[str]) -> str:
    """What the headline says under an incomplete report (plain text, escaped by the format it
    lands in): that qbench could not record the run, what failed, and the fix; "" when
    ``errors`` is empty."""
    if not errors:
        return ""
    more = f" ({len(errors)} errors; all are under the warnings)" if len(errors) > 1 else ""
    return (
        "qbench could not record this run, so this report is incomplete: its counts are what "
        "qbench recorded, not what ran (pytest's own summary line and exit status are right). "
        f"The error{more}: {errors[0]}. Fix: if it names one of your pytest_qbench_* hooks, fix "
        "that hook; otherwise report it as a bug in qbench, with this message."
    )


def bounded_errors(errors: list[str], limit: int = MAX_RECORDING_ERRORS) -> list[str]:
    """``errors`` without repeats, at most ``limit`` of them, the last kept saying how many
    more there were."""
    unique = list(dict.fromkeys(errors))
    if len(unique) <= limit:
        return unique
    more = len(unique) - limit + 1
    return [*unique[: limit - 1], f"and {more} more internal errors (see the warnings)"]


__all__ = [
    "MAX_RECORDING_ERRORS",
    "bounded_errors",
    "incomplete_text",
    "recording_errors",
    "run_green",
]
