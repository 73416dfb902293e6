"""The Markdown of one pull-request comment: what changed from a base run to this run.

New failures come first (they are the first screen, whatever is cut), then fixed tests, the
known flaky failures set aside, tests added and removed, the slowest changes and the coverage.
The text never exceeds GitHub's limit of 65 536 characters: what does not fit is cut with a
note. A hidden marker on the first line lets ``--post`` find the comment again and update it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from copy import copy
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.exit_codes import RAN_CLEAN
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.core.markdown import md_code
from pytest_qbench.core.markdown import md_text
from pytest_qbench.core.summary_words import OUTCOME_FIELDS
from pytest_qbench.core.summary_words import SUBTEST_FIELDS
from pytest_qbench.core.summary_words import SUMMARY_KEYS
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.summary_words import pluralize
from pytest_qbench.history import sql
from pytest_qbench.history.backend import Cursor
from pytest_qbench.history.backend import Index
from pytest_qbench.history.compare import Change
from pytest_qbench.history.compare import RunDiff
from pytest_qbench.history.compare import incomplete
from pytest_qbench.history.failure_history import CAME_BACK
from pytest_qbench.history.merges import MAX_SCANNED
from pytest_qbench.history.merges import RUNS_BEFORE
from pytest_qbench.history.merges import Members
from pytest_qbench.history.merges import first_other
from pytest_qbench.history.merges import is_member
from pytest_qbench.history.merges import is_merged
from pytest_qbench.history.merges import known_members
from pytest_qbench.history.merges import run_before
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import resolve_run
from pytest_qbench.history.queries import run_results
from pytest_qbench.history.text import failure_text


MARKER = "<!-- pytest-qbench:pr-comment -->"
"""The hidden first line by which ``--post`` finds its own comment."""
MAX_CHARS = 65_536
"""GitHub refuses a comment body longer than this."""
MAX_SLOWER = 10
"""Slowest changes listed."""
MAX_NEW = 150
"""New failures listed (about 45 000 characters at most); the rest are counted."""
MAX_OTHER = 50
"""Tests listed in each other section."""


@dataclass(frozen=True)
class Coverage:
    """Total coverage of the head run and the base run (percent), when measured."""

    head: float | None = None
    base: float | None = None
    head_text: str | None = None
    """``head`` as coverage.py's total is printed, with what it counts (``76.92% (8/9 lines,
    2/4 branches)``: ``coverage.view.total_text``); ``None``: ``head`` alone."""
    same_measure: bool = True
    """Whether both runs measured the same (branches, or lines alone): a total of lines and
    branches is not compared with one of lines alone."""


def pr_comment(
    head: RunInfo,
    diff: RunDiff | None,
    fingerprints: Mapping[str, str] | None = None,
    coverage: Coverage | None = None,
    limit: int = MAX_CHARS,
    quarantined: Collection[str] = (),
) -> str:
    """The comment for run ``head`` compared with ``diff.base`` (``diff`` is ``None`` when
    there is no base run: the counts only). ``fingerprints``: the head run's failures' by node
    id; ``quarantined``: the new failures that are quarantined tests' known failures (set
    aside)."""
    fingerprints = fingerprints or {}
    set_aside: list[Change] = []
    if diff is not None and quarantined:
        diff, set_aside = _set_aside_quarantined(diff, quarantined)
    lines = [
        MARKER,
        _headline(head, diff, len(set_aside)),
        "",
        _counts_line(head, diff.base if diff else None),
    ]
    lines += _coverage_lines(coverage)
    if diff is not None:
        lines += _not_run_note(diff)
        new = diff.new_failures
        lines += _section("New failures", new, lambda c: _new(c, fingerprints), MAX_NEW)
        lines += _section("Fixed", diff.fixed, lambda c: f"was {c.before}, now {c.after}")
        lines += _section(
            "Passed only after reruns, flaky",
            diff.passed_after_reruns,
            lambda c: f"was {c.before}, now {c.after} after {plural(c.reruns or 0, 'rerun')}",
        )
        lines += _section(
            "Known flaky failures, set aside", diff.known_flaky, lambda c: _new(c, fingerprints)
        )
        lines += _section(
            "Quarantined known failures, set aside",
            set_aside,
            lambda c: _new(c, fingerprints),
        )
        lines += _names("Tests added", diff.new_tests)
        lines += _names("Tests removed", diff.removed_tests)
        lines += _slowest(diff)
    return trim("\n".join(lines) + "\n", limit)


def _not_run_note(diff: RunDiff) -> list[str]:
    """The tests of the base that this run did not run, and why, when there are any: the
    counts' changes alone read as tests removed (a run stopped by ``-x`` at its first failure:
    ``58 passed (-887)``)."""
    missing, selection = len(diff.not_selected_in_head), diff.head_selection
    if not missing or selection is None:
        return []
    if selection.unfinished:
        why = "the run did not finish"
    elif selection.stopped_early:
        why = "it stopped at its failures: -x, --maxfail or --sw"
    elif selection.last_failed:
        why = "it ran with --lf"
    elif selection.stopped:
        why = "pytest stopped at collection errors"
    else:
        why = "deselected, or in files it did not collect"
    base = md_code(diff.base.run_id)
    return [
        "",
        f"> {plural(missing, 'test')} of run {base} did not run here ({why}): "
        "not counted as removed, nor as passing.",
    ]


def _set_aside_quarantined(
    diff: RunDiff, quarantined: Collection[str]
) -> tuple[RunDiff, list[Change]]:
    """``diff`` without the quarantined known failures among its new failures, and those."""
    moved = copy(diff)
    moved.new_failures = [c for c in diff.new_failures if c.nodeid not in quarantined]
    return moved, [c for c in diff.new_failures if c.nodeid in quarantined]


def quarantined_known(
    index: Index, head: RunInfo, diff: RunDiff, fingerprints: Mapping[str, str], file: Path | None
) -> set[str]:
    """The new failures of ``diff`` that are quarantined tests (in ``file``, else in the index)
    failing as they failed before ``head``: the quarantine does not fail a run for them."""
    from pytest_qbench.history.quarantine import failed_before_with
    from pytest_qbench.history.quarantine import quarantined_tests

    listed = quarantined_tests(index, file)
    return {
        c.nodeid
        for c in diff.new_failures
        if c.nodeid in listed
        and (fp := fingerprints.get(c.nodeid))
        and failed_before_with(index, c.nodeid, fp, before_run=head.run_id)
    }


def trim(text: str, limit: int = MAX_CHARS) -> str:
    """``text``, or its first lines with a note saying how much was cut, within ``limit``."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    budget = limit - 200  # room for the note
    for line in lines:
        if size + len(line) + 1 > budget:
            break
        kept.append(line)
        size += len(line) + 1
    cut = len(lines) - len(kept)
    note = (
        f"\n> :scissors: {plural(cut, 'more line')} cut: GitHub limits a comment to "
        f"{MAX_CHARS:,} characters. `qbench diff` lists everything."
    )
    return "\n".join(kept) + "\n" + note + "\n"


def _headline(head: RunInfo, diff: RunDiff | None, quarantined: int = 0) -> str:
    failing = head.counts.get("failed", 0) + head.counts.get("errors", 0)
    failing += head.exit_code not in (*RAN_CLEAN, None)  # a plugin failed it, an internal error
    if diff is None:  # not passing when it did not finish (a merged run missing a shard)
        unfinished = incomplete(head)
        verdict = "failing" if failing or unfinished else "passing"
        why = f"; {unfinished}" if unfinished else ""
        return f"### qbench: {verdict} (no base run to compare with{why})"
    parts = [plural(len(diff.new_failures), "new failure"), f"{len(diff.fixed)} fixed"]
    if diff.head_incomplete:  # fails the comparison: say why first
        parts.insert(0, "the run did not finish")
    if diff.known_flaky:
        parts.append(f"{len(diff.known_flaky)} known flaky")
    if diff.passed_after_reruns:
        parts.append(f"{len(diff.passed_after_reruns)} passed only after reruns")
    if quarantined:
        parts.append(f"{quarantined} quarantined")
    if diff.still_failing:
        parts.append(f"{len(diff.still_failing)} still failing")
    return f"### {_icon(diff, failing)} qbench: {', '.join(parts)}"


def _icon(diff: RunDiff, failing: int) -> str:
    """Red when the comparison fails as ``qbench diff``'s exit status does (a new failure,
    a known flaky one failing again, an undecided one, a run that did not finish); a warning
    when the run fails all the same (failures it had before, quarantined ones); green only when
    no test failed."""
    if diff.failed:
        return ":x:"
    return ":warning:" if failing else ":white_check_mark:"


ALWAYS_KNOWN = ("deselected", "reruns")
"""Counts of pytest's closing line beside the outcomes that every indexed run has."""


def _counts_line(head: RunInfo, base: RunInfo | None) -> str:
    words = dict(SUMMARY_KEYS)
    parts = []
    # the closing line's order, its deselected tests and reruns included; a subtest count only
    # where the index knows it (the change only where it knows the base's too)
    shown = {*OUTCOME_FIELDS, *ALWAYS_KNOWN} | (
        set(SUBTEST_FIELDS) if head.subtests_known else set()
    )
    for field, _key in SUMMARY_KEYS:
        if field not in shown:
            continue
        now = head.counts.get(field, 0)
        then = base.counts.get(field, 0) if base else 0
        known = base is not None and (
            field in OUTCOME_FIELDS or field in ALWAYS_KNOWN or base.subtests_known
        )
        if now or (then and known):
            change = f" ({now - then:+d})" if known and now != then else ""
            parts.append(f"{pluralize(now, words[field])}{change}")
    # last, as pytest's line has them: the counts under plugins' own words ("1 known")
    for word in dict.fromkeys([*head.other, *(base.other if base else ())]):
        now, then = head.other.get(word, 0), base.other.get(word, 0) if base else 0
        change = f" ({now - then:+d})" if base is not None and now != then else ""
        parts.append(f"{now} {md_text(word)}{change}")
    total = head.counts.get("total", 0)
    run = f" · run {md_code(head.run_id)}{_what(head)}"
    against = (
        f" · against run {md_code(base.run_id)}{_what(base)}{_where(base)}"
        if base is not None
        else ""
    )
    return f"**{plural(total, 'test')}**: {', '.join(parts) or 'none ran'}{run}{against}"


def _what(run: RunInfo) -> str:
    """What kind of run ``run`` is, when it is not one whole run: `` (CI shard 2/4)``,
    `` (merged CI shards)``; "" otherwise."""
    if run.shard:
        return f" (CI shard {md_text(run.shard)}, not the whole run)"
    return " (merged CI shards)" if is_merged(run) else ""


def _where(run: RunInfo) -> str:
    bits = [
        f"on {md_code(run.branch)}" if run.branch else "",
        md_code(run.commit[:12]) if run.commit else "",
    ]
    shown = " ".join(bit for bit in bits if bit)
    return f" ({shown})" if shown else ""


def _coverage_lines(coverage: Coverage | None) -> list[str]:
    if coverage is None or coverage.head is None:
        return []
    from pytest_qbench.report.coverage.view import percent_text

    change = ""
    if coverage.base is not None and not coverage.same_measure:
        change = " (not compared with the base run's: one of them measured branches too)"
    elif coverage.base is not None:
        change = f" ({coverage.head - coverage.base:+.2f} points)"

    total = coverage.head_text or percent_text(coverage.head)
    return ["", f"**Coverage**: {total}{change}"]


def _section(
    title: str, changes: Sequence[Change], detail: Callable[[Change], str], cap: int = MAX_OTHER
) -> list[str]:
    if not changes:
        return []
    lines = ["", f"#### {title} ({len(changes)})", ""]
    shown = sorted(changes, key=lambda c: natural(c.nodeid))[:cap]
    lines += [f"- {md_code(c.nodeid)} {detail(c)}".rstrip() for c in shown]
    return lines + _more(len(changes) - cap)


def natural(nodeid: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that puts ``test[2]`` before ``test[10]``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", nodeid))


def _more(hidden: int) -> list[str]:
    if hidden <= 0:
        return []
    return [f"- … and {hidden} more (`qbench diff` lists them all)"]


def _new(change: Change, fingerprints: Mapping[str, str]) -> str:
    text = md_text(failure_text(change.failure), 300)
    fp = fingerprints.get(change.nodeid)
    fingerprint = f" · fingerprint {md_code(fp[:12])}" if fp else ""
    came_back = " · **returning failure**" if change.history and CAME_BACK in change.history else ""
    history = f"<br>{md_text(change.history, 200)}" if change.history else ""
    return f"{text}{fingerprint}{came_back}{history}"


def _names(title: str, names: Sequence[str]) -> list[str]:
    if not names:
        return []
    listed = [f"- {md_code(n)}" for n in names[:MAX_OTHER]]
    return ["", f"#### {title} ({len(names)})", "", *listed, *_more(len(names) - MAX_OTHER)]


def _slowest(diff: RunDiff) -> list[str]:
    slower = sorted(diff.slower, key=lambda s: s.after - s.before, reverse=True)[:MAX_SLOWER]
    if not slower:
        return []
    t = diff.thresholds
    lines = ["", f"#### Slowest changes (at least {t.slower_pct:g}% and {t.slower_secs:g}s)", ""]
    lines += [
        f"- {md_code(s.nodeid)} {format_duration(s.before)} → {format_duration(s.after)} "
        f"(+{format_duration(s.after - s.before)})"
        for s in slower
    ]
    return lines


RUNS_INDEXED_AFTER = (
    f"SELECT {sql.RUN_FIELDS} FROM runs r WHERE r.shard IS NULL "
    "AND r.id > (SELECT id FROM runs WHERE run_id = ?) ORDER BY r.id LIMIT ?"
)


def head_run(index: Index, ref: str | None) -> RunInfo:
    """The run the comment is about: ``ref`` (an id, a prefix, ``last``, ``last~N``) as it
    names it; without ``ref``, the last run, unless that is a CI shard: then the merged run of
    its shards (``qbench merge``: ``_merged_run_of``), since one shard's counts are not the
    pipeline's.

    Raises:
        HistoryError: no such run; or no ``ref``, the last run is a CI shard and no merged run
            of its shards is indexed.
    """
    if ref is not None:
        return resolve_run(index, ref)
    last = resolve_run(index, "last")
    if last.shard is None:
        return last
    merged = _merged_run_of(index, last)
    if merged is None:
        raise HistoryError(
            f"the last run, {last.run_id}, is CI shard {last.shard}, not the whole run, and no "
            "merged run of its shards is indexed: merge the shards' reports and index the "
            "merged one ('qbench merge ... -o merged/report.json', then 'qbench index "
            "merged/report.json'), or name the run the comment is about ('qbench pr-comment "
            f"{last.run_id}' for this one shard)"
        )
    return merged


def _merged_run_of(index: Index, shard: RunInfo) -> RunInfo | None:
    """The merged run (``qbench merge``) that holds ``shard``, whatever the order they were
    indexed in: among the merged runs indexed after it (first the first), then those before it
    (newest first), the first whose members (``merges.known_members``: as the index recorded
    them, else read from the reports its command names) hold the shard. A merged run whose
    members are not known (indexed before schema 11, its sources gone), and whose times could
    hold the shard's (``merges.could_hold``), is taken by the index's one
    order (never the start times runs recorded): indexed after the shard, when it tests the
    same commit (when both know theirs); indexed before it, for a shard that did not finish (a
    killed shard is indexed by the next history command, after the merge named it unfinished),
    when it did not finish either and is on the shard's commit (which must be known: another
    pipeline's merged run could not be told apart)."""
    cache: dict[str, Members | None] = {}

    def holds(cursor: Cursor, run: RunInfo) -> bool | None:
        return is_member(cursor, run, shard, cache) if is_merged(run) else False

    def work(cursor: Cursor) -> RunInfo | None:
        cursor.execute(RUNS_INDEXED_AFTER, (shard.run_id, MAX_SCANNED))
        for row in cursor.fetchall():
            run = RunInfo.from_row(row)
            held = holds(cursor, run)
            same_commit = not (run.commit and shard.commit) or run.commit == shard.commit
            if held or (held is None and same_commit):
                return run
        cursor.execute(RUNS_BEFORE, (shard.run_id, MAX_SCANNED))
        for row in cursor.fetchall():
            run = RunInfo.from_row(row)
            held = holds(cursor, run)
            if held:
                return run
            if held is None and shard.commit and run.commit == shard.commit:
                return run if run.interrupted and shard.interrupted else None
        return None

    return index.read(work)


RUN_ON_BRANCH = (
    f"SELECT {sql.RUN_FIELDS} FROM runs r WHERE r.branch = ? AND r.run_id <> ? "
    "ORDER BY r.id DESC LIMIT ?"
)


def base_run(index: Index, head: RunInfo, ref: str | None) -> RunInfo | None:
    """The run to compare ``head`` with: ``ref`` as a run (id, prefix, ``last~N``), else the
    newest other run on the branch ``ref`` (the newest that is not a CI shard nor one of the runs
    merged into ``head``, when there is one and ``head`` is not a shard); without ``ref``, the run indexed before ``head``
    (the index's one order), and when ``head`` is not a CI shard, the one before it that is not a CI
    shard either (not the shards merged into it, nor one shard of an earlier pipeline);
    ``None`` when there is none.

    Raises:
        HistoryError: ``ref`` names neither a run nor a branch with runs.
    """
    if ref is None:
        return run_before(index, head, f"qbench pr-comment {head.run_id} --base {{run}}")
    try:
        return resolve_run(index, ref)
    except HistoryError as exc:
        run_error = exc

    def work(cursor: Cursor) -> RunInfo | None:
        cursor.execute(RUN_ON_BRANCH, (ref, head.run_id, MAX_SCANNED))
        runs = [RunInfo.from_row(row) for row in cursor.fetchall()]
        # a shard is not the branch's run, nor a run merged into head (`merges.first_other`)
        cache: dict[str, Members | None] = {}
        found = first_other(
            cursor, head, runs, f"qbench pr-comment {head.run_id} --base {{run}}", cache
        )
        if found is None:  # only shards on that branch: the newest not merged into head
            own = known_members(cursor, head, cache) or frozenset()
            found = next((run for run in runs if run.run_id not in own), None)
        return found

    found = index.read(work)
    if found is None:
        raise HistoryError(
            f"--base {ref!r} is neither a run nor a branch with runs in the index "
            f"({run_error}); give a run id, last~N, or a branch that CI ran on"
        )
    return found


def head_fingerprints(index: Index, run_id: str) -> dict[str, str]:
    """The failures' fingerprints of run ``run_id``, by node id."""
    return {
        nodeid: result.fingerprint
        for nodeid, result in run_results(index, run_id).items()
        if result.fingerprint
    }
