"""``qbench diff`` and ``qbench flaky``: comparing runs, finding tests whose outcome flips."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from pytest_qbench.core.errors import HistoryError
from pytest_qbench.core.summary_words import plural
from pytest_qbench.core.types import OUTCOMES
from pytest_qbench.history.analysis import ExecutionSummary
from pytest_qbench.history.analysis import execution_summary
from pytest_qbench.history.backend import Index
from pytest_qbench.history.diagnostics import DiagnosticDiff
from pytest_qbench.history.diagnostics import diff_diagnostics
from pytest_qbench.history.failure_history import WINDOW
from pytest_qbench.history.failure_history import judged_history
from pytest_qbench.history.flakiness import DEFAULT_MONITORS
from pytest_qbench.history.flakiness import Assessment
from pytest_qbench.history.flakiness import Monitors
from pytest_qbench.history.flakiness import Status
from pytest_qbench.history.flakiness import examine
from pytest_qbench.history.json_config import JSON_CONFIG
from pytest_qbench.history.queries import FailureInfo
from pytest_qbench.history.queries import PastResult
from pytest_qbench.history.queries import Recent
from pytest_qbench.history.queries import RunInfo
from pytest_qbench.history.queries import failure_infos
from pytest_qbench.history.queries import flaky_candidates
from pytest_qbench.history.queries import recent_results
from pytest_qbench.history.queries import run_deselected
from pytest_qbench.history.queries import run_metrics
from pytest_qbench.history.queries import run_results
from pytest_qbench.history.sql import FAILING
from pytest_qbench.history.sql import PASSING
from pytest_qbench.history.thresholds import Thresholds


@dataclass(frozen=True)
class Change:
    """A test whose outcome differs, or stays failing, between two runs."""

    nodeid: str
    before: str | None
    """Outcome in the base run; ``None`` when it was not there."""
    after: str | None
    """Outcome in the other run; ``None`` when it is not there."""
    failure: FailureInfo | None = None
    """What failed (the later failure; for a fixed test, the earlier one)."""
    same_failure: bool | None = None
    """For a test failing in both: whether with the same fingerprint."""
    history: str | None = None
    """For a test failing in the later run and not in the earlier: its history's summary, as
    that run's report has it (``known flaky: failed 3 of the last 7 runs; ...``, ``new
    failure: passed in the previous run r6; ...``)."""
    reruns: int | None = None
    """For a test that passed in the later run only after reruns: how many it took."""


@dataclass(frozen=True)
class Slower:
    """A test that passed in both runs and took notably longer in the second."""

    __pydantic_config__ = JSON_CONFIG  # the --json output's model (history/json_models.py)

    nodeid: str
    before: float
    after: float


@dataclass(frozen=True)
class MetricChange:
    """A metric score of a test that moved, or passed or failed anew."""

    __pydantic_config__ = JSON_CONFIG  # the --json output's model (history/json_models.py)

    nodeid: str
    metric: str
    before: float | None
    after: float | None
    passed_before: bool
    passed_after: bool


SELECTING_OPTIONS = (
    "-k",
    "-m",
    "--deselect",
    "--lf",
    "--last-failed",
    "--sw",
    "--stepwise",
    "--sw-skip",
    "--stepwise-skip",
)
"""pytest options that select some tests of a file and leave others out."""


@dataclass(frozen=True)
class Selection:
    """What a run collected, as far as the index knows: the files of its tests, and the tests
    it deselected."""

    ran: int
    """Tests with a result (collection errors aside)."""
    deselected: int
    """pytest's count of deselected tests."""
    files: frozenset[str]
    """The files its tests (run or deselected) are in."""
    deselected_ids: frozenset[str]
    """The node ids it deselected, as recorded."""
    known: bool
    """Whether the index knows every test it left out of the files it collected: it recorded
    which tests it deselected (all of them), or it deselected none and nothing on its command
    line selects within files (``-k``, ``-m``, node ids; under pytest-xdist pytest counts no
    deselected tests)."""
    stopped: bool = False
    """Whether pytest stopped at collection errors and ran no test (its results are only
    collection errors): which tests it would have run is not known."""
    last_failed: bool = False
    """Whether the run was made with ``--lf``: pytest then drops the tests that passed before
    while it collects, without reporting them deselected (and runs every test when none had
    failed), so which tests it left out is not known."""
    stopped_early: bool = False
    """Whether the run may have stopped at its failures (``-x``, ``--maxfail``, ``--sw``: as
    many failures and errors as the limit): the tests after the last failure were collected and not
    run, so which tests it left out is not known."""
    unfinished: bool = False
    """Whether the run did not finish (``incomplete``): the tests after the last it ran were
    collected and not run, so which tests it left out is not known."""


INTERNAL_ERROR = 3
"""pytest's exit status for an internal error (a crashed pytest-xdist worker, a plugin's bug)."""


def incomplete(run: RunInfo) -> str | None:
    """Why a run's results are incomplete: it was interrupted (Ctrl-C, a test raising
    ``KeyboardInterrupt``, ``pytest.exit``, the process dying) or pytest ended with an internal
    error, so the tests it did not reach have no result, or qbench could not record it whole;
    ``None`` when it finished."""
    if run.recording_errors:
        return (
            f"qbench could not record the run ({plural(run.recording_errors, 'recording error')}, "
            "in its report's warnings): its results are incomplete"
        )
    if run.interrupted:
        status = "" if run.exit_code is None else f", exit status {run.exit_code}"
        return f"the run was interrupted{status}: the tests it did not reach have no result"
    if run.exit_code == INTERNAL_ERROR:
        return "pytest ended with an internal error, exit status 3: its results are incomplete"
    return None


def file_of(nodeid: str) -> str:
    """The file part of a node id (``tests/test_a.py`` of ``tests/test_a.py::TestX::test_y``)."""
    return nodeid.split("::", 1)[0]


VALUE_LONG_OPTIONS = frozenset(("--pythonwarnings", "--override-ini", "--junit-prefix"))
"""pytest's long options whose value, the next argument unless given with ``=``, may hold
``::`` (``-W error::DeprecationWarning``'s long form) and is no node id."""


def selects_within_files(command: Sequence[str]) -> bool:
    """Whether a pytest command line selects some tests of a file (``-k``, ``-m``, a node id).
    An option's value is no node id: ``-W error::DeprecationWarning`` selects every test."""
    args = iter(command[1:])
    for arg in args:
        name = arg.split("=", 1)[0]
        if name in SELECTING_OPTIONS:
            return True
        if arg.startswith("--"):
            if name in VALUE_LONG_OPTIONS and "=" not in arg:
                next(args, None)
        elif arg.startswith("-") and len(arg) > 1:
            if _short_cluster_selects(arg, args):
                return True
        elif "::" in arg:
            return True
    return False


def _short_cluster_selects(cluster: str, args: Iterator[str]) -> bool:
    """Whether a short option cluster (``-vk``, ``-W``, ``-rA``) has ``-k`` or ``-m``; a value
    option's value, the rest of the cluster or else the next argument, is skipped."""
    for position, letter in enumerate(cluster[1:], start=2):
        if letter in "km":
            return True
        if letter in VALUE_SHORT_OPTIONS:
            if position == len(cluster):
                next(args, None)  # the option's value is the next argument
            break
    return False


def ran_last_failed(command: Sequence[str]) -> bool:
    """Whether a pytest command line has ``--lf`` (``--last-failed``)."""
    return any(arg in ("--lf", "--last-failed") for arg in command[1:])


VALUE_SHORT_OPTIONS = frozenset("kmpcoWrn")
"""Short options of pytest (and pytest-xdist's ``-n``) that take a value: in a cluster such as
``-vrx`` what follows one is its value, not more options."""


STEPWISE_LIMITS = {"--sw": 1, "--stepwise": 1, "--sw-skip": 2, "--stepwise-skip": 2}
"""pytest's stepwise options and the failure they stop at (``--sw-skip`` goes on past the
first)."""


def max_failures(command: Sequence[str]) -> int:
    """The failures at which a pytest command line stops the run: ``-x`` is 1,
    ``--maxfail=N`` is N (the last of the two given wins), ``--sw`` 1 and ``--sw-skip`` 2,
    whichever comes first; 0 when it does not stop."""
    limit = 0
    stepwise = 0
    args = iter(command[1:])
    for arg in args:
        if arg in ("-x", "--exitfirst"):
            limit = 1
        elif arg == "--maxfail" or arg.startswith("--maxfail="):
            value = arg.partition("=")[2] if "=" in arg else next(args, "")
            limit = int(value) if value.isdigit() else limit
        elif arg in STEPWISE_LIMITS:
            stepwise = max(stepwise, STEPWISE_LIMITS[arg])
        elif arg.startswith("-") and not arg.startswith("--"):
            limit = _short_cluster_limit(arg, args, limit)
    return min((n for n in (limit, stepwise) if n), default=0)


def _short_cluster_limit(cluster: str, args: Iterator[str], limit: int) -> int:
    """``limit``, or 1 when the short option cluster has ``-x`` before a value."""
    for position, letter in enumerate(cluster[1:], start=2):
        if letter == "x":
            limit = 1
        elif letter in VALUE_SHORT_OPTIONS:
            if position == len(cluster):
                next(args, None)  # the option's value is the next argument
            break
    return limit


def stopped_at_failures(
    command: Sequence[str], counts: Mapping[str, int], limit: int | None = None, failing: int = 0
) -> bool:
    """Whether a run of this command line may have stopped at its failures before running
    every test it collected: it had ``-x``, ``--maxfail=N`` or ``--sw`` and reached that many
    failures and errors (pytest counts both, collection errors too). ``limit`` is the one
    pytest settled, from every source (``addopts`` too), when the run recorded it; else the
    command line's. ``failing``: its results that failed or errored, which pytest counts
    towards the limit whatever word its line files them under (a conftest's
    ``pytest_report_teststatus`` counting a failure as ``known``: not in ``failed``)."""
    limit = max_failures(command) if limit is None else limit
    failures = sum(counts.get(name, 0) for name in ("failed", "errors", "subtests_failed"))
    return 0 < limit <= max(failures, failing)


RUN_ID_OPTION = "--qbench-run-id"


OUTPUT_FLAGS = frozenset(
    (
        *("--verbose", "--quiet", "--showlocals", "--no-showlocals", "--no-header"),
        *("--no-summary", "--force-short-summary", "--no-fold-skipped", "--qbench-annotations"),
    )
)
"""pytest's (and qbench's) flags that change only what is printed: runs that differ by them
select the same tests."""

OUTPUT_VALUE_OPTIONS = frozenset(
    (
        *("--tb", "--capture", "--color", "--code-highlight", "--durations", "--durations-min"),
        *("--verbosity", "--show-capture", "--junitxml", "--junit-xml", "--numprocesses"),
        *("--dist", "--maxprocesses", "--qbench-json", "--qbench-md", "--qbench-html"),
        *("--qbench-ctrf", "--qbench-digest", "--qbench-template", RUN_ID_OPTION),
    )
)
"""Options whose value (the next argument unless given with ``=``) changes only what is
printed, where reports go, the run id, or how many pytest-xdist workers run the tests."""

OUTPUT_SHORT_FLAGS = frozenset("vqsl")
"""``-v``, ``-q``, ``-s``, ``-l``: in a cluster such as ``-vsrA`` they and ``-r``'s (or
``-n``'s) value change only what is printed or how many workers run."""


def selection_args(command: Sequence[str]) -> list[str]:
    """A run's command line without the program and what differs between runs that select the
    same tests: the run id, the options of the output alone (``-v``, ``-rA``, ``--tb=short``,
    ``--qbench-md=PATH``, ``-n 2``), and ``-p qbench`` (the same run as ``qbench = true``)."""
    kept: list[str] = []
    args = iter(command[1:])
    for arg in args:
        name = arg.split("=", 1)[0]
        if name in OUTPUT_FLAGS and "=" not in arg:
            continue
        if name in OUTPUT_VALUE_OPTIONS:
            if "=" not in arg:
                next(args, None)
        elif arg.startswith("-p"):
            value = arg[2:] or next(args, "")
            if value not in ("qbench", "pytest_qbench.plugin"):
                kept += [arg, value] if arg == "-p" else [arg]
        elif not (arg.startswith("-") and not arg.startswith("--") and _output_cluster(arg, args)):
            kept.append(arg)
    return kept


def _output_cluster(cluster: str, args: Iterator[str]) -> bool:
    """Whether a short option cluster (``-vv``, ``-rA``, ``-sv``, ``-n2``) changes only the
    output; ``-r``'s or ``-n``'s value, the rest of the cluster or else the next argument, is
    then consumed. ``False`` (nothing consumed) for any other letter before them."""
    for position, letter in enumerate(cluster[1:], start=2):
        if letter in "rn":
            if position == len(cluster):
                next(args, None)  # the option's value is the next argument
            return True
        if letter not in OUTPUT_SHORT_FLAGS:
            return False
    return len(cluster) > 1


def same_paths(base: RunInfo, head: RunInfo) -> bool:
    """Whether the two runs collected from the same paths: the same tool, working directory and
    command line (the run id aside). Then a file only one of them collected did not exist for
    the other."""
    return (
        base.tool == head.tool
        and base.cwd == head.cwd
        and selection_args(base.command) == selection_args(head.command)
    )


def run_selection(index: Index, run: RunInfo, results: dict[str, PastResult]) -> Selection:
    """What ``run`` (whose ``results`` these are) collected, as far as the index knows."""
    ids = frozenset(run_deselected(index, run.run_id))
    count = run.counts.get("deselected", 0)
    known = len(ids) >= count and (count > 0 or not selects_within_files(run.command))
    last_failed = ran_last_failed(run.command) if run.last_failed is None else run.last_failed
    errors = sum(is_collection_error(nodeid, result) for nodeid, result in results.items())
    # only collection errors: pytest stopped before running the modules it did collect
    stopped = bool(results) and errors == len(results)
    files = frozenset(file_of(nodeid) for nodeid in [*results, *ids])
    failing = sum(result.outcome in FAILING for result in results.values())
    stopped_early = stopped_at_failures(run.command, run.counts, run.max_failures, failing)
    unfinished = incomplete(run) is not None
    known = known and not stopped and not last_failed and not stopped_early and not unfinished
    return Selection(
        len(results) - errors,
        count,
        files,
        ids,
        known,
        stopped,
        last_failed,
        stopped_early,
        unfinished,
    )


def collected(selection: Selection, nodeid: str, *, any_file: bool = False) -> bool:
    """Whether a run of this ``selection`` surely collected and selected ``nodeid``, had it
    existed: its file was collected (or, with ``any_file``, the run collected from the same
    paths as the other, so the file did not exist for it), the test was not deselected, and
    nothing unknown left tests out."""
    return (
        selection.known
        and (any_file or file_of(nodeid) in selection.files)
        and nodeid not in selection.deselected_ids
    )


@dataclass
class RunDiff:
    """What changed from ``base`` to ``head``."""

    base: RunInfo
    head: RunInfo
    thresholds: Thresholds
    new_failures: list[Change] = field(default_factory=list)
    known_flaky: list[Change] = field(default_factory=list)
    """Failing in ``head``, not in ``base``, and known flaky in ``head``'s history: listed
    apart from the new failures, and failing the comparison like them."""
    undecided: list[str] = field(default_factory=list)
    """``nodeid: error`` of the failures whose flaky verdict failed with an internal error
    (they count as new failures)."""
    fixed: list[Change] = field(default_factory=list)
    passed_after_reruns: list[Change] = field(default_factory=list)
    """Failing in ``base``; passing in ``head`` only after pytest-rerunfailures reran it: flaky
    in ``head``, not fixed."""
    still_failing: list[Change] = field(default_factory=list)
    new_tests: list[str] = field(default_factory=list)
    """Only in ``head``, where ``base`` collected and selected it had it existed."""
    removed_tests: list[str] = field(default_factory=list)
    """Only in ``base``, where ``head`` collected and selected it had it existed: a test of a
    file ``head`` collected, which ``head`` did not deselect."""
    not_selected_in_head: list[str] = field(default_factory=list)
    """Only in ``base``, and ``head`` did not select it (deselected, or in a file it did not
    collect), or cannot tell: not counted as removed."""
    not_selected_in_base: list[str] = field(default_factory=list)
    """Only in ``head``, and ``base`` did not select it, or cannot tell: not counted as new."""
    base_selection: Selection | None = None
    head_selection: Selection | None = None
    same_paths: bool = False
    """Whether both runs collected from the same paths (``same_paths``): their files may
    differ only because files were added or deleted."""
    slower: list[Slower] = field(default_factory=list)
    metric_changes: list[MetricChange] = field(default_factory=list)
    diagnostics: DiagnosticDiff = field(default_factory=DiagnosticDiff)
    """New and fixed static-check diagnostics, of the checkers both runs ran (issue 13.5)."""

    @property
    def failed(self) -> bool:
        """Whether ``head`` fails the comparison: a test failing in it and not in ``base``,
        known flaky or not (only a quarantine could excuse a failure, and qbench has none), or
        ``head`` did not finish (fail closed: the tests it did not reach may fail)."""
        return bool(self.new_failures or self.known_flaky or self.undecided or self.head_incomplete)

    @property
    def head_incomplete(self) -> str | None:
        """Why ``head``'s results are incomplete (``incomplete``); ``None`` when it finished."""
        return incomplete(self.head)


def diff_runs(index: Index, base: RunInfo, head: RunInfo, thresholds: Thresholds) -> RunDiff:
    """Compare two indexed runs."""
    before = known_outcomes(run_results(index, base.run_id), base.run_id)
    after = known_outcomes(run_results(index, head.run_id), head.run_id)
    infos = failure_infos(
        index, (r.fingerprint for r in [*before.values(), *after.values()] if r.fingerprint)
    )
    chosen_before = run_selection(index, base, before)
    chosen_after = run_selection(index, head, after)
    diff = RunDiff(
        base,
        head,
        thresholds,
        base_selection=chosen_before,
        head_selection=chosen_after,
        same_paths=same_paths(base, head),
    )
    for nodeid in sorted(after.keys() - before.keys()):
        if is_collection_error(nodeid, after[nodeid]):
            continue  # a new failure (_classify), not a new test
        new = collected(chosen_before, nodeid, any_file=diff.same_paths)
        new = new and not under_collection_error(nodeid, before)
        (diff.new_tests if new else diff.not_selected_in_base).append(nodeid)
    for nodeid in sorted(before.keys() - after.keys()):
        if is_collection_error(nodeid, before[nodeid]):
            _collector_gone(diff, nodeid, before[nodeid], infos)
            continue
        gone = collected(chosen_after, nodeid, any_file=diff.same_paths)
        gone = gone and not under_collection_error(nodeid, after)
        (diff.removed_tests if gone else diff.not_selected_in_head).append(nodeid)
    for nodeid in sorted(before.keys() | after.keys()):
        _classify(diff, nodeid, before.get(nodeid), after.get(nodeid), infos)
    _set_aside_known_flaky(index, diff, after)
    diff.slower = _slower(before, after, thresholds)
    diff.metric_changes = _metric_changes(index, base.run_id, head.run_id, thresholds)
    diff.diagnostics = diff_diagnostics(index, base.run_id, head.run_id)
    return diff


def known_outcomes(results: dict[str, PastResult], run_id: str) -> dict[str, PastResult]:
    """``results``, when each holds an outcome qbench knows.

    Raises:
        HistoryError: a result's outcome is unknown (a damaged index, or one another tool
            wrote): whether it is a new failure, a fixed one or a pass cannot be decided.
    """
    for nodeid, result in results.items():
        if result.outcome not in OUTCOMES:
            raise HistoryError(
                f"the index holds an unknown outcome {result.outcome!r} for {nodeid} in run "
                f"{run_id}: whether it is a new or fixed failure cannot be decided (a damaged "
                "index? `qbench index` rebuilds a run's rows from its run directory)",
                slug="index-unknown-outcome",
            )
    return results


COLLECTED = "collected"
"""The outcome shown for a collector whose collection error is gone: it collected again."""


def is_collection_error(nodeid: str, result: PastResult) -> bool:
    """Whether ``result`` is a collection error (indexed under the collector's node id, such as
    ``tests/test_x.py``, which has no ``::`` as a test's has)."""
    return "::" not in nodeid and result.outcome == "error"


def under_collection_error(nodeid: str, results: dict[str, PastResult]) -> bool:
    """Whether ``nodeid`` is a test of a collector that failed to collect in ``results``'s
    run: that run could not collect it, so it was neither removed nor added there."""
    parts = file_of(nodeid).split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return any(
        (found := results.get(prefix)) is not None and is_collection_error(prefix, found)
        for prefix in prefixes
    )


def _collector_gone(
    diff: RunDiff, nodeid: str, old: PastResult, infos: dict[str, FailureInfo]
) -> None:
    """A collection error of ``base`` that ``head`` does not have: fixed when ``head``
    collected that collector's path, else not selected by ``head``."""
    head = diff.head_selection
    if head is not None and any(f == nodeid or f.startswith(f"{nodeid}/") for f in head.files):
        diff.fixed.append(Change(nodeid, old.outcome, COLLECTED, _failure(old, infos)))
    else:
        diff.not_selected_in_head.append(nodeid)


def selections_differ(diff: RunDiff) -> bool:
    """Whether the two runs may have selected different tests."""
    base, head = diff.base_selection, diff.head_selection
    if base is None or head is None:
        return False
    return (
        (base.files != head.files and not diff.same_paths)
        or base.deselected_ids != head.deselected_ids
        or base.deselected != head.deselected
        or not (base.known and head.known)
    )


def _classify(
    diff: RunDiff,
    nodeid: str,
    old: PastResult | None,
    new: PastResult | None,
    infos: dict[str, FailureInfo],
) -> None:
    failed_before = old is not None and old.outcome in FAILING
    failed_after = new is not None and new.outcome in FAILING
    outcome_before = old.outcome if old is not None else None
    outcome_after = new.outcome if new is not None else None
    if failed_after and new is not None:
        info = _failure(new, infos)
        if not failed_before:
            diff.new_failures.append(Change(nodeid, outcome_before, outcome_after, info))
        else:
            same = old is not None and old.fingerprint == new.fingerprint
            diff.still_failing.append(Change(nodeid, outcome_before, outcome_after, info, same))
    elif failed_before and old is not None and new is not None and new.outcome in PASSING:
        if new.reruns:  # a pass that needed reruns; its failed attempt's failure, else base's
            info = _failure(new, infos) or _failure(old, infos)
            rerun = Change(nodeid, outcome_before, outcome_after, info, reruns=new.reruns)
            diff.passed_after_reruns.append(rerun)
        else:
            diff.fixed.append(Change(nodeid, outcome_before, outcome_after, _failure(old, infos)))


def _set_aside_known_flaky(index: Index, diff: RunDiff, after: dict[str, PastResult]) -> None:
    """Move the new failures that ``head``'s report calls known flaky to ``known_flaky`` (they
    still fail the comparison); give every new failure its history line.

    The verdict is the one the run's report gives each failing test (``judged_history``): the
    test's last results before ``head`` started, and its failure in ``head``. When the rule
    cannot decide, the failure stays new and the error is in ``undecided``.
    """
    if not diff.new_failures:
        return
    head = diff.head
    nodeids = [c.nodeid for c in diff.new_failures]
    recent = recent_results(index, nodeids, head.run_id, max(WINDOW, DEFAULT_MONITORS.window))
    new_failures: list[Change] = []
    for change in diff.new_failures:
        past = recent.get(change.nodeid, Recent([], None))
        fp = after[change.nodeid].fingerprint
        history, verdict = judged_history(past, fp, head.run_id, head.commit)
        judged = replace(change, history=history["summary"])
        if verdict.error:
            diff.undecided.append(f"{change.nodeid}: {verdict.error}")
        (diff.known_flaky if verdict.flaky else new_failures).append(judged)
    diff.new_failures = new_failures


def _failure(result: PastResult, infos: dict[str, FailureInfo]) -> FailureInfo | None:
    """The fingerprint's error type and location, with this result's own message."""
    info = infos.get(result.fingerprint or "")
    if info is None:
        return None
    return FailureInfo(info.error_type, info.location, result.message or info.message)


def _slower(
    before: dict[str, PastResult], after: dict[str, PastResult], t: Thresholds
) -> list[Slower]:
    found = []
    for nodeid, new in after.items():
        old = before.get(nodeid)
        if old is None or old.outcome != "passed" or new.outcome != "passed":
            continue
        grew = new.duration - old.duration
        if grew >= t.slower_secs and new.duration >= old.duration * (1 + t.slower_pct / 100):
            found.append(Slower(nodeid, old.duration, new.duration))
    return sorted(found, key=lambda s: (s.before - s.after, s.nodeid))


def _metric_changes(index: Index, base: str, head: str, t: Thresholds) -> list[MetricChange]:
    before, after = run_metrics(index, base), run_metrics(index, head)
    changes = []
    for key in sorted(before.keys() & after.keys()):
        (old, old_ok), (new, new_ok) = before[key], after[key]
        moved = old is not None and new is not None and abs(new - old) >= t.metric_delta - 1e-12
        if moved or old_ok != new_ok or (old is None) != (new is None):
            changes.append(MetricChange(key[0], key[1], old, new, old_ok, new_ok))
    return changes


@dataclass(frozen=True)
class FlakyTest:
    """A test that failed or was rerun in the runs looked at, with the monitors' assessment
    (``flakiness.assess``)."""

    nodeid: str
    summary: ExecutionSummary
    last_failure: FailureInfo | None
    evidence: str = ""
    """Why it is flaky (``passed after a rerun in 2 runs (r5, r9)``...), or why not."""
    assessment: Assessment | None = None
    """Its status, the monitor that decided it, the evidence's runs and commits, its score."""

    def to_json(self) -> dict[str, Any]:
        """The node id, the execution summary (Azure names), the evidence and the last
        failure."""
        failure = self.last_failure
        return {
            "nodeid": self.nodeid,
            **self.summary.to_json(),
            "evidence": self.evidence,
            "lastFailure": None if failure is None else failure_json(failure),
        }


def find_flaky(
    index: Index,
    runs: int,
    min_flips: int,
    monitors: Monitors = DEFAULT_MONITORS,
    statuses: Sequence[Status] = ("flaky",),
) -> list[FlakyTest]:
    """Tests that failed or were rerun in the last ``runs`` runs, with at least ``min_flips``
    flips, whose status (``flakiness.examine``) is one of ``statuses``, flakiest first. A test
    whose failure repeats in consecutive runs is broken, not flaky; one the monitors could not
    decide on is healthy, the error named."""
    found: list[tuple[str, ExecutionSummary, PastResult | None, Assessment]] = []
    for nodeid, results in flaky_candidates(index, runs).items():
        summary = execution_summary(results)
        if summary.flips < min_flips:
            continue
        assessment = examine(results, monitors)
        if assessment.status in statuses:
            failing = [r for r in results if r.outcome in FAILING]
            found.append((nodeid, summary, failing[-1] if failing else None, assessment))
    fps = (f.fingerprint for _n, _s, f, _a in found if f and f.fingerprint)
    infos = failure_infos(index, fps)
    flaky = [
        FlakyTest(n, s, _failure(f, infos) if f else None, a.reason, a) for n, s, f, a in found
    ]
    return sorted(flaky, key=_flakiest_first)


def _flakiest_first(test: FlakyTest) -> tuple[int, float, int, str]:
    status = test.assessment.status if test.assessment else "healthy"
    order = ("flaky", "broken", "healthy").index(status)
    return order, -test.summary.flaky_indicator, -test.summary.flips, test.nodeid


def failure_json(info: FailureInfo) -> dict[str, str]:
    """A fingerprint's error type, location and example message."""
    return {"error_type": info.error_type, "location": info.location, "message": info.message}
