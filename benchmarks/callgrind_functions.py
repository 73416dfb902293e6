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
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from overhead import DEFAULT_WORK_DIR


ROW = re.compile(r"\s*([\d,]+) \([^)]*\)\s+(\S.*?)(?: \[.*\])?$")


def by_function(profile: Path) -> Counter[str]:
    """Instructions by C function (its own, not its callees'), recursion levels folded."""
    argv = ["callgrind_annotate", "--threshold=100", str(profile)]
    text = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        found = ROW.match(line)
        if found is None or "PROGRAM TOTALS" in line:
            continue
        name = found.group(2).split(":", 1)[-1].split("'")[0]
        counts[name] += int(found.group(1).replace(",", ""))
    return counts


def per_test(work_dir: Path, config: str, small: int, large: int) -> dict[str, float]:
    """Each C function's instructions a test in ``config``'s runs."""
    at_large = by_function(work_dir / f"callgrind-{large}" / config / "callgrind.out")
    at_small = by_function(work_dir / f"callgrind-{small}" / config / "callgrind.out")
    return {
        name: (at_large[name] - at_small[name]) / (large - small) for name in at_large | at_small
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", help="a configuration's name (qbench@new)")
    parser.add_argument("second", help="the one it is compared with (qbench@old, plain)")
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument("--sizes", type=int, nargs=2, default=[200, 800])
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)
    small, large = sorted(args.sizes)
    first = per_test(args.work_dir, args.first, small, large)
    second = per_test(args.work_dir, args.second, small, large)
    diff = {name: first.get(name, 0.0) - second.get(name, 0.0) for name in first | second}
    print(f"{args.first} less {args.second}: {sum(diff.values()) / 1e3:+.1f} k a test")
    print("| C function | instructions a test |")
    print("|---|---:|")
    for name, value in sorted(diff.items(), key=lambda item: -abs(item[1]))[: args.top]:
        print(f"| `{name}` | {value / 1e3:+.2f} k |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
