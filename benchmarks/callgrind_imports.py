"""Where a run's fixed instructions go, module by module, counted by callgrind.

``callgrind_cost.py`` gives a configuration's fixed instructions as one number (the line's
intercept). This splits one pytest run's instructions by the module being imported: the run goes
under ``valgrind --tool=callgrind --dump-before=os_getppid*`` with a wrapper around every source
and extension module's ``exec_module`` that calls ``os.getppid()`` as the module starts and ends,
so each part of the profile between two calls belongs to the module on top of the import stack
then (its unmarshalling and body, and the finding of the modules it imports), and the rest of
the run (pytest's and the plugin's work outside imports) to ``<run>``, the interpreter's start
and exit to ``<start and exit>``. Counted, not timed: the same on any load.

Usage::

    python benchmarks/callgrind_imports.py --qbench-at old=/tmp/old --qbench-at new=.
    python benchmarks/callgrind_imports.py --tests 1 --collect-only --qbench-at new=.

Each configuration runs once on a generated suite of ``--tests`` passing tests (after one
warm-up run that writes the byte code, qbench's kept report.md entry and empty index); the table
gives each module's instructions over plain pytest's, largest first, and the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path


WRAPPER = """
import os, sys
import importlib._bootstrap_external as external

LOG = []
_mark = os.getppid


def _wrap(real):
    def exec_module(self, module):
        LOG.append("+" + module.__name__)
        _mark()
        try:
            return real(self, module)
        finally:
            LOG.append("-" + module.__name__)
            _mark()

    return exec_module


external._LoaderBasics.exec_module = _wrap(external._LoaderBasics.exec_module)
external.ExtensionFileLoader.exec_module = _wrap(external.ExtensionFileLoader.exec_module)
import pytest

LOG.append("+<run>")
_mark()
pytest.main(sys.argv[2:])
LOG.append("-<run>")
_mark()
with open(sys.argv[1], "w") as file:
    file.write("\\n".join(LOG))
"""
START = "<start and exit>"


def generate(suite: Path, tests: int) -> None:
    """``tests`` passing tests in one file."""
    suite.mkdir(parents=True, exist_ok=True)
    body = "".join(f"def test_{i}():\n    assert {i} == {i}\n\n\n" for i in range(tests))
    (suite / "test_suite.py").write_text(body)


def child_env(pythonpath: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measured as installed: byte-compiled
    env.pop("PYTEST_ADDOPTS", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    else:
        env.pop("PYTHONPATH", None)
    return env


def by_module(
    python: str, suite: Path, pytest_args: list[str], pythonpath: str | None, work: Path
) -> Counter[str]:
    """Instructions of one run, by the module being imported (``<run>``: outside imports)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    env = child_env(pythonpath)
    script = work / "wrapper.py"
    script.write_text(WRAPPER)
    log = work / "log"
    argv = [python, str(script), str(log), *pytest_args]
    subprocess.run(argv, cwd=suite, env=env, capture_output=True, check=False)  # warm-up
    profile = work / "cg.out"
    valgrind = [
        "valgrind",
        "--tool=callgrind",
        "--dump-before=os_getppid*",
        "--dump-instr=no",
        f"--callgrind-out-file={profile}",
    ]
    subprocess.run([*valgrind, *argv], cwd=suite, env=env, capture_output=True, check=False)
    parts: dict[int, int] = {}
    for path in work.glob("cg.out*"):
        suffix = path.name[len("cg.out") :]
        with path.open() as file:
            total = next(int(line.split()[1]) for line in file if line.startswith("summary:"))
        parts[int(suffix[1:]) if suffix else sys.maxsize] = total
        path.unlink()
    counts = [parts[k] for k in sorted(parts)]
    marks = log.read_text().split("\n")
    if len(counts) != len(marks) + 1:
        raise SystemExit(f"{len(counts)} profile parts for {len(marks)} marks: a run failed")
    spent: Counter[str] = Counter({START: counts[0]})
    stack = [START]
    for i, mark in enumerate(marks):
        if mark[0] == "+":
            stack.append(mark[1:])
        else:
            stack.pop()
        spent[stack[-1]] += counts[i + 1]
    return spent


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qbench-at", action="append", default=[], metavar="NAME=CHECKOUT")
    parser.add_argument("--tests", type=int, default=1)
    parser.add_argument("--collect-only", action="store_true", help="pytest --co")
    parser.add_argument("--top", type=int, default=40, help="modules listed")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", type=Path)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="qbench-callgrind-imports-"))
    try:
        suite = work / "suite"
        generate(suite, args.tests)
        common = ["-q", "-p", "no:cacheprovider", *(["--co"] if args.collect_only else [])]
        runs: dict[str, Counter[str]] = {}
        runs["plain"] = by_module(args.python, suite, common, None, work / "plain")
        for spec in args.qbench_at:
            name, _, checkout = spec.partition("=")
            store = f"--qbench-dir={work / name / 'store'}"
            run_args = [*common, "-p", "qbench", store]
            path = str(Path(checkout).resolve())
            runs[name] = by_module(args.python, suite, run_args, path, work / name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    plain = runs["plain"]
    names = [name for name in runs if name != "plain"]
    every = set(plain).union(*(runs[n] for n in names))
    over = {n: {m: runs[n][m] - plain[m] for m in every} for n in names}
    modules = sorted(every, key=lambda m: -max(abs(over[n][m]) for n in names))
    print("| module | " + " | ".join(f"{n} over plain" for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    for module in modules[: args.top]:
        cells = " | ".join(f"{over[n][module] / 1e6:+.2f} M" for n in names)
        print(f"| {module} | {cells} |")
    totals = " | ".join(f"**{sum(over[n].values()) / 1e6:+.2f} M**" for n in names)
    print(f"| all (plain: {sum(plain.values()) / 1e9:.4f} G) | {totals} |")
    if args.json:
        args.json.write_text(json.dumps({n: dict(c) for n, c in runs.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
