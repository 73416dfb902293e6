"""Pynguin (search-based unit tests), only when asked for and given a Python 3.10 with Pynguin
installed: run in its own process group, in a temporary directory, with
``PYNGUIN_DANGER_AWARE=1`` (Pynguin refuses to run the target's code without it) and its time
budget; the test files it writes are read back as candidates."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.candidate import count_tests
from pytest_qbench.generate.candidate import split_source
from pytest_qbench.generate.process import child_env
from pytest_qbench.generate.process import run_child
from pytest_qbench.generate.target import GenerateError
from pytest_qbench.generate.target import Target


ENV_PYTHON = "QBENCH_PYNGUIN_PYTHON"


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


def run_pynguin(
    interpreter: str, target: Target, scratch: Path, seconds: int, timeout: float
) -> tuple[list[Candidate], list[str]]:
    """Pynguin's tests of each module of the target, and a line per module it failed on."""
    candidates: list[Candidate] = []
    problems: list[str] = []
    env = child_env(target.import_root, {"PYNGUIN_DANGER_AWARE": "1"})
    env.pop("PYTHONPATH", None)  # qbench's own packages are for this Python, not 3.10
    for index, module in enumerate(target.modules):
        out = scratch / "pynguin" / str(index)
        out.mkdir(parents=True)
        command = [
            interpreter,
            "-m",
            "pynguin",
            "--project-path",
            str(target.import_root),
            "--output-path",
            str(out),
            "--module-name",
            module.name,
            "--maximum-search-time",
            str(seconds),
        ]
        finished = run_child(command, out, env, seconds + timeout)
        files = sorted(out.glob("test_*.py"))
        if finished.timed_out or not files:
            why = (
                "hung"
                if finished.timed_out
                else (finished.tail(300).strip().splitlines() or ["no tests"])[-1]
            )
            problems.append(f"pynguin on {module.name}: no tests ({why})")
        for number, path in enumerate(files):
            imports, body = split_source(path.read_text(encoding="utf-8"))
            functions = [module.name]
            candidates.append(
                Candidate(
                    f"pynguin_{index}_{number}",
                    "pynguin",
                    module.name,
                    functions,
                    imports,
                    body,
                    tests=count_tests(body),
                )
            )
    return candidates, problems
