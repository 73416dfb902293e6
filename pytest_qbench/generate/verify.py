"""Run one candidate test in a child pytest with coverage, in a temporary directory, and say
what happened: passed (with the target's lines it executed), found a failure (Hypothesis's
falsifying example), failed, errored (at import or collection), or hung (its process group
killed on the timeout)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.coverage_gap import run_with_coverage
from pytest_qbench.generate.target import Target


Outcome = Literal["passed", "finding", "failed", "error", "hung", "empty"]
FALSIFYING = re.compile(r"(Falsifying (explicit )?example|Failing test case): \w+\($")
PYTEST_FAILED = 1
PYTEST_NO_TESTS = 5


@dataclass(frozen=True)
class Verdict:
    """What running one candidate showed."""

    outcome: Outcome
    executed: dict[Path, set[int]]
    detail: str
    """The error line, the falsifying example, or how long it ran before it was killed."""


def verify(candidate: Candidate, target: Target, scratch: Path, timeout: float) -> Verdict:
    """Run ``candidate`` alone, isolated from the project's pytest configuration."""
    workdir = scratch / "candidates" / candidate.id
    workdir.mkdir(parents=True)
    test_file = workdir / f"test_{candidate.id}.py"
    test_file.write_text(candidate.source(), encoding="utf-8")
    measured = run_with_coverage(
        target, workdir, [test_file.name, "-x"], scratch, candidate.id, timeout, isolated=True
    )
    finished = measured.finished
    if finished.timed_out:
        return Verdict("hung", {}, f"hung: killed after {timeout:g}s (--timeout)")
    output = finished.output
    if finished.returncode == 0:
        return Verdict("passed", measured.executed, "")
    if finished.returncode == PYTEST_NO_TESTS:
        return Verdict("empty", {}, "no test collected")
    error = error_line(output)
    if finished.returncode == PYTEST_FAILED:
        example = falsifying_example(output)
        if example is not None and "ResolutionFailed" not in output:
            return Verdict("finding", measured.executed, f"{example}|{error}")
        return Verdict("failed", {}, error)
    return Verdict("error", {}, error)


def error_line(output: str) -> str:
    """The first ``E   `` line of pytest's output, else its last non-empty line."""
    for line in output.splitlines():
        if line.startswith("E   "):
            return line[4:].strip()[:300]
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def falsifying_example(output: str) -> str | None:
    """The arguments of Hypothesis's falsifying example (``a=0, b=0``), comments dropped; its
    report reads ``Falsifying example: test(`` or ``Failing test case: test(``, one argument a
    line, then ``)``, in pytest's ``E`` lines or not."""
    lines = [re.sub(r"^E\s{3}", "", line).rstrip() for line in output.splitlines()]
    for index, line in enumerate(lines):
        if FALSIFYING.search(line.strip()):
            args: list[str] = []
            for following in lines[index + 1 :]:
                if following.strip() == ")":
                    return ", ".join(args)
                args.append(following.split("  # ")[0].strip().rstrip(","))
    return None
