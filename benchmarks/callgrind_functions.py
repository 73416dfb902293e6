"""Where a test's marginal instructions go, by C function, between two configurations.

``callgrind_cost.py`` leaves one callgrind profile a configuration and suite size
(``<work dir>/callgrind-<size>/<config>/callgrind.out``). This reads the profiles of two
configurations at the two sizes with ``callgrind_annotate`` and prints, for each C function,
its instructions a test in the first less those in the second: each function's count at the
larger size less at the smaller, over the difference in tests. On CPython 3.11 all Python runs
inside ``_PyEval_EvalFrameDefault``; ``bytecode_profile.py`` gives the function-level view of
that part.

Usage::

    python benchmarks/callgrind_functions.py --work-dir /tmp/cg qbench@new qbench@old
    python benchmarks/callgrind_functions.py --work-dir /tmp/cg qbench@new plain --top 60
    python benchmarks/callgrind_functions.py --event Cest qbench@new plain  # --cache-sim's

``--event`` ranks by another event of the profiles (``D1mr``, ``DLmr``... when
``callgrind_cost.py --cache-sim`` made them), or by ``Cest``, the estimated cycles of
``callgrind_cost.estimated_cycles``; the table then shows each function's misses a test too.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from callgrind_cost import estimated_cycles
from overhead import DEFAULT_WORK_DIR


CELL = r"(?:([\d,]+) \(\s*[\d.]+%\)|(0|\.))\s+"
"""One event's column of ``callgrind_annotate``: a count and its share, or 0 (``.``)."""
MISSES = ("I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def events_of(profile: Path) -> list[str]:
    """The events a profile recorded (``Ir``; the misses with ``--cache-sim``)."""
    with profile.open() as lines:
        for line in lines:
            if line.startswith("events:"):
                return line.split()[1:]
    raise SystemExit(f"no events in {profile}")


def by_function(profile: Path) -> dict[str, Counter[str]]:
    """Each event's count by C function (its own, not its callees'), recursion levels folded."""
    events = events_of(profile)
    argv = ["callgrind_annotate", "--auto=no", "--threshold=100", f"--show={','.join(events)}"]
    text = subprocess.run([*argv, str(profile)], capture_output=True, text=True, check=True).stdout
    return parse_functions(text, events)


def parse_functions(text: str, events: Sequence[str]) -> dict[str, Counter[str]]:
    """``callgrind_annotate``'s table of functions (``text``, its columns ``events``) as each
    event's count by C function, every event kept (a zero too)."""
    row = re.compile(r"\s*" + CELL * len(events) + r"(\S.*?)(?: \[.*\])?$")
    counts: dict[str, Counter[str]] = {}
    for line in text.splitlines():
        found = row.match(line)
        if found is None or "PROGRAM TOTALS" in line:
            continue
        name = found.group(2 * len(events) + 1).split(":", 1)[-1].split("'")[0]
        function = counts.setdefault(name, Counter())
        for index, event in enumerate(events):
            function[event] += int((found.group(2 * index + 1) or "0").replace(",", ""))
    return counts


def per_test(work_dir: Path, config: str, small: int, large: int) -> dict[str, dict[str, float]]:
    """Each C function's events a test in ``config``'s runs (and ``Cest`` with the misses)."""
    at_large = by_function(work_dir / f"callgrind-{large}" / config / "callgrind.out")
    at_small = by_function(work_dir / f"callgrind-{small}" / config / "callgrind.out")
    rows: dict[str, dict[str, float]] = {}
    for name in at_large.keys() | at_small.keys():
        large_counts = at_large.get(name, Counter())
        small_counts = at_small.get(name, Counter())
        row = {
            event: (large_counts[event] - small_counts[event]) / (large - small)
            for event in large_counts.keys() | small_counts.keys()
        }
        if "D1mr" in row:
            row["Cest"] = estimated_cycles(row)
        rows[name] = row
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", help="a configuration's name (qbench@new)")
    parser.add_argument("second", help="the one it is compared with (qbench@old, plain)")
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument("--sizes", type=int, nargs=2, default=[200, 800])
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--event", default="Ir", help="Rank by this event (Cest: estimated cycles)")
    args = parser.parse_args(argv)
    small, large = sorted(args.sizes)
    first = per_test(args.work_dir, args.first, small, large)
    second = per_test(args.work_dir, args.second, small, large)
    diff: dict[str, dict[str, float]] = {}
    for name in first | second:
        one, other = first.get(name, {}), second.get(name, {})
        diff[name] = {event: one.get(event, 0.0) - other.get(event, 0.0) for event in one | other}
    event = args.event
    total = sum(row.get(event, 0.0) for row in diff.values())
    print(f"{args.first} less {args.second}: {total / 1e3:+.1f} k {event} a test")
    misses = [m for m in MISSES if any(m in row for row in diff.values())]
    columns = ["Ir", *misses, "Cest"] if misses else ["Ir"]
    print("| C function | " + " | ".join(f"{c} a test" for c in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    ranked = sorted(diff.items(), key=lambda item: -abs(item[1].get(event, 0.0)))
    for name, row in ranked[: args.top]:
        cells = [
            f"{row.get(c, 0.0) / 1e3:+.2f} k" if c in ("Ir", "Cest") else f"{row.get(c, 0.0):+.1f}"
            for c in columns
        ]
        print(f"| `{name}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
