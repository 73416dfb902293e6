"""Where a run's CPU time goes, phase by phase: plain pytest against reporters, side by side.

Runs ``overhead.py``'s generated suite with the ``_phase_clock`` plugin loaded in every
configuration, which writes the process's own user and system CPU time, minor page faults and
the garbage collector's time at the edges of the run's phases (start-up, collection, the tests,
the session's end, exit; qbench's ``finish`` within the session's end). Rounds are interleaved,
every configuration once per round in a rotated order; the table is the median of each phase
over the rounds, and each configuration's extra over plain pytest's of the same round (median).

Usage::

    python benchmarks/phase_times.py --size 10000 --rounds 5 --configs plain junitxml \\
        --qbench-at old=/tmp/old --qbench-at new=.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from overhead import CONFIGS
from overhead import DEFAULT_WORK_DIR
from overhead import EXPECTED_EXIT
from overhead import Config
from overhead import byte_compile
from overhead import child_env
from overhead import command
from overhead import generate_suite
from overhead import revision_configs


HERE = Path(__file__).resolve().parent
# (phase, first mark, last mark)
PHASES = (
    ("start", None, "collect_start"),
    ("collect", "collect_start", "collect_end"),
    ("tests", "tests_start", "tests_end"),
    ("finish", "finish_start", "finish_end"),
    ("of it pytest's failures", "failures_start", "failures_end"),
    ("of it qbench's finish", "qbench_finish_start", "qbench_finish_end"),
    ("exit", "finish_end", "exit"),
    ("whole", None, "exit"),
)


def phases(marks: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each phase's user and system seconds, minor faults and GC seconds, from the marks."""
    zero = {"user": 0.0, "sys": 0.0, "minflt": 0.0, "gc_s": 0.0, "gc_gen2": 0.0}
    out = {}
    for name, first, last in PHASES:
        if last not in marks or (first is not None and first not in marks):
            continue
        start = marks[first] if first is not None else zero
        out[name] = {key: marks[last][key] - start[key] for key in zero}
    return out


def run_once(python: str, config: Config, suite_dir: Path, out: Path) -> dict[str, Any]:
    """One run of ``config`` with the phase clock; its phases."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    clock = out / "phase-clock.json"
    argv = command(python, config, out)
    argv[3:3] = ["-p", "_phase_clock"]  # after ``python -m pytest``
    env = child_env(os.pathsep.join(p for p in (config.pythonpath, str(HERE)) if p))
    env["PHASE_CLOCK_OUT"] = str(clock)
    done = subprocess.run(argv, cwd=suite_dir, env=env, capture_output=True, check=False)
    if done.returncode != EXPECTED_EXIT:
        tail = done.stdout.decode(errors="replace")[-2000:]
        raise SystemExit(f"{config.name} exited {done.returncode}:\n{tail}")
    return phases(json.loads(clock.read_text()))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--configs", nargs="+", default=["plain", "qbench"])
    parser.add_argument("--qbench-at", action="append", default=[], metavar="NAME=CHECKOUT")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument("--json", type=Path, help="Write every run's phases here")
    return parser.parse_args(argv)


def table(runs: dict[str, list[dict[str, dict[str, float]]]]) -> str:
    """The medians of each phase's user+sys CPU, and the extra over plain of the same round
    (with the extra GC seconds and minor page faults in brackets)."""
    names = list(runs)
    lines = [
        "| phase | "
        + " | ".join(f"{n} CPU s" for n in names)
        + " | "
        + " | ".join(f"{n} extra s (GC s, faults)" for n in names[1:])
        + " |",
        "|---|" + "---:|" * (2 * len(names) - 1),
    ]

    def cpu(phase_of: dict[str, float]) -> float:
        return phase_of["user"] + phase_of["sys"]

    for phase, _, _ in PHASES:
        has = {n: all(phase in r for r in runs[n]) for n in names}
        cells = [
            f"{statistics.median(cpu(r[phase]) for r in runs[n]):.3f}" if has[n] else "–"
            for n in names
        ]
        base = runs[names[0]]
        for n in names[1:]:
            if not (has[n] and has[names[0]]):
                cells.append("–")
                continue
            pairs = list(zip(runs[n], base, strict=True))
            extra = statistics.median(cpu(a[phase]) - cpu(b[phase]) for a, b in pairs)
            gc_s = statistics.median(a[phase]["gc_s"] - b[phase]["gc_s"] for a, b in pairs)
            faults = statistics.median(a[phase]["minflt"] - b[phase]["minflt"] for a, b in pairs)
            cells.append(f"{extra:+.3f} ({gc_s:+.3f}, {faults:+.0f})")
        lines.append(f"| {phase} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configs = [c for c in CONFIGS if c.name in args.configs] + revision_configs(args.qbench_at)
    byte_compile(args.python, configs)
    suite = generate_suite(args.work_dir.resolve(), args.size, 100)
    out_root = args.work_dir.resolve() / f"phase-times-{args.size}"
    for config in configs:  # the suite's .pyc files, each checkout's template cache
        run_once(args.python, config, suite.path, out_root / "warmup" / config.name)
    runs: dict[str, list[dict[str, dict[str, float]]]] = {c.name: [] for c in configs}
    for round_no in range(args.rounds):
        order = configs[round_no % len(configs) :] + configs[: round_no % len(configs)]
        for config in order:
            phases_of = run_once(args.python, config, suite.path, out_root / config.name)
            runs[config.name].append(phases_of)
            whole = phases_of["whole"]
            print(
                f"round {round_no + 1} {config.name}: {whole['user'] + whole['sys']:.2f} s, "
                f"load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
                flush=True,
            )
        if args.json:
            args.json.write_text(json.dumps(runs, indent=1))
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
