"""CoverUp's acceptance of the tests kept, whatever made them (issue 23.3): each passes
``REPEATS`` times in a row, then the kept tests run in a random order with the project's
existing suite, and none may fail, nor make a test of the suite fail that passed before. When
that shared run shows a failure, each kept test runs alone with the suite (same order seed) to
find which: a polluting test is dropped with that reason. Fail closed: a run that hangs or
writes no report drops what it was to accept."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.generate import models
from pytest_qbench.generate._shuffle import SEED
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.coverage_gap import run_with_coverage
from pytest_qbench.generate.process import START_SECONDS


if TYPE_CHECKING:
    from pytest_qbench.generate.state import Generation

REPEATS = 5
"""Runs in a row a kept test must pass."""
SHUFFLE = ["-p", "pytest_qbench.generate._shuffle", "-p", "no:randomly"]
ACCEPT_DIR = "qbench_accept"
"""The directory of the project's copy the kept tests are put in to run with its suite."""
Outcomes = dict[str, tuple[str, str]]
"""``{node id: (outcome, error line)}`` of a run."""


def accept(run: Generation, before: Path) -> None:
    """Drop from ``run.kept`` the tests that fail when repeated or in a random order with the
    existing suite; ``before`` is the report.json of the suite's run before generation."""
    if run.kept:
        _repeat(run)
    if run.kept:
        _with_suite(run, before)


def _repeat(run: Generation) -> None:
    """Every kept test ``REPEATS`` times in one run; a test that failed there runs its repeats
    alone (another kept test may have broken it), and is dropped as flaky if it fails again."""
    shared = _repeat_run(run, run.kept, "repeat")
    for index, candidate in enumerate(list(run.kept)):
        if shared is not None and not _failed_turns(shared, candidate):
            continue
        alone = _repeat_run(run, [candidate], f"repeat-{index}")
        if alone is None:
            _reject(run, candidate, "acceptance could not be decided: the repeated run hung")
            continue
        failed = _failed_turns(alone, candidate)
        if failed:
            name = f"test_{candidate.id}_r{failed[0]}.py"
            why = _failures(alone, name) or ["not run"]
            _reject(
                run,
                candidate,
                f"flaky: failed {len(failed)} of {REPEATS} runs in a row (run {failed[0]}: "
                f"{why[0]})",
            )


def _repeat_run(run: Generation, candidates: list[Candidate], name: str) -> Outcomes | None:
    """``candidates``, each ``REPEATS`` times in a row, in one isolated child pytest."""
    workdir = run.scratch / "accept" / name
    workdir.mkdir(parents=True)
    for candidate in candidates:
        for turn in range(1, REPEATS + 1):
            test_file = workdir / f"test_{candidate.id}_r{turn}.py"
            test_file.write_text(candidate.source(), encoding="utf-8")
    box = run.box
    box.fresh()
    each = run.request.test_timeout
    measured = run_with_coverage(
        box.target,
        workdir,
        ["-p", "no:randomly"],
        run.scratch,
        name,
        each * REPEATS * len(candidates) + START_SECONDS,
        isolated=True,
        test_seconds=each,
        measure=False,
    )
    if measured.finished.timed_out:
        return None
    return outcomes_of(run.scratch / "runs" / name / "report.json")


def _failed_turns(outcomes: Outcomes, candidate: Candidate) -> list[int]:
    """The repeats of ``candidate`` that failed or did not run."""
    return [
        turn
        for turn in range(1, REPEATS + 1)
        if _failures(outcomes, f"test_{candidate.id}_r{turn}.py")
        or not _ran(outcomes, f"test_{candidate.id}_r{turn}.py")
    ]


def _with_suite(run: Generation, before: Path) -> None:
    passed_before = outcomes_of(before)
    if passed_before is None:
        for candidate in list(run.kept):
            _reject(run, candidate, "acceptance could not be decided: no report of the suite")
        return
    suite = sorted({nodeid.split("::")[0] for nodeid in passed_before})
    good = {n for n, (outcome, _) in passed_before.items() if outcome == "passed"}
    seed = str(random.randrange(2**32))
    shared = _suite_run(run, suite, run.kept, seed, "accept-all")
    if shared is not None and not _broken(shared, good, run.kept):
        return
    for index, candidate in enumerate(list(run.kept)):
        alone = _suite_run(run, suite, [candidate], seed, f"accept-{index}")
        if alone is None:
            _reject(run, candidate, "acceptance could not be decided: the suite's run hung")
            continue
        broken = _broken(alone, good, [candidate])
        if broken:
            _reject(run, candidate, broken)


def _suite_run(
    run: Generation, suite: list[str], candidates: list[Candidate], seed: str, name: str
) -> Outcomes | None:
    """The existing suite's files plus ``candidates``, shuffled, in the project's copy."""
    box = run.box
    root = box.fresh()
    folder = root / ACCEPT_DIR
    folder.mkdir(exist_ok=True)
    for candidate in candidates:
        (folder / f"test_{candidate.id}.py").write_text(candidate.source(), encoding="utf-8")
    files = [f"{ACCEPT_DIR}/test_{c.id}.py" for c in candidates]
    measured = run_with_coverage(
        box.target,
        root,
        [*SHUFFLE, *suite, *files],
        run.scratch,
        name,
        run.request.suite_timeout,
        isolated=False,
        extra_env={SEED: seed},
        measure=False,
    )
    if measured.finished.timed_out:
        return None
    return outcomes_of(run.scratch / "runs" / name / "report.json")


def _broken(outcomes: Outcomes, good: set[str], candidates: list[Candidate]) -> str:
    """Why the run is not clean: a kept test failed, or a test of the suite that passed
    before failed; ``""`` when clean."""
    for candidate in candidates:
        failures = _failures(outcomes, f"{ACCEPT_DIR}/test_{candidate.id}.py")
        if failures:
            return f"fails in a random order with the existing suite: {failures[0]}"
        if not _ran(outcomes, f"{ACCEPT_DIR}/test_{candidate.id}.py"):
            return "acceptance could not be decided: it did not run with the existing suite"
    for nodeid in sorted(good):
        outcome, message = outcomes.get(nodeid, ("passed", ""))
        if outcome in ("failed", "error"):
            return (
                f"pollutes: makes {nodeid} fail when run in a random order with the existing "
                f"suite ({message})"
            )
    return ""


def _failures(outcomes: Outcomes, file: str) -> list[str]:
    return [
        message or outcome
        for nodeid, (outcome, message) in outcomes.items()
        if nodeid.split("::")[0] == file and outcome in ("failed", "error")
    ]


def _ran(outcomes: Outcomes, file: str) -> bool:
    return any(nodeid.split("::")[0] == file for nodeid in outcomes)


def _reject(run: Generation, candidate: Candidate, reason: str) -> None:
    run.kept.remove(candidate)
    function = candidate.functions[0]
    run.explain(candidate.module, function, f"{candidate.name} dropped: {reason}")
    run.dropped.append(
        models.Dropped(
            test=candidate.name, function=function, method=candidate.method, reason=reason
        )
    )


def outcomes_of(report: Path) -> Outcomes | None:
    """Every result of a run's report.json; ``None`` when there is none."""
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found: Outcomes = {}
    for result in data.get("results", []):
        failure = result.get("failure") or {}
        message = f"{failure.get('error_type', '')}: {failure.get('error_message', '')}"
        found[result["nodeid"]] = (result["outcome"], message.strip(": ")[:300])
    return found
