"""``qbench merge``: the reports of CI shards combined into the report of the whole run.

The merged summary is what pytest would print for the tests the merged report keeps:

- Summaries add up, shard by shard.
- A test present in several shards (same node id; e.g. a shard that reran the failures) is
  kept once, as its *last* attempt: attempts are ordered by when they started (the result's
  ``started_at``, else its shard's start), ties in the order the reports were given. Each earlier
  attempt that failed or errored becomes an ``Attempt`` of the kept result and is counted
  ``rerun``, as pytest-rerunfailures counts a rerun in one process; an earlier attempt that did
  not fail (shards that overlap) is dropped. ``reruns``, ``flaky`` and ``counted_as`` follow, and
  the counts are recomputed from the results kept.
- Collection errors, warnings and extra sections are concatenated; identical ones (a broken
  module that every ``-k`` shard collects) are kept, and counted, once.
- A test one shard deselected but another ran is not deselected: shards that collected the same
  number of items and deselected some are slices of one collection (``-k``, pytest-split's
  ``--splits``), and together deselect what none of them ran; other shards add their own count.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone
from typing import Literal
from typing import TypeVar
from typing import cast

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import MergeError
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import Attempt
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import GateResult
from pytest_qbench.report.models import RepeatStats
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSection
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import Shard
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.store import new_run_id
from pytest_qbench.report.verdict import bounded_errors
from pytest_qbench.report.verdict import shard_name


# pytest's exit codes, worst first; 1 and 5 are decided by the merged tests (see merged_exit_code).
# 6 (--max-warnings) ranks below 1 because pytest checks the warnings only when every test passed.
SEVERITY: dict[int, int] = {
    PytestExit.INTERNAL_ERROR: 6,
    PytestExit.INTERRUPTED: 5,
    PytestExit.USAGE_ERROR: 4,
    PytestExit.TESTS_FAILED: 2,
    PytestExit.MAX_WARNINGS_ERROR: 1,
    PytestExit.OK: 0,
}
UNKNOWN_SEVERITY = 3  # an exit code pytest does not use, from another tool or a signal
COUNT_FIELDS = (
    "total",
    "passed",
    "failed",
    "errors",
    "skipped",
    "xfailed",
    "xpassed",
    "reruns",
    "flaky",
    "subtests_passed",
    "subtests_failed",
    "subtests_skipped",
)
NOTE_EXAMPLES = 5

_Item = TypeVar("_Item", Diagnostic, ReportSection)


@dataclass(frozen=True)
class Source:
    """A report to merge, and the name it was given by (its path on the command line)."""

    name: str
    report: TestReport


@dataclass(frozen=True)
class _Entry:
    """One result of one shard, and where it stands."""

    result: TestResult
    shard: int
    position: int
    started: datetime


def merge_reports(
    sources: Sequence[Source],
    *,
    command: list[str] | None = None,
    cwd: str | None = None,
) -> TestReport:
    """Merge shard reports into one report (the rule is in this module's docstring).

    Args:
        sources: The reports, in the order given; a report that is itself a merge contributes
            its own shards.
        command: The command that merged them, recorded as the run's command.
        cwd: Recorded as the run's directory. Default: the current directory.

    Raises:
        MergeError: no report, or the same run given twice.
    """
    if not sources:
        raise MergeError("nothing to merge: give the shards' report.json files", slug="merge")
    _check_distinct_runs(sources)
    groups = _group_results(sources)
    results, replaced, resolved = _resolve(groups)
    collection_errors, dropped_errors = _dedupe([s.report.collection_errors for s in sources])
    warnings, dropped_warnings = _dedupe([s.report.warnings for s in sources])
    summary = _merged_summary(sources, replaced, resolved)
    if replaced:  # metric stats cannot be subtracted: those of the tests kept, from scratch
        metrics = aggregate(results, slowest=0).metric_summary()
        summary = ReportSummary.model_validate({**summary.model_dump(), **metrics})
    summary = _adjust(
        summary,
        Counter(
            errors=-len(dropped_errors),
            warnings=-sum(1 for d in dropped_warnings if d.tool == "pytest"),
        ),
    )
    sections, _ = _dedupe([s.report.sections for s in sources])
    # static checks run once per shard on the same code: the first shard's stand for the run
    checked = next((s.report for s in sources if s.report.checks), None)
    summary = summary.model_copy(
        update={
            "diagnostics": checked.summary.diagnostics if checked else {},
            "attachments": sum(len(result.attachments) for result in results),
        }
    )
    shards = _shards(sources)
    missing = missing_shards(shards)
    unpulled = missing_queue_tests(sources)
    differ = disagreeing_plans(shards)
    run = _merged_run(sources, shards, bool(missing or unpulled or differ), summary, command, cwd)
    return TestReport(
        meta=ReportMeta(qbench_version=__version__, created_at=datetime.now(timezone.utc)),
        run=run,
        environment=sources[0].report.environment,
        summary=summary,
        results=results,
        collection_errors=collection_errors,
        warnings=warnings
        + [
            n
            for n in _notes(sources, shards, resolved, missing, unpulled) + _plan_notes(differ)
            if n not in warnings
        ],
        sections=sections,
        shards=shards,
        gates=_failed_gates(sources),
        diagnostics=checked.diagnostics if checked else [],
        checks=checked.checks if checked else [],
        repeats=[
            RepeatStats.model_validate(stats)
            for stats in aggregate([r for r in results if r.repeat is not None]).repeat_stats()
        ],
    )


def _check_distinct_runs(sources: Sequence[Source]) -> None:
    seen: dict[str, str] = {}
    for source in sources:
        runs = [s.run.run_id for s in source.report.shards] or [source.report.run.run_id]
        for run_id in runs:
            if run_id in seen:
                raise MergeError(
                    f"{seen[run_id]} and {source.name} hold the same run ({run_id}); "
                    "give each shard's report once",
                    slug="merge-same-run",
                )
            seen[run_id] = source.name


# --- results ----------------------------------------------------------------------------------


def _group_results(sources: Sequence[Source]) -> dict[tuple[str, int], list[_Entry]]:
    """Results keyed by node id and occurrence (a JUnit file may name two tests alike)."""
    groups: dict[tuple[str, int], list[_Entry]] = {}
    for index, source in enumerate(sources):
        occurrences: Counter[str] = Counter()
        shard_start = _aware(source.report.run.started_at)
        for position, result in enumerate(source.report.results):
            key = (result.nodeid, occurrences[result.nodeid])
            occurrences[result.nodeid] += 1
            started = _aware(result.started_at) if result.started_at else shard_start
            groups.setdefault(key, []).append(_Entry(result, index, position, started))
    return groups


def _resolve(
    groups: dict[tuple[str, int], list[_Entry]],
) -> tuple[list[TestResult], list[TestResult], list[TestResult]]:
    """The results kept, in shard order; the results replaced; the results that replaced them.

    A test resolved from several shards stands where its last attempt stands.
    """
    kept: list[tuple[int, int, TestResult]] = []
    replaced: list[TestResult] = []
    resolved: list[TestResult] = []
    for entries in groups.values():
        attempts = sorted(entries, key=lambda e: (e.started, e.shard))
        final = attempts[-1]
        result = final.result
        if len(attempts) > 1:
            replaced.extend(e.result for e in attempts)
            result = resolve_attempts([e.result for e in attempts])
            resolved.append(result)
        kept.append((final.shard, final.position, result))
    kept.sort(key=lambda item: item[:2])
    return [result for *_, result in kept], replaced, resolved


def resolve_attempts(attempts: Sequence[TestResult]) -> TestResult:
    """One test's results from several shards, oldest first, as one result: the last one, with
    the earlier failing ones as its attempts (counted ``rerun``)."""
    *earlier, final = attempts
    previous: list[Attempt] = []
    for result in earlier:
        if result.outcome not in ("failed", "error"):
            continue  # it did not fail, so nothing reran it: a duplicate, counted once
        previous.extend(result.attempts)
        previous.append(_as_attempt(result))
    if not previous:
        return final
    combined = previous + list(final.attempts)
    return final.model_copy(
        update={
            "attempts": combined,
            "reruns": len(combined),
            "flaky": final.outcome == "passed",
            "counted_as": ["rerun"] * len(previous) + list(final.counted_as),
        }
    )


def _as_attempt(result: TestResult) -> Attempt:
    outcome: Literal["failed", "error"] = "error" if result.outcome == "error" else "failed"
    return Attempt(outcome=outcome, duration=result.duration, failure=result.failure)


# --- summary ----------------------------------------------------------------------------------


def _merged_summary(
    sources: Sequence[Source], replaced: list[TestResult], resolved: list[TestResult]
) -> ReportSummary:
    """The shards' summaries added up, with each resolved test counted as it was kept."""
    summary: ReportSummary = sum((s.report.summary for s in sources), ReportSummary())
    delta = _counts(resolved)
    delta.subtract(_counts(replaced))
    delta["deselected"] = merged_deselected(sources) - summary.deselected
    return _adjust(summary, delta)


def _counts(results: Iterable[TestResult]) -> Counter[str]:
    """What ``results`` add to a summary (``other:<word>`` for other plugins' words)."""
    record = aggregate(results, slowest=0).summary(0.0)
    fields = cast("dict[str, int]", record)  # COUNT_FIELDS are the summary's int fields
    counts = Counter({name: int(fields[name]) for name in COUNT_FIELDS})
    counts.update({f"other:{word}": n for word, n in record["other"].items()})
    return counts


def _adjust(summary: ReportSummary, delta: Counter[str]) -> ReportSummary:
    """``summary`` with ``delta`` added to its counts (never below zero)."""
    data = summary.model_dump()
    other: dict[str, int] = dict(data["other"])
    for name, change in delta.items():
        if name.startswith("other:"):
            word = name.removeprefix("other:")
            other[word] = max(0, other.get(word, 0) + change)
        else:
            data[name] = max(0, data[name] + change)
    data["other"] = {word: n for word, n in other.items() if n}
    return ReportSummary.model_validate(data)


def merged_deselected(sources: Sequence[Source]) -> int:
    """Tests deselected in the merged run (the rule is in this module's docstring).

    A report holds how many tests it deselected, not which; shards that collected the same
    number of items (results + deselected) and could have deselected each other's tests are
    taken for slices of one collection.
    """
    slices: dict[int, list[Source]] = {}
    stopped: list[Source] = []
    total = 0
    for source in sources:
        report = source.report
        if report.summary.deselected:
            collected = len(report.results) + report.summary.deselected
            group = stopped if report.run.interrupted else slices.setdefault(collected, [])
            group.append(source)
    # A slice that deselected nothing (the queue's machine that ran every unit) is one too.
    for source in sources:
        report = source.report
        if not report.summary.deselected and len(report.results) in slices:
            slices[len(report.results)].append(source)
    # A shard that did not finish (killed) fell short of its collection by the tests it never
    # reached: it is a slice of the one larger collection, and what it did not reach is not
    # deselected. Which collection is ambiguous with several: then it adds its own count.
    unreached: Counter[int] = Counter()
    for source in stopped:
        report = source.report
        short = len(report.results) + report.summary.deselected
        larger = [size for size in slices if size > short]
        if len(larger) == 1:
            slices[larger[0]].append(source)
            unreached[larger[0]] += larger[0] - short
        elif short in slices:
            slices[short].append(source)
        else:
            total += report.summary.deselected
    for collected, group in slices.items():
        ran = _distinct_tests(s.report for s in group)
        if len(group) > 1 and collected >= ran:
            total += max(0, collected - ran - unreached[collected])
        else:
            total += sum(s.report.summary.deselected for s in group)
    return total


def _distinct_tests(reports: Iterable[TestReport]) -> int:
    """Tests in ``reports``, a test present in several counted once."""
    most: Counter[str] = Counter()
    for report in reports:
        for nodeid, n in Counter(r.nodeid for r in report.results).items():
            most[nodeid] = max(most[nodeid], n)
    return sum(most.values())


# --- diagnostics, run, shards -------------------------------------------------------------------


def _dedupe(lists: Iterable[list[_Item]]) -> tuple[list[_Item], list[_Item]]:
    """Every shard's items in order, less those identical to one of an earlier shard (within one
    shard, repeats are real); and the ones dropped."""
    kept: list[_Item] = []
    dropped: list[_Item] = []
    seen: set[str] = set()
    for items in lists:
        keys = [item.model_dump_json() for item in items]
        for key, item in zip(keys, items, strict=True):
            (dropped if key in seen else kept).append(item)
        seen.update(keys)
    return kept, dropped


def _merged_run(
    sources: Sequence[Source],
    shards: Sequence[Shard],
    shard_missing: bool,
    summary: ReportSummary,
    command: list[str] | None,
    cwd: str | None,
) -> RunMeta:
    runs = [s.report.run for s in sources]
    completed = [_aware(r.completed_at) for r in runs if r.completed_at is not None]
    tools = list(dict.fromkeys(r.tool for r in runs))
    code = merged_exit_code([s.report for s in sources], summary)
    interrupted = PytestExit.INTERRUPTED  # a missing shard: not finished, as a killed one
    if shard_missing and SEVERITY.get(code or 0, UNKNOWN_SEVERITY) < SEVERITY[interrupted]:
        code = interrupted
    return RunMeta(
        run_id=new_run_id(),
        tool="+".join(tools),
        started_at=min(_aware(r.started_at) for r in runs),
        completed_at=max(completed) if completed else None,
        exit_code=code,
        cwd=cwd if cwd is not None else os.getcwd(),
        command=command if command is not None else ["qbench", "merge", *(s.name for s in sources)],
        # a shard that did not finish, or a planned shard whose tests did not run here (the
        # shards' own runs: a merged report given again is interrupted by its missing shards)
        interrupted=shard_missing or any(shard.run.interrupted for shard in shards),
        recording_errors=bounded_errors(
            [f"{s.name}: {error}" for s in sources for error in s.report.run.recording_errors]
        ),
    )


def merged_exit_code(reports: Sequence[TestReport], summary: ReportSummary) -> int | None:
    """The worst meaningful exit code of the shards.

    Worst first: 3 (internal error), 2 (interrupted), 4 (usage error), a code pytest does not
    use, 1 (tests failed), 6 (more warnings than ``--max-warnings``), 0. A shard's 1 caused by
    its failing tests is decided again by the merged tests (a failure that passed in a rerun
    shard is no longer a failure); a 1 without failing tests (a gate such as a coverage
    threshold), or with a failed gate beside them, stays. 5 (no tests collected) counts only
    when every shard has it. A shard whose process died (no exit code, marked ``interrupted``:
    its report read from its stream) counts as 2, interrupted. Other unknown codes (``None``: a
    JUnit import) are left out; ``None`` when every one is unknown.
    """
    tests_failed = summary.failed + summary.errors > 0
    codes: list[int] = []
    for run, counts, gated in _shard_runs(reports):
        code = run.exit_code
        if code is None and run.interrupted:  # killed: never a 0 of the others
            code = PytestExit.INTERRUPTED
        if code is None:
            continue
        if code == PytestExit.TESTS_FAILED and counts.failed + counts.errors > 0:
            code = PytestExit.TESTS_FAILED if tests_failed or gated else PytestExit.OK
        codes.append(code)
    if not codes:
        return None
    meaningful = [c for c in codes if c != PytestExit.NO_TESTS_COLLECTED]
    if not meaningful:
        return PytestExit.NO_TESTS_COLLECTED
    return max(meaningful, key=lambda c: SEVERITY.get(c, UNKNOWN_SEVERITY))


def _shard_runs(reports: Sequence[TestReport]) -> Iterator[tuple[RunMeta, ReportSummary, bool]]:
    """Each shard's run and counts, and whether a gate failed beside its tests. A merged report
    gives its own shards': its exit code counts the shards it missed (2), which merging them
    in undoes."""
    for report in reports:
        gated = any(gate.passed is False for gate in report.gates)
        if report.shards:
            for shard in report.shards:
                yield shard.run, shard.summary, gated
        else:
            yield report.run, report.summary, gated


def _shards(sources: Sequence[Source]) -> list[Shard]:
    shards: list[Shard] = []
    for source in sources:
        report = source.report
        if report.shards:  # a merged report: its shards, so that merging is associative
            shards.extend(report.shards)
            continue
        shards.append(
            Shard(
                source=source.name,
                run=report.run,
                environment=report.environment,
                summary=report.summary,
            )
        )
    return shards


def _failed_gates(sources: Sequence[Source]) -> list[GateResult]:
    """The shards' failed gates, each detail naming its shard: the reason a merged run whose
    tests all passed still fails (a shard below its coverage threshold)."""
    gates: list[GateResult] = []
    for source in sources:
        report = source.report
        for gate in report.gates:
            if gate.passed is not False:
                continue
            if not report.shards:  # a merged report's gates name their shards already
                detail = f"shard {report.run.run_id}: {gate.detail}"
                gate = gate.model_copy(update={"detail": detail})
            gates.append(gate)
    return gates


def missing_shards(shards: Sequence[Shard]) -> list[str]:
    """The shards of a ``--qbench-shard=I/N`` plan that none of ``shards`` ran (``"2/3"``)."""
    planned: dict[int, set[int]] = {}
    for shard in shards:
        info = shard.run.shard
        if info is not None and info.queue is None and info.index and info.count:
            planned.setdefault(info.count, set()).add(info.index)
    return [
        f"{index}/{count}"
        for count, indices in sorted(planned.items())
        for index in range(1, count + 1)
        if index not in indices
    ]


def missing_queue_tests(sources: Sequence[Source]) -> list[str]:
    """The queues (``--qbench-queue``) some of whose tests none of the merged reports ran, each
    as ``queue NAME: 3 of its 12 tests``: a machine's report is missing (a queue does not know
    how many machines pulled from it, only the tests it held). A queue one of whose machines
    stopped at its failures (``-x``, ``--maxfail``, ``--sw``) is left out: its tests that no one
    reached are those of a run that stopped as asked, failed already."""
    held: dict[str, int] = {}
    ran: dict[str, set[str]] = {}
    stopped: set[str] = set()
    for source in sources:
        report = source.report
        for run, counts, _ in _shard_runs([report]):
            info = run.shard
            if info is None or info.queue is None or info.tests is None:
                continue
            held[info.queue] = max(held.get(info.queue, 0), info.tests)
            ran.setdefault(info.queue, set()).update(r.nodeid for r in report.results)
            if run.max_failures and counts.failed + counts.errors >= run.max_failures:
                stopped.add(info.queue)
    return [
        f"queue {name}: {tests - len(ran[name])} of its {tests} tests"
        for name, tests in sorted(held.items())
        if len(ran[name]) < tests and name not in stopped
    ]


def disagreeing_plans(shards: Sequence[Shard]) -> list[int]:
    """The ``N`` of the ``--qbench-shard=I/N`` plans whose shards planned differently (their
    expected seconds per shard differ, or the number of tests they planned: ``tests``): each
    planned from another history (shards run one after another outside CI, or one shard run
    again after other runs were indexed) or another collection (``--lf`` with each machine's
    own cache collects only its own failures' files), so a test may have run in two shards and
    another in none."""
    seconds: dict[int, set[tuple[float, ...]]] = {}
    tests: dict[int, set[int]] = {}
    for shard in shards:
        info = shard.run.shard
        if info is None or info.queue is not None or not info.count:
            continue
        if info.plan:
            seconds.setdefault(info.count, set()).add(tuple(info.plan))
        if info.tests is not None:  # recorded since planned shards' are (by count too)
            tests.setdefault(info.count, set()).add(info.tests)
    return sorted(
        {count for found in (seconds, tests) for count, seen in found.items() if len(seen) > 1}
    )


def _plan_notes(differ: list[int]) -> list[Diagnostic]:
    return [
        _note(
            "merge-plans-differ",
            f"the shards of the {count}-shard plan planned differently (each from another "
            "history or collection: run one after another outside CI, one run again later, "
            "--lf with each machine's own cache), so some "
            "tests may have run in two shards and others in none: the merged run is not whole "
            "(not green); plan from one history (the same CI commit) or use --qbench-queue",
        )
        for count in differ
    ]


def unfinished_shards(shards: Sequence[Shard]) -> list[str]:
    """The shards that did not finish (killed, interrupted), each named as the verdict names
    it (``verdict.shard_name``): ``shard 2/3 (run ID)``, ``queue NAME machine W (run ID)`` or
    ``run ID`` (not a planned shard)."""
    return [
        shard_name(
            None if shard.run.shard is None else shard.run.shard.model_dump(), shard.run.run_id
        )
        for shard in shards
        if shard.run.interrupted
    ]


def _notes(
    sources: Sequence[Source],
    shards: Sequence[Shard],
    resolved: list[TestResult],
    missing: list[str],
    unpulled: list[str],
) -> list[Diagnostic]:
    """qbench's own notes about the merge (not counted among pytest's warnings)."""
    notes: list[Diagnostic] = []
    unfinished = unfinished_shards(shards)
    if unfinished:
        notes.append(
            _note(
                "merge-unfinished-shards",
                f"{', '.join(unfinished)} did not finish (killed or interrupted): the "
                "tests it did not reach did not run, so the merged run did not finish (not green)",
            )
        )
    if missing:
        notes.append(
            _note(
                "merge-missing-shards",
                f"shard {', '.join(missing)} of the plan is not among the merged reports (its "
                "report is missing, or its run died before it started): its tests did not run "
                "here, so the merged run did not finish (not green)",
            )
        )
    notes += [
        _note(
            "merge-missing-shards",
            f"{queue} ran in none of the merged reports (a machine's report is missing, or its "
            "run died before it started): those tests did not run here, so the merged run did "
            "not finish (not green)",
        )
        for queue in unpulled
    ]
    if resolved:
        names = ", ".join(r.nodeid for r in resolved[:NOTE_EXAMPLES])
        more = f" and {len(resolved) - NOTE_EXAMPLES} more" if len(resolved) > NOTE_EXAMPLES else ""
        notes.append(
            _note(
                "merge-resolved",
                f"{len(resolved)} test(s) ran in more than one shard and are kept once, as their "
                f"last attempt (earlier failures became rerun attempts): {names}{more}",
            )
        )
    with_coverage = [s.name for s in sources if getattr(s.report, "coverage", None) is not None]
    if with_coverage:
        notes.append(
            _note(
                "merge-coverage",
                f"coverage is not merged ({', '.join(with_coverage)} measured it): combine the "
                "shards' coverage data with `coverage combine` and report on that",
            )
        )
    return notes


def _note(code: str, message: str) -> Diagnostic:
    return Diagnostic(tool="qbench", severity="info", code=code, message=message)


def _aware(moment: datetime) -> datetime:
    """``moment`` in UTC (a naive time is taken to be UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)
