"""Instructions per test and fixed instructions of a reporter, counted by callgrind.

CPU time on a shared machine swings with everybody else's load; the number of instructions a
run executes does not. This runs the generated suite of ``overhead.py`` at two sizes under
``valgrind --tool=callgrind``, once per configuration and size, and fits a line through the
two totals: its slope is the marginal cost of one test, its intercept the fixed cost (start-up,
imports, writing the reports).

Usage::

    python benchmarks/callgrind_cost.py --sizes 200 800 --configs plain junitxml qbench
    python benchmarks/callgrind_cost.py --qbench-at old=/tmp/old   # qbench of another checkout
    python benchmarks/callgrind_cost.py --cache-sim --predict 10000  # estimated cycles too

``--cache-sim`` also simulates this machine's caches (valgrind's ``--cache-sim=yes``, the
cache sizes of ``CACHES``) and gives each configuration's **estimated cycles**, valgrind's own
formula (KCachegrind's "Cycle Estimation"; what ``cg_annotate`` users call the cost of a miss)::

    cycles = Ir + 10 * (I1mr + D1mr + D1mw) + 100 * (ILmr + DLmr + DLmw)

instructions, plus 10 for each miss of a first-level cache (instructions, data read, data
written) and 100 for each miss of the last level (here the 2 MiB L2): instructions that miss the
caches cost more than their count, and a machine's load does not change the count of either.
``--predict N`` gives the ratio to plain pytest those counts predict for N tests, pytest's own
summary of the failures added to every configuration alike (``SUMMARY_VISIT``).

``--batch-seconds S`` (measuring only, never a product setting) sets the timer of the qbench
stream's batches (``store.BATCH_SECONDS``, 0.1 s) to ``S`` in every qbench configuration's run,
by a plugin of this script's (``-p qbench_batch_seconds``, its ``pytest_configure``): under
valgrind a test takes about 50 times as long, so the 0.1 s timer would cut nearly every batch
to one or two results, which a run outside valgrind does not do; with ``S`` of 30, the batches
hold 64 results as they do at full speed. Its fixed cost (+18 M instructions: the plugin) is the
same for every qbench configuration and out of the marginal cost a test.

``--hash-seed N`` runs every configuration with ``PYTHONHASHSEED=N`` (0 unless given). A
build's marginal count moves by 10 to 30 k instructions a test with the process's memory
layout alone (CPython's type attribute cache is indexed by the names' addresses): another seed
or a work directory of another length draws another layout; compare builds over several.
"""

from __future__ import annotations

import argparse
import json
import os
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


# This machine's caches (``lscpu``): 32 KiB 8-way L1i, 48 KiB 12-way L1d, a 2 MiB 16-way L2 a
# core taken as the last level (its L3 is the host's, shared); 64-byte lines.
CACHES = ["--I1=32768,8,64", "--D1=49152,12,64", "--LL=2097152,16,64"]
# An estimated cycle a first-level miss and a last-level miss cost (valgrind's formula).
L1_MISS = 10
LL_MISS = 100
# pytest's summary of the failures visits, for each failing test, every passing setup and
# teardown report of the session: failures x 2 tests visits, a report each 2 396 instructions,
# 10.0 D1 and 9.0 LL misses (``failure_summary_cost.py --count``, 20 000 reports). The
# generated suite fails one test in 20, so a run of T tests makes T * T / 10 visits.
SUMMARY_VISIT = {"Ir": 2396.0, "D1mr": 10.0, "DLmr": 9.0}
SUMMARY_VISITS_A_SQUARED_TEST = 1 / 10


def estimated_cycles(events: dict[str, float]) -> float:
    """Valgrind's estimate of the cycles behind these events (0 for the events not counted)."""
    first = sum(events.get(name, 0) for name in ("I1mr", "D1mr", "D1mw"))
    last = sum(events.get(name, 0) for name in ("ILmr", "DLmr", "DLmw"))
    return events.get("Ir", 0) + L1_MISS * first + LL_MISS * last


def read_totals(profile: Path) -> dict[str, int]:
    """Every event's total in a callgrind profile (``Ir``, and the misses with ``--cache-sim``)."""
    names: list[str] = []
    for line in profile.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        if line.startswith(("summary:", "totals:")):
            return dict(zip(names, map(int, line.split()[1:]), strict=True))
    raise SystemExit(f"no totals in {profile}")


BATCH_PLUGIN = "qbench_batch_seconds"
BATCH_PLUGIN_SOURCE = '''"""benchmarks/callgrind_cost.py --batch-seconds: the qbench stream's batch timer."""

import os


def pytest_configure(config):
    from pytest_qbench.report import store

    store.BATCH_SECONDS = float(os.environ["QBENCH_BENCH_BATCH_SECONDS"])
'''


def instructions(
    python: str,
    config: Config,
    suite_dir: Path,
    out: Path,
    *,
    cache_sim: bool = False,
    batch_seconds: float | None = None,
    hash_seed: int = 0,
) -> dict[str, int]:
    """The events (``Ir``, and with ``cache_sim`` the caches' misses) of one pytest run of
    ``config`` on the suite in ``suite_dir`` (``batch_seconds``: the qbench stream's batch
    timer, in a qbench configuration; ``hash_seed``: the run's ``PYTHONHASHSEED``)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    profile = out / "callgrind.out"
    pytest_argv = command(python, config, out)
    env = child_env(config.pythonpath)
    if batch_seconds is not None and config.name.startswith("qbench"):
        plugin_dir = suite_dir.parent / "batch-seconds-plugin"
        plugin_dir.mkdir(exist_ok=True)
        (plugin_dir / f"{BATCH_PLUGIN}.py").write_text(BATCH_PLUGIN_SOURCE)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (env.get("PYTHONPATH"), str(plugin_dir)) if p
        )
        env["QBENCH_BENCH_BATCH_SECONDS"] = str(batch_seconds)
        pytest_argv[-1:-1] = ["-p", BATCH_PLUGIN]
    argv = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={profile}",
        *(["--cache-sim=yes", *CACHES] if cache_sim else []),
        *pytest_argv,
    ]
    env["PYTHONHASHSEED"] = str(hash_seed)  # the same sets and dicts in every run
    done = subprocess.run(argv, cwd=suite_dir, env=env, capture_output=True, check=False)
    if done.returncode not in (0, EXPECTED_EXIT):  # a small suite may hold no failing test
        tail = done.stdout.decode(errors="replace")[-2000:]
        raise SystemExit(f"{config.name} exited {done.returncode}:\n{tail}")
    return read_totals(profile)


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
    parser.add_argument(
        "--hash-seed", type=int, default=0, help="PYTHONHASHSEED of every run (0 unless given)"
    )
    parser.add_argument(
        "--cache-sim", action="store_true", help="Simulate the caches: estimated cycles too"
    )
    parser.add_argument(
        "--predict", type=int, metavar="N", help="The ratios to plain the counts predict at N tests"
    )
    parser.add_argument(
        "--batch-seconds",
        type=float,
        metavar="S",
        help="The qbench stream's batch timer in qbench's runs (measuring only; see above)",
    )
    parser.add_argument("--json", type=Path)
    return parser.parse_args(argv)


def fit(by_size: dict[int, dict[str, int]], small: int, large: int) -> dict[str, dict[str, float]]:
    """Each event's slope (a test) and intercept (fixed) through the counts at two sizes, and
    the estimated cycles' (``Cest``) when the caches were simulated."""
    lines: dict[str, dict[str, float]] = {}
    for name in by_size[small]:
        slope = (by_size[large][name] - by_size[small][name]) / (large - small)
        lines[name] = {"slope": slope, "fixed": by_size[small][name] - slope * small}
    if "D1mr" in lines:
        lines["Cest"] = {
            part: estimated_cycles({name: line[part] for name, line in lines.items()})
            for part in ("slope", "fixed")
        }
    return lines


def predicted(
    lines: dict[str, dict[str, float]], event: str, small: int, large: int, n: int
) -> float:
    """``event``'s count at ``n`` tests: the line, plus the visits of pytest's summary of the
    failures the line leaves out (they grow as the square of the tests)."""
    visits = [SUMMARY_VISITS_A_SQUARED_TEST * t * t for t in (small, large, n)]
    on_line = visits[0] + (n - small) * (visits[1] - visits[0]) / (large - small)
    visit = estimated_cycles(SUMMARY_VISIT) if event == "Cest" else SUMMARY_VISIT.get(event, 0.0)
    return lines[event]["fixed"] + lines[event]["slope"] * n + (visits[2] - on_line) * visit


def print_tables(
    lines: dict[str, dict[str, dict[str, float]]], small: int, large: int, predict: int | None
) -> None:
    """The marginal and fixed instructions (and estimated cycles) of each configuration, over
    plain pytest's, and with ``predict`` the ratios to plain at that many tests."""
    plain = lines.get("plain")
    events = ["Ir", "Cest"] if "Cest" in next(iter(lines.values())) else ["Ir"]
    label = {"Ir": "instructions", "Cest": "estimated cycles"}
    for event in events:
        print(
            f"\n| config | marginal {label[event]} per test | over plain | fixed | fixed over plain |"
        )
        print("|---|---:|---:|---:|---:|")
        for name, line in lines.items():
            slope, fixed = line[event]["slope"], line[event]["fixed"]
            over = fixed_over = "–"
            if plain and name != "plain":
                base = plain[event]["slope"]
                over = f"{slope / base - 1:+.1%} ({(slope - base) / 1e3:+.1f} k)"
                fixed_over = f"{(fixed - plain[event]['fixed']) / 1e9:+.3f} G"
            print(f"| {name} | {slope / 1e6:.3f} M | {over} | {fixed / 1e9:.3f} G | {fixed_over} |")
    if "Cest" in events:
        print("\n| config | I1 misses a test | D1 misses a test | LL misses a test |")
        print("|---|---:|---:|---:|")
        for name, line in lines.items():
            first = line["D1mr"]["slope"] + line["D1mw"]["slope"]
            last = sum(line[e]["slope"] for e in ("ILmr", "DLmr", "DLmw"))
            print(f"| {name} | {line['I1mr']['slope']:,.0f} | {first:,.0f} | {last:,.0f} |")
    if predict and plain:
        print(
            f"\n| config | predicted at {predict} tests: "
            + " | ".join(f"{label[e]} | ratio" for e in events)
            + " |"
        )
        print("|---|" + "---:|---:|" * len(events))
        for name, line in lines.items():
            cells = []
            for event in events:
                count = predicted(line, event, small, large, predict)
                base = predicted(plain, event, small, large, predict)
                cells += [f"{count / 1e9:.1f} G", f"{count / base:.3f}x"]
            print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configs = [c for c in CONFIGS if c.name in args.configs]
    configs += revision_configs(args.qbench_at)
    small, large = sorted(args.sizes)
    counts: dict[str, dict[int, dict[str, int]]] = {}
    runs = []
    for size in (small, large):
        suite = generate_suite(args.work_dir, size, 100)
        runs += [(config, size, suite.path) for config in configs]
    byte_compile(args.python, configs)
    warm_up(args.python, generate_suite(args.work_dir, small, 100).path, configs)
    warm_up(args.python, generate_suite(args.work_dir, large, 100).path, [])

    def run(config: Config, size: int, suite_dir: Path) -> None:
        out = args.work_dir / f"callgrind-{size}" / config.name
        total = instructions(
            args.python,
            config,
            suite_dir,
            out,
            cache_sim=args.cache_sim,
            batch_seconds=args.batch_seconds,
            hash_seed=args.hash_seed,
        )
        counts.setdefault(config.name, {})[size] = total
        print(f"{config.name} at {size}: {total}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:  # counts do not depend on the machine's load
        for future in [pool.submit(run, *spec) for spec in runs]:
            future.result()
    lines = {c.name: fit(counts[c.name], small, large) for c in configs}
    print_tables(lines, small, large, args.predict)
    if args.json:
        rows = {name: {"lines": lines[name], "counts": counts[name]} for name in lines}
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
