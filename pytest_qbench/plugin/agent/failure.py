"""How a failed agent check shows in pytest's terminal: the failing checks with their scores and
thresholds, then the input, the response and the ground truth (each bounded), at the case file's
or the test's location, without pytest's "All traceback entries are hidden" note.

pytest builds the failure's representation from the `MetricFailure`; this module only rewrites
the lines of its last traceback entry and its crash location, so pytest-xdist ships it as any
other failure. ``--full-trace`` and ``--tb=native`` keep pytest's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.evaluation.sample import as_text


if TYPE_CHECKING:
    from pytest_qbench.plugin.agent.state import AgentState

FAIL_MARKER = "E   "
HIDDEN_NOTE = "All traceback entries are hidden"
"""pytest's note when every frame is hidden: the failure has no frame of the user's."""
MAX_FIELD_CHARS = 300
MAX_FIELD_LINES = 5
FIELDS = (("input", "input"), ("response", "response"), ("ground_truth", "ground truth"))


def rewrite_failure(report: pytest.TestReport, item: pytest.Item, state: AgentState | None) -> None:
    """Put the short agent failure into ``report.longrepr`` (pytest's own repr, edited)."""
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    traceback = getattr(longrepr, "reprtraceback", None)
    entries = list(getattr(traceback, "reprentries", None) or [])
    if crash is None or traceback is None or not entries:
        return
    style = getattr(entries[-1], "style", None)
    if style not in ("long", "short", "line"):
        return  # --tb=native: the user asked for Python's own traceback
    message = _exception_text(str(crash.message or ""))
    crash.message = f"MetricFailure: {one_line(message)}"
    entry = entries[-1]
    hidden = HIDDEN_NOTE in str(traceback.extraline or "") or (
        entry.reprfileloc is None and style != "line"
    )
    if hidden:  # no frame of the user's: the fail rules ran after the test returned
        crash.path, crash.lineno = failure_location(item)
        if entry.reprfileloc is None and style != "line":
            entry.reprfileloc = type(crash)(crash.path, crash.lineno, "MetricFailure")
    traceback.extraline = None
    if style == "line":
        traceback.reprentries = []  # --tb=line: the crash line alone, as for any failure
        return
    kept = list(entry.lines)
    first_fail = next((i for i, text in enumerate(kept) if text.startswith(FAIL_MARKER)), None)
    if first_fail is not None:
        kept = kept[:first_fail]  # pytest's exception lines, replaced by ours
    entry.lines = [*kept, *failure_lines(message, state)]


def failure_lines(message: str, state: AgentState | None) -> list[str]:
    """The ``E   `` lines: the failing checks, then what the agent was asked and answered."""
    lines = [f"{FAIL_MARKER}{line}" for line in message.splitlines()]
    sample = state.sample if state is not None else None
    if sample is None:
        return lines
    width = max(len(label) for _, label in FIELDS) + 1
    for attribute, label in FIELDS:
        value = getattr(sample, attribute, None)
        if value is None:
            continue
        shown = clip(as_text(value)).splitlines() or [""]
        lines.append(f"{FAIL_MARKER}{f'{label}:':<{width}} {shown[0]}")
        lines.extend(f"{FAIL_MARKER}{'':<{width}} {rest}" for rest in shown[1:])
    return lines


def one_line(message: str) -> str:
    """``2 qbench checks failed: metric a: ...; metric b: ...`` for pytest's one-line places."""
    first, *rest = message.splitlines() or [""]
    return " ".join([first, "; ".join(line.strip() for line in rest)]).strip()


def clip(text: str) -> str:
    """At most `MAX_FIELD_LINES` lines and `MAX_FIELD_CHARS` characters, with a marker."""
    lines = text.splitlines()
    cut = "\n".join(lines[:MAX_FIELD_LINES])[:MAX_FIELD_CHARS]
    left = len(text.rstrip()) - len(cut)
    if left > 0:
        cut += f" [... {left} more characters in the report]"
    return cut


def failure_location(item: pytest.Item) -> tuple[str, int]:
    """The case's line in its case file, else the test's: ``(path, line)`` as pytest shows it."""
    path, line0, _ = item.location
    case: Any = getattr(item, "case", None)
    case_line = getattr(case, "line", None)
    if isinstance(case_line, int):
        return path, case_line
    return path, (line0 or 0) + 1


def _exception_text(message: str) -> str:
    """``MetricFailure``'s message without pytest's ``module.MetricFailure: `` prefix."""
    head, sep, rest = message.partition("MetricFailure: ")
    return rest if sep and "." in head + "." else message
