"""Run one candidate test in a child pytest with coverage, in a temporary directory, and say
what happened: passed (with the target's lines it executed), found a failure (Hypothesis's
falsifying example), failed, errored (at import or collection), or hung (its process group
killed on the timeout)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal

from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.core.text import error_line
from pytest_qbench.generate._alarm import CandidateHung
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.coverage_gap import run_with_coverage
from pytest_qbench.generate.process import START_SECONDS
from pytest_qbench.generate.target import Target
from pytest_qbench.report.coverage.reports import DATA_FILE


if TYPE_CHECKING:
    from pytest_qbench.generate.state import Generation


Outcome = Literal["passed", "finding", "failed", "error", "hung", "empty"]
FALSIFYING = re.compile(r"(Falsifying (explicit )?example|Failing test case): \w+\($")
ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Failure|Exit|Interrupt)\b")
RESOURCE_ERROR = re.compile(
    r"^(MemoryError\b|OSError: \[Errno (28|122)\]|.*(No space left on device|Disk quota exceeded))"
)
"""A failure of the run's resources (a full disk, no memory), not of the function: never a
finding (a strict xfail would rerun it in every later suite run)."""


@dataclass(frozen=True)
class Verdict:
    """What running one candidate showed."""

    outcome: Outcome
    executed: dict[Path, set[int]]
    detail: str
    """The error line, the falsifying example, or how long it ran before it was killed."""


def verify(
    candidate: Candidate, target: Target, scratch: Path, timeout: float, limit: float | None = None
) -> Verdict:
    """Run ``candidate`` alone, isolated from the project's pytest configuration: its test
    stopped after ``timeout`` seconds inside the child (``_alarm``), the child killed after
    ``limit`` (``timeout`` plus ``START_SECONDS`` by default)."""
    limit = timeout + START_SECONDS if limit is None else limit
    workdir = scratch / "candidates" / candidate.id
    workdir.mkdir(parents=True)
    test_file = workdir / f"test_{candidate.id}.py"
    test_file.write_text(candidate.source(), encoding="utf-8")
    measured = run_with_coverage(
        target,
        workdir,
        [test_file.name, "-x"],
        scratch,
        candidate.id,
        limit,
        isolated=True,
        test_seconds=timeout,
    )
    finished = measured.finished
    if finished.timed_out:
        return Verdict("hung", {}, f"hung: killed after {limit:g}s (--test-timeout)")
    output = finished.output
    if finished.returncode == PytestExit.OK:
        return Verdict("passed", measured.executed, "")
    if finished.returncode == PytestExit.NO_TESTS_COLLECTED:
        return Verdict("empty", {}, "no test collected")
    if CandidateHung.__name__ in output:
        return Verdict("hung", {}, hung(timeout))
    error = error_line(output, 300) or "no output"
    if finished.returncode == PytestExit.TESTS_FAILED:
        example = falsifying_example(output)
        if example is not None and "ResolutionFailed" not in output:
            found = finding_error(output)
            if RESOURCE_ERROR.match(found):
                return Verdict("failed", {}, f"resource error, not a finding: {found}")
            return Verdict("finding", measured.executed, f"{example}|{found}")
        return Verdict("failed", {}, error)
    return Verdict("error", {}, error)


def verify_alone(run: Generation, candidate: Candidate) -> Verdict:
    """`verify` in the generation's copy of the project, within what is left of its budget."""
    box = run.box
    box.fresh()
    seconds = run.request.test_timeout
    limit = run.limit(seconds + START_SECONDS)
    return verify(candidate, box.target, run.scratch, seconds, limit)


def hung(timeout: float) -> str:
    """The verdict's detail of a test stopped at its timeout."""
    return f"hung: stopped after {timeout:g}s (--test-timeout)"


def falsifying_example(output: str) -> str | None:
    """The arguments of Hypothesis's (first) falsifying example (``a=0, b=0``), comments
    dropped; its report reads ``Falsifying example: test(`` or ``Failing test case: test(``, one
    argument a line, then ``)``, in pytest's ``E`` lines, in an exception group's ``|`` lines,
    or bare."""
    found = _falsifying(_plain_lines(output))
    return None if found is None else found[0]


def _plain_lines(output: str) -> list[str]:
    return [re.sub(r"^(E\s{3}|\s*\|\s?)", "", line).rstrip() for line in output.splitlines()]


def _falsifying(lines: list[str]) -> tuple[str, int] | None:
    """The example's arguments and the index of its first line."""
    for index, line in enumerate(lines):
        if FALSIFYING.search(line.strip()):
            args: list[str] = []
            for following in lines[index + 1 :]:
                text = following.strip()
                if text == ")":
                    return ", ".join(args), index
                if text and not text.startswith("#"):
                    args.append(text.split("  # ")[0].strip().rstrip(","))
    return None


def finding_error(output: str) -> str:
    """The exception line just above the falsifying example (``ZeroDivisionError: ...``)."""
    lines = _plain_lines(output)
    found = _falsifying(lines)
    stop = found[1] if found else len(lines)
    for line in reversed(lines[:stop]):
        if ERROR_LINE.match(line.strip()):
            return line.strip()[:300]
    return error_line(output, 300) or "no output"


def verify_batch(
    candidates: list[Candidate], target: Target, scratch: Path, each: float, limit: float
) -> dict[str, Verdict]:
    """Run candidates in one child pytest, each test's lines told apart by coverage contexts and
    each test stopped after ``each`` seconds (``_alarm``: a hang is a verdict, not the batch's
    end); the child gets ``limit`` seconds in all. A template call (which the probe saw return)
    gets its verdict here; a Hypothesis candidate only when it passed or hung: one that failed
    runs alone (``verify``), whose output tells a finding from a failure. ``{}`` when the run
    did not finish (the caller then runs them one by one)."""
    if not candidates:
        return {}
    workdir = scratch / "candidates" / "batch"
    workdir.mkdir(parents=True)
    for candidate in candidates:
        (workdir / f"test_{candidate.id}.py").write_text(candidate.source(), encoding="utf-8")
    args = ["--qbench-cov-contexts", "."]
    measured = run_with_coverage(
        target,
        workdir,
        args,
        scratch,
        "batch",
        limit,
        isolated=True,
        test_seconds=each,
    )
    report = scratch / "runs" / "batch" / "report.json"
    if measured.finished.timed_out or not report.is_file():
        return {}
    outcomes = _outcomes(report)
    lines = _lines_by_test(scratch / "runs" / "batch" / DATA_FILE, target)
    verdicts: dict[str, Verdict] = {}
    for candidate in candidates:
        test_file = f"test_{candidate.id}.py"
        outcome, message = outcomes.get(test_file, ("error", "not collected"))
        if outcome == "passed":
            verdicts[candidate.id] = Verdict("passed", lines.get(test_file, {}), "")
        elif message.startswith(CandidateHung.__name__):
            verdicts[candidate.id] = Verdict(
                "hung", {}, f"hung: stopped after {each:g}s (--test-timeout)"
            )
        elif candidate.method == "template":
            verdicts[candidate.id] = Verdict("failed", {}, message)
    return verdicts


def _outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """``{file: (outcome, error line)}`` from the batch's report.json: a file's first test that
    did not pass, else passed."""
    data = json.loads(report.read_text(encoding="utf-8"))
    found: dict[str, tuple[str, str]] = {}
    for result in data["results"]:
        failure = result.get("failure") or {}
        message = f"{failure.get('error_type', '')}: {failure.get('error_message', '')}"
        file = result["nodeid"].split("::")[0]
        if found.get(file, ("passed", ""))[0] == "passed":
            found[file] = (result["outcome"], message.strip(": ")[:300])
    return found


def _lines_by_test(data_file: Path, target: Target) -> dict[str, dict[Path, set[int]]]:
    """``{test file: {target file: lines}}`` from the contexts of the coverage data."""
    import coverage

    if not data_file.is_file():
        return {}
    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    wanted = {str(m.path): m.real for m in target.modules}
    found: dict[str, dict[Path, set[int]]] = {}
    for filename in data.measured_files():
        path = wanted.get(str(Path(filename).resolve()))
        if path is None:
            continue
        for line, contexts in data.contexts_by_lineno(filename).items():
            for context in contexts:
                if context:
                    test_file = context.split("::")[0]
                    found.setdefault(test_file, {}).setdefault(path, set()).add(line)
    return found
