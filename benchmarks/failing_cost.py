"""Instructions a failing result costs at the session end: its fingerprint, its history judged.

Runs a suite of 337 tests (33 failing in the last run: messages with numbers, addresses, paths,
ids and long text, flaky tests, a returning regression, a broken test) ten times into one qbench
directory, then an eleventh time into another; then counts, under ``valgrind
--tool=callgrind`` (``PYTHONHASHSEED=0``), for each checkout given, the eleventh run's session
end on a copy of the ten runs' index (``record_run``) with and without the failing tests'
histories (``failing_histories``), and the failing results' fingerprints (``fingerprint_of`` of
each failing record of the stream) with and without. Per failing result is the difference over
the failing results.

Usage::

    python benchmarks/failing_cost.py --qbench-at old=/tmp/old --qbench-at new=.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from overhead import DEFAULT_WORK_DIR
from overhead import child_env
from session_end_cost import count


SUITE = r"""
import os
import uuid

import pytest

RUN = int(os.environ.get("FH_RUN", "0"))


@pytest.mark.parametrize("i", range(300))
def test_pass(i):
    assert i >= 0


@pytest.mark.parametrize("i", range(15))
def test_numbers(i):
    assert RUN * 7 + i == -1, f"value {RUN * 3.5} at 0x{id(i):x} took {i}ms"


@pytest.mark.parametrize("i", range(5))
def test_key(i):
    {}[f"/srv/app/data/{RUN}/file-{i}.txt"]


@pytest.mark.parametrize("i", range(5))
def test_uuid(i):
    raise RuntimeError(f"request {uuid.uuid4()} failed with hash {'%016x' % (RUN * 991 + i)}")


@pytest.mark.parametrize("i", range(5))
def test_flaky(i):
    assert (RUN + i) % 3, "flaky: connection reset"


def test_regression():
    assert RUN not in (2, 3, 4, 10), "regression: got 41 expected 42"


def test_broken():
    assert RUN < 7, "broken since run 7"


@pytest.mark.parametrize("i", range(5))
def test_long(i):
    assert "a" * 300 + str(RUN) == "b" * 300, "long mismatch"
"""

STEP = r"""
import json, shutil, sys, tempfile
from dataclasses import replace
from pathlib import Path
from pytest_qbench.history import failure_history, fingerprint, session_end

step, earlier, run = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
few = step.endswith("-few")  # every eleventh failing result: the others' cost is the slope
if step.startswith("fingerprint"):
    failing = [
        json.loads(line)["result"]
        for line in (run / "results.jsonl").read_text().splitlines()
        if '"outcome":"failed"' in line or '"outcome":"error"' in line
    ]
    for result in failing[::11] if few else failing:
        fingerprint.fingerprint_of(result)
else:
    report = json.loads((run / "report.json").read_text())
    report["results"] = []
    work = Path(tempfile.mkdtemp(prefix="failing-cost-"))
    shutil.copy(earlier / "index.sqlite", work / "index.sqlite")
    judge = failure_history.failing_histories
    def some(index, done, *args):
        return judge(index, replace(done, failing=done.failing[::11] if few else done.failing), *args)
    failure_history.failing_histories = some
    session_end.record_run(work, report, run / "results.jsonl", [], 200)
    shutil.rmtree(work)
"""
"""Each step on every failing result, and ``-few`` on every eleventh: the difference over the
others is a failing result's marginal cost (one-off work, a statement prepared, a module
imported, cancels out)."""


def runs_of(python: str, work_dir: Path) -> tuple[Path, Path]:
    """The qbench directory of the ten earlier runs, and the eleventh run's directory."""
    suite = work_dir / "failing-suite"
    (suite / "tests").mkdir(parents=True, exist_ok=True)
    (suite / "tests" / "test_gen.py").write_text(SUITE)
    earlier, last = suite / "q10", suite / "q11"
    argv = [python, "-m", "pytest", "-q", "-p", "qbench", "-p", "no:cacheprovider", "tests"]
    argv += ["-p", "no:randomly"]
    for number, where in [*((n, earlier) for n in range(10)), (10, last)]:
        if (where / "runs").is_dir() and len(list((where / "runs").iterdir())) > number % 10:
            continue
        env = {**child_env(), "FH_RUN": str(number)}
        run_argv = [*argv, f"--qbench-dir={where}"]
        subprocess.run(run_argv, cwd=suite, env=env, capture_output=True, check=False)
    return earlier, next((last / "runs").iterdir())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qbench-at", action="append", required=True, metavar="NAME=CHECKOUT")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    args = parser.parse_args(argv)
    earlier, run = runs_of(args.python, args.work_dir)
    failing = sum(
        '"outcome":"failed"' in line or '"outcome":"error"' in line
        for line in (run / "results.jsonl").read_text().splitlines()
    )
    print(f"{failing} failing results; per failing result:")
    print("| checkout | fingerprint | history judged | both |")
    print("|---|---:|---:|---:|")
    for name, checkout in (item.split("=", 1) for item in args.qbench_at):
        counts = {
            step: count(args.python, os.path.abspath(checkout), step, earlier, run, STEP)
            for step in ("fingerprint-few", "fingerprint", "history-few", "history")
        }
        others = failing - len(range(0, failing, 11))
        fp = (counts["fingerprint"] - counts["fingerprint-few"]) / others
        hist = (counts["history"] - counts["history-few"]) / others
        print(f"| {name} | {fp / 1e3:.1f} k | {hist / 1e3:.1f} k | {(fp + hist) / 1e3:.1f} k |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
