"""The history commands' readable output (``--json`` aside): plain text, one fact a line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.markdown import died_unseen
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.core.markdown import run_duration_text
from pytest_qbench.core.numbers import format_bytes
from pytest_qbench.core.summary_words import OUTCOME_FIELDS
from pytest_qbench.core.summary_words import SUBTEST_FIELDS
from pytest_qbench.core.summary_words import failed_subtests
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.summary_words import summary_parts
from pytest_qbench.core.text import strip_ansi
from pytest_qbench.core.timefmt import from_index_time
from pytest_qbench.history.analysis import ExecutionSummary
from pytest_qbench.history.compare import Change
from pytest_qbench.history.compare import RunDiff
from pytest_qbench.history.compare import Selection
from pytest_qbench.history.compare import incomplete
from pytest_qbench.history.compare import selections_differ
from pytest_qbench.history.diagnostics import diagnostic_line
from pytest_qbench.history.diagnostics import unchecked_lines
from pytest_qbench.history.files import StoreUsage
from pytest_qbench.history.flakiness import Verdict
from pytest_qbench.history.flaky_list import FlakyStatus
from pytest_qbench.history.queries import FailureInfo
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.toollog import ToolCall
from pytest_qbench.history.toollog import ToolTotals


if TYPE_CHECKING:
    from pytest_qbench.history.json_models import IndexedRunJson


MAX_LISTED = 50
"""Items listed per section; ``--json`` has them all."""
COUNT_FIELDS = (*OUTCOME_FIELDS, *SUBTEST_FIELDS, "deselected", "reruns")
"""The counts of a run the index keeps, worded as pytest does (`summary_words`): those of
pytest's closing line but its warnings, as the MCP server's answers show them."""


def when(moment: datetime | None) -> str:
    """``2026-01-02 03:04:05`` (UTC), or ``-``."""
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else "-"


def counts_text(counts: Mapping[str, int], other: Mapping[str, int] | None = None) -> str:
    """``1 failed, 10 passed, 1 skipped``: the counts that are not zero, and last those under
    plugins' own words (``other``: ``2 passed, 1 skipped, 1 known``), as pytest's line has
    them."""
    return ", ".join(summary_parts(counts, COUNT_FIELDS, other)) or "none ran"


def run_counts_text(run: RunInfo) -> str:
    """``4 tests: 2 passed, 1 skipped, 1 known``: a run's tests and their counts."""
    return f"{plural(run.counts['total'], 'test')}: {counts_text(run.counts, run.other)}"


def one_line(text: str, limit: int = 100) -> str:
    """Terminal-safe text on one line, cut to ``limit`` characters."""
    flat = " ".join(strip_ansi(text).split())
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell; the last column is not padded."""
    all_rows = [list(header), *(list(r) for r in rows)]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(header) - 1)]
    return [
        "  ".join(
            [*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]]
        ).rstrip()
        for row in all_rows
    ]


def state_words(run: RunInfo) -> str:
    """Why a run's counts are not the whole run: `` (interrupted)``, `` (incomplete)`` (qbench
    could not record all of it), both, or ``""``."""
    words = [
        word
        for word, on in (("interrupted", run.interrupted), ("incomplete", run.recording_errors))
        if on
    ]
    return f" ({', '.join(words)})" if words else ""


def runs_lines(runs: Sequence[RunInfo]) -> list[str]:
    """``qbench runs`` (the line of ``usage_line`` follows)."""
    if not runs:
        return ["no runs indexed"]
    sharded = any(run.shard for run in runs)  # the column only where a run was a CI shard
    rows = [
        (
            run.run_id,
            when(run.started_at),
            f"{run_counts_text(run)}{state_words(run)}",
            run_duration_text(
                run.duration, died=died_unseen(run.interrupted, run.exit_code), short=True
            ),
            "-" if run.exit_code is None else str(run.exit_code),
            *((run.shard or "-",) if sharded else ()),
            run.branch or "-",
        )
        for run in runs
    ]
    shard = ("SHARD",) if sharded else ()
    return table(("RUN", "STARTED (UTC)", "TESTS", "DURATION", "EXIT", *shard, "BRANCH"), rows)


def run_lines(
    run: RunInfo, failures: Sequence[tuple[str, str, FailureInfo | None]], report: Path | None
) -> list[str]:
    """``qbench show``."""
    state = state_words(run)
    exit_code = "unknown" if run.exit_code is None else str(run.exit_code)
    lines = [
        f"run       {run.run_id}{state}",
        f"tool      {run.tool}",
        f"started   {when(run.started_at)} UTC, took "
        f"{run_duration_text(run.duration, died=died_unseen(run.interrupted, run.exit_code))}, "
        f"exit code {exit_code}",
        f"tests     {run.counts['total']}: {counts_text(run.counts, run.other)}",
        *subtests_lines(run),
        f"command   {one_line(' '.join(run.command), 200)}",
        f"cwd       {run.cwd}",
    ]
    if run.recording_errors:
        lines.append(f"recorded  incomplete: {incomplete(run)}")
    if run.shard:
        lines.append(f"shard     {run.shard}")
    if run.python or run.platform:
        lines.append(f"python    {run.python or '-'} on {run.platform or '-'}")
    if run.ci_provider or run.branch or run.commit:
        ci = [run.ci_provider or "-", f"branch {run.branch or '-'}", f"commit {run.commit or '-'}"]
        lines.append(f"ci        {', '.join(ci)}{'  ' + run.build_url if run.build_url else ''}")
    if report is not None:
        lines.append(f"report    {report}")
    if failures:
        lines += ["", f"Failed and errored ({len(failures)}):"]
        lines += [f"  {failure_line(n, o, info)}" for n, o, info in failures[:MAX_LISTED]]
        lines += _more(len(failures))
    return lines


def subtests_lines(run: RunInfo) -> list[str]:
    """``qbench show``'s line on subtests: unknown (a run indexed before the index kept them),
    or the failed ones, which pytest counts in ``failed`` (none: no line)."""
    if not run.subtests_known:
        return [
            "subtests  unknown: the run was indexed before qbench kept subtest counts "
            "('qbench index' reads them again from its run directory)"
        ]
    failed = run.counts["subtests_failed"]
    if not failed:
        return []
    return [f"subtests  {failed_subtests(failed)}, counted in pytest's failed"]


def failure_line(nodeid: str, outcome: str, info: FailureInfo | None) -> str:
    """``nodeid  [error] ValueError at t.py:3: message``."""
    label = "" if outcome == "failed" else f"[{outcome}] "
    return f"{nodeid}  {label}{failure_text(info)}".rstrip()


def failure_text(info: FailureInfo | None) -> str:
    """``ValueError at t.py:3: message``, or nothing."""
    if info is None:
        return ""
    message = f": {one_line(info.message)}" if info.message else ""
    return f"{info.error_type} at {info.location}{message}"


def diff_lines(diff: RunDiff) -> list[str]:
    """``qbench diff``."""
    lines = [
        f"base  {diff.base.run_id}  {when(diff.base.started_at)}  {run_counts_text(diff.base)}",
        f"head  {diff.head.run_id}  {when(diff.head.started_at)}  {run_counts_text(diff.head)}",
    ]
    if diff.head_incomplete:
        lines += ["", f"B did not finish ({diff.head_incomplete}): the comparison fails"]
    lines += selection_lines(diff)
    lines += _changes("New failures", diff.new_failures, _new_failure)
    lines += _changes(
        "Known flaky, failing again (they fail the comparison too)", diff.known_flaky, _flaky_again
    )
    lines += _section("Flaky or not undecided (internal error; counted as new)", diff.undecided)
    lines += _changes("Fixed", diff.fixed, lambda c: f"{c.before} -> {c.after}")
    lines += _changes(
        "Passed only after reruns in B (flaky, not fixed)",
        diff.passed_after_reruns,
        lambda c: f"{c.before} -> {c.after} after {plural(c.reruns or 0, 'rerun')}",
    )
    lines += _changes("Still failing", diff.still_failing, _still)
    lines += _names("New tests", diff.new_tests)
    lines += _names("Removed tests", diff.removed_tests)
    t = diff.thresholds
    lines += _section(
        f"Slower by at least {t.slower_pct:g}% and {t.slower_secs:g}s",
        [
            f"{s.nodeid}  {format_duration(s.before)} -> {format_duration(s.after)} "
            f"(+{format_duration(s.after - s.before)})"
            for s in diff.slower
        ],
    )
    lines += _section(
        "Metric changes",
        [
            f"{m.nodeid}  {m.metric}  {_score(m.before)} -> {_score(m.after)}"
            f"{_verdict(m.passed_before, m.passed_after)}"
            for m in diff.metric_changes
        ],
    )
    lines += diagnostic_diff_lines(diff)
    lines += ["", diff_summary(diff)]
    return lines


def diagnostic_diff_lines(diff: RunDiff) -> list[str]:
    """New and fixed static-check diagnostics (issue 13.5), and the checkers not compared."""
    checks = diff.diagnostics
    lines = _section("New diagnostics", [diagnostic_line(d) for d in checks.new])
    lines += _section("Fixed diagnostics", [diagnostic_line(d) for d in checks.fixed])
    skipped = unchecked_lines(checks)
    if skipped:
        lines += ["", "Static checks not compared:", *(f"  {line}" for line in skipped)]
    return lines


def selection_lines(diff: RunDiff) -> list[str]:
    """When the runs may have selected different tests: what each ran, and the tests that are
    therefore counted neither as removed nor as new."""
    base, head = diff.base_selection, diff.head_selection
    if base is None or head is None or not selections_differ(diff):
        return []
    lines = [
        "",
        "The runs did not select the same tests; new and removed tests count only tests both "
        "could have run (in files both collected, deselected by neither):",
        f"  A  {_selection_text(base)}",
        f"  B  {_selection_text(head)}",
    ]
    if diff.not_selected_in_head:
        lines.append(
            f"  {plural(len(diff.not_selected_in_head), 'test')} of A not selected in B "
            "(deselected, in files B did not collect, or left out by a selection the index "
            "does not know): not counted as removed"
        )
    if diff.not_selected_in_base:
        lines.append(
            f"  {plural(len(diff.not_selected_in_base), 'test')} of B not selected in A: "
            "not counted as new"
        )
    return lines


def _selection_text(selection: Selection) -> str:
    files = plural(len(selection.files), "file")
    text = f"ran {plural(selection.ran, 'test')} of {files}, deselected {selection.deselected}"
    if selection.unfinished:
        text += " (the run did not finish: the tests it did not reach are not known)"
    elif selection.stopped:
        text += " (pytest stopped at collection errors: which tests it would have run is not known)"
    elif selection.stopped_early:
        text += " (stopped at its failures by -x, --maxfail or --sw: the tests it did not reach are not known)"
    elif selection.last_failed:
        text += " (run with --lf: pytest ran only the tests its cache recorded as failed, or every test when none was, and does not record which it left out)"
    elif not selection.known:
        text += " (which tests it left out is not recorded: -k, -m or node ids under pytest-xdist, or a run indexed from its files)"
    return text


def diff_summary(diff: RunDiff) -> str:
    """``1 new failure, 2 fixed, ...``."""
    parts = [
        plural(len(diff.new_failures), "new failure"),
        *([f"{len(diff.known_flaky)} known flaky"] if diff.known_flaky else []),
        f"{len(diff.fixed)} fixed",
        *(
            [f"{len(diff.passed_after_reruns)} passed only after reruns"]
            if diff.passed_after_reruns
            else []
        ),
        f"{len(diff.still_failing)} still failing",
        plural(len(diff.new_tests), "new test"),
        plural(len(diff.removed_tests), "removed test"),
        *(
            [f"{len(diff.not_selected_in_head)} not selected in B"]
            if diff.not_selected_in_head
            else []
        ),
        *(
            [f"{len(diff.not_selected_in_base)} not selected in A"]
            if diff.not_selected_in_base
            else []
        ),
        f"{len(diff.slower)} slower",
        plural(len(diff.metric_changes), "metric change"),
    ]
    if diff.diagnostics.compared:
        checks = diff.diagnostics
        parts += [
            plural(len(checks.new), "new diagnostic"),
            plural(len(checks.fixed), "fixed diagnostic"),
        ]
    return ", ".join(parts)


def _new_failure(change: Change) -> str:
    """What failed; on a second line, the test's history (a regression that came back...)."""
    history = f"\n      {change.history}" if change.history else ""
    return f"{failure_text(change.failure)}{history}"


def _flaky_again(change: Change) -> str:
    return f"{change.history or ''}  {failure_text(change.failure)}".strip()


def _still(change: Change) -> str:
    same = "same failure" if change.same_failure else "fails differently now"
    return f"({same}) {failure_text(change.failure)}".rstrip()


def _changes(title: str, changes: Sequence[Change], detail: Callable[[Change], str]) -> list[str]:
    items = [f"{c.nodeid}  {detail(c)}" for c in changes]
    return _section(title, ["\n".join(line.rstrip() for line in i.split("\n")) for i in items])


def _names(title: str, names: Sequence[str]) -> list[str]:
    return _section(title, list(names))


def _section(title: str, items: Sequence[str]) -> list[str]:
    if not items:
        return []
    listed = [f"  {item}" for item in items[:MAX_LISTED]]
    return ["", f"{title} ({len(items)}):", *listed, *_more(len(items))]


def _more(count: int) -> list[str]:
    return [f"  ...and {count - MAX_LISTED} more (--json lists all)"] if count > MAX_LISTED else []


def _score(score: float | None) -> str:
    return "error" if score is None else f"{score:.3g}"


def _verdict(before: bool, after: bool) -> str:
    if before == after:
        return ""
    return "  (now passing)" if after else "  (now failing)"


def window_text(runs: int, held: int | None = None) -> str:
    """The runs a flaky list looked at: ``the last 30 runs``, or what the index held when it
    held fewer (``held``): ``the 1 run indexed (30 asked)``, so that an empty list is never
    read as the verdict of more runs than there were."""
    if held is None or held >= runs:
        return f"the last {runs} runs"
    return f"the {plural(held, 'run')} indexed ({runs} asked)"


def flaky_lines(
    tests: Sequence[FlakyStatus], runs: int, min_flips: int, held: int | None = None
) -> list[str]:
    """``qbench flaky``: each test's status, the monitor that decided it, its score, the share of
    runs it failed in, and the evidence; ``held``: the runs the index holds."""
    flips = f", flipped {plural(min_flips, 'time')} or more" if min_flips else ""
    if not tests:
        return [
            f"no flaky or broken test in {window_text(runs, held)}{flips} (flaky on evidence in "
            "several runs: a pass after rerun, a pass and a fail on one commit, or single-run "
            "failures between passes; runs where most tests failed set aside)"
        ]
    rows = [
        (
            t.status,
            t.monitor or "-",
            f"{t.score:.2f}",
            f"{t.failed_runs}/{t.results}",
            t.nodeid,
            t.evidence or "-",
        )
        for t in tests[:MAX_LISTED]
    ]
    counts = Counter(t.status for t in tests)
    said = ", ".join(
        plural(counts[s], f"{s} test") for s in ("flaky", "broken", "healthy") if counts[s]
    )
    head = f"{said} in the last {runs} runs{flips}:"
    lines = [head, *table(("STATUS", "MONITOR", "SCORE", "FAILED", "TEST", "EVIDENCE"), rows)]
    return lines + _more(len(tests))


def history_lines(
    nodeid: str, summary: ExecutionSummary, results: Sequence[PastResult], verdict: Verdict
) -> list[str]:
    """``qbench history``."""
    s = summary
    last = s.last
    lines = [
        nodeid,
        f"  runs      {s.total_runs}: {s.passed_runs} passed{_expected_text(results)}, "
        f"{s.failed_runs} failed, {s.skipped_runs} skipped",
        f"  last run  {when(from_index_time(last.started_at))} UTC  {last.run_id}  {last.outcome}",
        f"  average   {format_duration(s.average_execution_time)}",
        f"  flips     {s.flips} (flip rate {s.flaky_indicator:.2f}), trend {s.trend}",
        f"  outcomes  {outcome_strip(results)}  (oldest first)",
        f"  verdict   {_verdict_text(verdict)}",
    ]
    return lines


def _expected_text(results: Sequence[PastResult]) -> str:
    """`` (2 xfailed)``: the passes that pytest calls xfailed or xpassed (its closing line
    does not call them passed); empty when there are none."""
    counts = Counter(r.outcome for r in results)
    parts = [f"{counts[word]} {word}" for word in ("xfailed", "xpassed") if counts[word]]
    return f" ({', '.join(parts)})" if parts else ""


def _verdict_text(verdict: Verdict) -> str:
    if verdict.flaky:
        return f"flaky: {verdict.reason}"
    return verdict.reason or "not flaky: never failed"


OUTCOME_LETTERS = {
    "passed": ".",
    "failed": "F",
    "error": "E",
    "skipped": "s",
    "xfailed": "x",
    "xpassed": "X",
}


def outcome_strip(results: Sequence[PastResult]) -> str:
    """pytest's progress letters, one per result (``R`` for a pass after reruns)."""
    return "".join("R" if r.flaky else OUTCOME_LETTERS.get(r.outcome, "?") for r in results)


def usage_line(usage: StoreUsage, *, hint: bool = True) -> str:
    """``.qbench: 12.3 MiB in 20 run directories (coverage data 11.0 MiB); ...``."""
    dirs = f"{usage.run_dirs} run director{'y' if usage.run_dirs == 1 else 'ies'}"
    coverage = f" (coverage data {format_bytes(usage.coverage)})" if usage.coverage else ""
    tip = "; 'qbench gc --keep N' or 'qbench gc --older-than AGE' removes old runs" if hint else ""
    return f"{usage.path}: {format_bytes(usage.total)} in {dirs}{coverage}{tip}"


def gc_lines(
    removed: Sequence[str],
    freed: int,
    usage: StoreUsage | None,
    *,
    dry_run: bool,
    tool_calls: int = 0,
) -> list[str]:
    """``qbench gc``: the runs removed (or that would be), the space freed, the MCP tool calls
    dropped from the log, what is left."""
    if not removed:
        lines = ["qbench: no run to remove"]
    else:
        verb = "would remove" if dry_run else "removed"
        shown = ", ".join(removed[:MAX_LISTED]) + (", ..." if len(removed) > MAX_LISTED else "")
        space = f"would free {format_bytes(freed)}" if dry_run else f"freed {format_bytes(freed)}"
        lines = [f"qbench: {verb} {plural(len(removed), 'run')} ({space}): {shown}"]
    if tool_calls:
        verb = "would drop" if dry_run else "dropped"
        lines.append(f"qbench: {verb} {plural(tool_calls, 'MCP tool call')} from the log")
    if usage is not None:
        lines.append(f"qbench: now {usage_line(usage, hint=False)}")
    return lines


def index_lines(
    indexed: Sequence[IndexedRunJson], removed: Sequence[str], empty_dir: Path | None
) -> list[str]:
    """``qbench index``: one line per run indexed; the runs retention removed."""
    lines = [
        f"qbench: indexed {item.run_id}{' (again)' if item.replaced else ''}: "
        f"{item.results} results from {item.source}"
        for item in indexed
    ]
    if removed:
        lines.append(f"qbench: removed {len(removed)} old runs: {', '.join(removed)}")
    if empty_dir is not None:
        lines.append(f"qbench: no run directories in {empty_dir / 'runs'}")
    return lines


def mcp_log_lines(calls: Sequence[ToolCall], totals: Sequence[ToolTotals]) -> list[str]:
    """``qbench mcp-log``: the recent calls, newest first, one a line; then the totals per
    tool over every logged call."""
    if not totals:
        return ["no MCP tool calls logged"]
    rows = [
        (
            when(call.called_at),
            call.tool,
            "ok" if call.success else f"FAILED {call.error_type or ''}".rstrip(),
            format_duration(call.duration),
            format_bytes(call.response_bytes),
            format_bytes(call.saved_bytes),
            one_line(_arguments_text(call.arguments), 80),
        )
        for call in calls
    ]
    header = ("CALLED (UTC)", "TOOL", "RESULT", "DURATION", "RESPONSE", "SAVED", "ARGUMENTS")
    logged = sum(t.calls for t in totals)
    lines = [f"Recent calls ({len(calls)} of {logged}):", *table(header, rows), ""]
    lines.append("Totals per tool:")
    lines += table(
        ("TOOL", "CALLS", "SUCCESS", "MEDIAN", "SAVED"),
        [
            (
                t.tool,
                str(t.calls),
                f"{t.success_rate:.0%}",
                format_duration(t.median_duration),
                format_bytes(t.saved_bytes),
            )
            for t in totals
        ],
    )
    return lines


def _arguments_text(arguments: Mapping[str, object]) -> str:
    return " ".join(f"{key}={value!r}" for key, value in arguments.items()) or "-"
