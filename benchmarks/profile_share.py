"""Which share of a ``pytest -p qbench`` run is spent in qbench, by sampling it with py-spy.

On a shared machine the CPU time of the same run swings by 10-20% between runs, more than the
few percent qbench adds, so comparing two runs' CPU times needs many rounds. Sampling one run
measures qbench against pytest inside the same process instead: the share of samples whose stack
holds a ``pytest_qbench`` frame is the part of the run qbench costs (work that qbench causes
elsewhere, such as garbage collection of more objects, is not counted). A share ``s`` means
qbench made the run about ``1 / (1 - s)`` times as expensive as plain pytest.

Usage::

    python benchmarks/profile_share.py --size 10000 [--rate 250] [--py-spy PATH]

Needs py-spy (``pip install py-spy``); it samples the child it starts, so no extra privileges.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from _measure import exit_on_sigterm
from _measure import imported_package_revision
from overhead import COMMON_ARGS
from overhead import DEFAULT_WORK_DIR
from overhead import child_env
from overhead import generate_suite


PACKAGE_FRAME = "pytest_qbench/"
_LINE_NUMBER = re.compile(r":\d+\)$")


@dataclass
class Profile:
    """Sample counts of one run."""

    total: int = 0
    in_qbench: int = 0
    by_hook: Counter[str] = field(default_factory=Counter)
    by_function: Counter[str] = field(default_factory=Counter)

    @property
    def share(self) -> float:
        """Fraction of the samples with a qbench frame on the stack."""
        return self.in_qbench / self.total if self.total else 0.0


def read_raw(path: Path) -> Profile:
    """Parse py-spy's ``--format raw`` output (collapsed stacks: ``f1;f2;f3 count``)."""
    profile = Profile()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            stack, _, count_text = line.rstrip("\n").rpartition(" ")
            if not count_text.isdigit():
                continue
            count = int(count_text)
            profile.total += count
            frames = [_LINE_NUMBER.sub(")", frame) for frame in stack.split(";")]
            ours = [frame for frame in frames if PACKAGE_FRAME in frame]
            if ours:
                profile.in_qbench += count
                profile.by_hook[ours[0]] += count  # the hook pytest called
                profile.by_function[ours[-1]] += count  # where qbench's own code was
    return profile


def report(profile: Profile, top: int) -> str:
    """Markdown: the share, the implied ratio, and the hooks and functions that cost most."""
    share = profile.share
    lines = [
        f"samples: {profile.total}; with a qbench frame: {profile.in_qbench} "
        f"= **{100 * share:.1f}%** of the run, i.e. about **{1 / (1 - share):.3f}x** plain pytest",
        "",
        "| outermost qbench frame (the hook) | samples | share of run |",
        "|---|---:|---:|",
    ]
    for name, count in profile.by_hook.most_common(top):
        lines.append(f"| `{name}` | {count} | {100 * count / profile.total:.2f}% |")
    lines += [
        "",
        "| innermost qbench frame (with what it calls) | samples | share of run |",
        "|---|---:|---:|",
    ]
    for name, count in profile.by_function.most_common(top):
        lines.append(f"| `{name}` | {count} | {100 * count / profile.total:.2f}% |")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="Tests in the generated suite")
    parser.add_argument("--per-file", type=int, default=100, help="Tests per generated module")
    parser.add_argument("--rate", type=int, default=250, help="Samples per second")
    parser.add_argument("--top", type=int, default=15, help="Rows per table")
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="The py-spy executable")
    parser.add_argument("--python", default=sys.executable, help="Interpreter that runs pytest")
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument(
        "--raw", type=Path, help="Analyse this py-spy raw file instead of recording a new run"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Record one qbench run with py-spy (or read ``--raw``) and print where its time went."""
    args = parse_args(argv)
    exit_on_sigterm()
    raw: Path | None = args.raw
    if raw is None:
        if not args.py_spy:
            print("py-spy not found: pip install py-spy, or pass --py-spy PATH", file=sys.stderr)
            return 2
        work_dir: Path = args.work_dir.resolve()
        suite = generate_suite(work_dir, args.size, args.per_file)
        out = work_dir / f"profile-{suite.total}"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        raw = out / "py-spy.txt"
        revision = imported_package_revision(args.python, child_env())
        print(f"profiling pytest-qbench at {revision} on {suite.total} tests", file=sys.stderr)
        argv_ = [args.py_spy, "record", "-r", str(args.rate), "-f", "raw", "-o", str(raw), "--"]
        argv_ += [args.python, "-m", "pytest", *COMMON_ARGS, "-p", "qbench"]
        argv_ += [f"--qbench-dir={out / 'qbench'}", "tests"]
        with (out / "pytest-output.txt").open("wb") as log:
            subprocess.run(argv_, cwd=suite.path, env=child_env(), stdout=log, check=False)
        if not raw.is_file():
            print(f"py-spy wrote nothing; see {out / 'pytest-output.txt'}", file=sys.stderr)
            return 1
    print(report(read_raw(raw), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
