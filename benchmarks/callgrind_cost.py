"""Instructions per test and fixed instructions of a reporter, counted by callgrind.

CPU time on a shared machine swings with everybody else's load; the number of instructions a
run executes does not. This runs the generated suite of ``overhead.py`` at two sizes under
``valgrind --tool=callgrind``, once per configuration and size, and fits a line through the
two totals: its slope is the marginal cost of one test, its intercept the fixed cost (start-up,
imports, writing the reports).

Usage::

    python benchmarks/callgrind_cost.py --sizes 200 800 --configs plain junitxml qbench
    python benchmarks/callgrind_cost.py --qbench-at old=/tmp/old   # qbench of another checkout
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from overhead import CONFIGS
from overhead import DEFAULT_WORK_DIR
from overhead import EXPECTED_EXIT
from overhead import Config
from overhead import byte_compile
from overhead import child_env
from overhead import command
from overhead import generate_suite
from overhead import revision_configs


def instructions(python: str, config: Config, suite_dir: Path, out: Path) -> int:
    """The instructions (``Ir``) of one pytest run of ``config`` on the suite in ``suite_dir``."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    profile = out / "callgrind.out"
    argv = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={profile}",
        *command(python, config, out),
    ]
    env = child_env(config.pythonpath)
    env["PYTHONHASHSEED"] = "0"  # the same sets and dicts in every run
    done = subprocess.run(argv, cwd=suite_dir, env=env, capture_output=True, check=False)
    if done.returncode not in (0, EXPECTED_EXIT):  # a small suite may hold no failing test
        tail = done.stdout.decode(errors="replace")[-2000:]
        raise SystemExit(f"{config.name} exited {done.returncode}:\n{tail}")
    for line in profile.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {profile}")


def warm_up(python: str, suite_dir: Path, configs: Sequence[Config]) -> None:
    """One run of plain pytest and of each qbench, not counted: pytest writes the suite's
    rewritten modules (``.pyc``), and Jinja's bytecode cache gets each checkout's compiled
    report.md template (its key holds the template's path), as any run after the first finds
    them. Without it, the first run of a checkout counts compiling the template (0.5 G)."""
    warm = [c for c in CONFIGS if c.name == "plain"]
    warm += [c for c in configs if c.name.startswith("qbench")]
    for config in warm:
        out = suite_dir.parent / f"warmup-{suite_dir.name}" / config.name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        argv = command(python, config, out)
        env = child_env(config.pythonpath)
        subprocess.run(argv, cwd=suite_dir, env=env, capture_output=True, check=False)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[200, 800])
    parser.add_argument("--configs", nargs="+", default=["plain", "junitxml", "qbench"])
    parser.add_argument("--qbench-at", action="append", default=[], metavar="NAME=CHECKOUT")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument("--jobs", type=int, default=1, help="runs at the same time")
    parser.add_argument("--json", type=Path)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configs = [c for c in CONFIGS if c.name in args.configs]
    configs += revision_configs(args.qbench_at)
    small, large = sorted(args.sizes)
    counts: dict[str, dict[int, int]] = {}
    runs = []
    for size in (small, large):
        suite = generate_suite(args.work_dir, size, 100)
        runs += [(config, size, suite.path) for config in configs]
    byte_compile(args.python, configs)
    warm_up(args.python, generate_suite(args.work_dir, small, 100).path, configs)
    warm_up(args.python, generate_suite(args.work_dir, large, 100).path, [])

    def run(config: Config, size: int, suite_dir: Path) -> None:
        out = args.work_dir / f"callgrind-{size}" / config.name
        total = instructions(args.python, config, suite_dir, out)
        counts.setdefault(config.name, {})[size] = total
        print(f"{config.name} at {size}: {total:,}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:  # counts do not depend on the machine's load
        for future in [pool.submit(run, *spec) for spec in runs]:
            future.result()
    print("| config | marginal instructions per test | over plain | fixed instructions |")
    print("|---|---:|---:|---:|")
    plain = counts.get("plain")
    base = (plain[large] - plain[small]) / (large - small) if plain else None
    rows = {}
    for name in [c.name for c in configs]:
        by_size = counts[name]
        slope = (by_size[large] - by_size[small]) / (large - small)
        fixed = by_size[small] - slope * small
        over = f"{slope / base - 1:+.1%}" if base and name != "plain" else "–"
        rows[name] = {"slope": slope, "fixed": fixed, "counts": by_size}
        print(f"| {name} | {slope / 1e6:.2f} M | {over} | {fixed / 1e9:.2f} G |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
