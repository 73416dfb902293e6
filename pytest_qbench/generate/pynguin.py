"""Pynguin (search-based unit tests), only when asked for and given a Python 3.10 with Pynguin
installed: run in its own process group, in a temporary directory, with
``PYNGUIN_DANGER_AWARE=1`` (Pynguin refuses to run the target's code without it) and its time
budget; the test files it writes are read back as candidates."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.supervise import Ending
from pytest_qbench.core.supervise import run
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.candidate import count_tests
from pytest_qbench.generate.candidate import split_source
from pytest_qbench.generate.process import child_env
from pytest_qbench.generate.target import GenerateError
from pytest_qbench.generate.target import Target


ENV_PYTHON = "QBENCH_PYNGUIN_PYTHON"
STARTUP_SECONDS = 4
"""Pynguin's start-up (import, analysis of the module) and the writing of its tests."""
MARGIN = 0.15
"""The share of Pynguin's wall time kept free: its last mutant finishes after its mutation
time, and a loaded machine is slower."""
SEARCH_SHARE = 0.6
"""The share of the rest that goes to the search; the mutation analysis gets the remainder."""


def pynguin_python(given: str | None) -> str | None:
    """The interpreter to run Pynguin with: the option, else ``$QBENCH_PYNGUIN_PYTHON``."""
    return given or os.environ.get(ENV_PYTHON) or None


def check_pynguin(interpreter: str) -> None:
    """`GenerateError` when ``interpreter`` does not exist."""
    if not Path(interpreter).is_file():
        raise GenerateError(
            f"--pynguin-python {interpreter!r} is not a file; give a Python 3.10 with pynguin "
            f"installed (e.g. /tmp/pynguin310/bin/python), or set {ENV_PYTHON}",
            slug="generate-pynguin",
        )


@dataclass(frozen=True)
class PynguinPlan:
    """Pynguin's share of the budget for one module: its search and assertion (mutation) times
    and the wall time after which its process group is killed."""

    search: int
    mutation: int
    wall: float


def plan_pynguin(wanted: int, seconds: float) -> PynguinPlan | None:
    """How to run Pynguin in ``seconds`` of wall time: start-up (``STARTUP_SECONDS``) and a
    margin (``MARGIN``) first, then the rest split between the search (``SEARCH_SHARE``) and the
    mutation analysis that writes the assertions, each at most ``wanted`` (--pynguin-seconds);
    ``None`` when less than a second of search would be left."""
    work = seconds * (1 - MARGIN) - STARTUP_SECONDS
    search = min(wanted, int(work * SEARCH_SHARE))
    if search < 1:
        return None
    mutation = max(1, min(wanted, int(work - search)))
    return PynguinPlan(search=search, mutation=mutation, wall=seconds)


def run_pynguin(
    interpreter: str, target: Target, modules: list[str], scratch: Path, wanted: int, until: float
) -> tuple[list[Candidate], list[str]]:
    """Pynguin's tests of each of ``modules``, run one after another so that the last ends by
    ``until`` (``time.monotonic``), and a line per module it failed on or was not run on."""
    candidates: list[Candidate] = []
    problems: list[str] = []
    env = child_env(target.import_root, {"PYNGUIN_DANGER_AWARE": "1"})
    env.pop("PYTHONPATH", None)  # qbench's own packages are for this Python, not 3.10
    for index, name in enumerate(modules):
        share = (until - time.monotonic()) / (len(modules) - index)
        plan = plan_pynguin(wanted, share)
        if plan is None:
            problems.append(
                f"pynguin on {name}: not run: {max(share, 0):.0f} s of the budget left, too little "
                "for its start-up and search (raise --timeout)"
            )
            continue
        out = scratch / "pynguin" / str(index)
        out.mkdir(parents=True)
        finished = run(
            _command(interpreter, target, name, out, plan), cwd=out, env=env, timeout=plan.wall
        )
        files = sorted(out.glob("test_*.py"))
        if not files:
            problems.append(f"pynguin on {name}: no tests ({_why(finished, plan)})")
        for number, path in enumerate(files):
            imports, body = split_source(path.read_text(encoding="utf-8"))
            candidates.append(
                Candidate(
                    f"pynguin_{index}_{number}",
                    "pynguin",
                    name,
                    [name],
                    imports,
                    body,
                    tests=count_tests(body),
                )
            )
    return candidates, problems


def _command(
    interpreter: str, target: Target, module: str, out: Path, plan: PynguinPlan
) -> list[str]:
    return [
        interpreter,
        "-m",
        "pynguin",
        "--project-path",
        str(target.import_root),
        "--output-path",
        str(out),
        "--module-name",
        module,
        "--maximum-search-time",
        str(plan.search),
        "--maximum-mutation-time",
        str(plan.mutation),
        "--seed",
        "1",
        "--no-rich",
    ]


def _why(finished: Ending, plan: PynguinPlan) -> str:
    if finished.timed_out:
        return (
            f"killed at the budget after {plan.wall:.0f} s (search {plan.search} s + assertions "
            f"{plan.mutation} s + start-up) before it wrote its tests; raise --timeout"
        )
    return (finished.tail(300).strip().splitlines() or ["no tests"])[-1]
