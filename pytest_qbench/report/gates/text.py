"""How metric gates are told: terminal lines and the digest's next steps, on ``GateResult``
records (standard library only, so the CLI's digest and the pytest side say the same)."""

from __future__ import annotations

from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from pytest_qbench.report.records import GateResultRecord


SHOWN_NEWLY_FAILING = 5
ERRORED_SEPARATOR = "; errored in this run, so left out: "
"""Between a baseline gate's verdict and the tests whose metric errored (no score) in its
``detail``; the terminal shows them on a line of their own."""
NOT_JUDGED = "not judged, so it fails: internal error in qbench: "
"""How an errored gate's ``detail`` starts: qbench raised while judging or setting it up."""
GATE_LABELS = {
    "coverage": "coverage gate",
    "metric_min": "metric gate",
    "baseline": "baseline gate",
    "max_errors": "error gate",
}


def gate_label(gate: GateResultRecord) -> str:
    """``metric gate``, ``baseline gate``, ``coverage gate`` or ``error gate``."""
    return GATE_LABELS[gate["kind"]]


def errored_detail(error: str) -> str:
    """The ``detail`` of a gate qbench could not judge (``error``: the exception, one line)."""
    return NOT_JUDGED + " ".join(error.split())


def is_errored(gate: GateResultRecord) -> bool:
    """Whether qbench raised while judging ``gate`` (it then failed)."""
    return gate["passed"] is False and gate["detail"].startswith(NOT_JUDGED)


def gate_lines(gate: GateResultRecord) -> list[tuple[str, dict[str, bool]]]:
    """The terminal lines of a metric gate's verdict, with their colour."""
    label = gate_label(gate)
    passed = gate["passed"]
    markup = {"red": True, "bold": True} if passed is False else {"green": True}
    if passed is None:
        markup = {"yellow": True}
    verdict, sep, errored = gate["detail"].partition(ERRORED_SEPARATOR)
    lines = [(f"{label} {gate['name']}: {verdict}", markup)]
    if sep:
        lines.append((f"  errored in this run (no score, left out): {errored}", {}))
    failing = gate["newly_failing"]
    if failing:
        shown = ", ".join(failing[:SHOWN_NEWLY_FAILING])
        more = len(failing) - SHOWN_NEWLY_FAILING
        extra = f" (+{more} more in the report)" if more > 0 else ""
        lines.append((f"  from pass to fail: {shown}{extra}", {}))
    return lines


def gate_step(gate: GateResultRecord) -> str | None:
    """The digest's next step for a failed metric gate."""
    if gate["passed"] is not False:
        return None
    if is_errored(gate):
        return (
            f"The {gate_label(gate)} {gate['name']} was {gate['detail']}; fix the cause "
            "(see the internal-error warning) or report it as a bug in qbench"
        )
    if gate["kind"] == "coverage" and gate["name"] == "pytest-cov":
        return f"Add tests for the code pytest-cov's report lists as missing: {gate['detail']}"
    if gate["kind"] == "coverage" and gate["value"] is None:
        return f"Measure coverage for --qbench-cov-fail-under: {gate['detail']}"
    if gate["kind"] == "metric_min" and gate["value"] is None:
        return f"Fix the metric name in --qbench-metric-min: {gate['detail']}"
    if gate["kind"] == "metric_min":
        return (
            f"Raise the mean of metric {gate['name']} to the required {gate['threshold']:g} "
            f"(--qbench-metric-min): {gate['detail']}"
        )
    if gate["kind"] == "baseline":
        first = gate["newly_failing"][:1]
        start = f"; start with {first[0]}, which passed in the baseline" if first else ""
        return f"Metric {gate['name']} regressed against the baseline: {gate['detail']}{start}"
    if gate["kind"] == "max_errors":
        return f"Fix the static checkers' errors (--qbench-max-errors): {gate['detail']}"
    return None


__all__ = ["errored_detail", "gate_label", "gate_lines", "gate_step", "is_errored"]
