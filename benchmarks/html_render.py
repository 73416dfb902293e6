"""How long the HTML report takes to render, and how large it is, for large runs.

Targets (issue 15): 50 000 results rendered in under 2 s, the file under 15 MB.

Builds synthetic result records (1 000, 10 000 and 50 000 by default; 5% failing or erroring
with 19-frame tracebacks and captured output, skips with shared reasons, xfails, flaky reruns),
then times ``render_html`` on them (the embedded data, the view in the same pass, the charts, the
template) and prints the median of ``--repeat`` rounds and the page's size. ``--keep DIR`` writes
each page to ``DIR/report-N.html`` (to open in a browser).

Usage::

    python benchmarks/html_render.py [--results 1000 10000 50000] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import Any

from render_md import make_failure

from pytest_qbench._version import __version__
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.html import render_html
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import new


FAILING = 0.05
TARGET_S = 2.0
TARGET_BYTES = 15 * 1000 * 1000
SKIP_REASONS = ("needs a GPU", "backend unavailable", "slow test; run with --runslow")


def make_result(index: int, rng: random.Random) -> dict[str, Any]:
    """One result record: 4% failed, 1% errors, 5% skipped, 1% xfailed, 1% flaky (passed after
    one rerun), the rest passed."""
    module = index // 100
    file = f"tests/pkg_{module // 50:02d}/test_mod_{module:04d}.py"
    name = f"test_case_{index}" if index % 10 else f"TestGroup.test_method[{index % 7}-x]"
    draw = rng.random()
    duration = round(rng.expovariate(1 / 0.004), 6)
    result: Any = new(
        "TestResult",
        nodeid=f"{file}::{name}",
        test_name=name,
        file=file,
        line=10 + index % 90,
        outcome="passed",
        duration=duration,
        counted_as=["passed"],
    )
    if draw < FAILING:
        outcome = "failed" if draw < 0.04 else "error"
        failure = make_failure(index, file, "call" if outcome == "failed" else "setup")
        result.update(
            outcome=outcome,
            counted_as=[outcome],
            failure=failure.model_dump(mode="json"),
            captured=new("Captured", stdout=f"module {module} test {index}: about to descend\n"),
        )
    elif draw < 0.10:
        result.update(outcome="skipped", counted_as=["skipped"], reason=SKIP_REASONS[index % 3])
    elif draw < 0.11:
        result.update(outcome="xfailed", counted_as=["xfailed"], reason=f"known bug #{index % 40}")
    elif draw < 0.12:
        attempt = new(
            "Attempt",
            outcome="failed",
            duration=duration,
            failure=make_failure(index, file, "call").model_dump(mode="json"),
        )
        result.update(reruns=1, attempts=[attempt], flaky=True, counted_as=["rerun", "passed"])
    return dict(result)


def build(count: int, seed: int = 0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A report record (summary from the results) and its results."""
    rng = random.Random(seed)
    results = [make_result(i, rng) for i in range(count)]
    started = datetime(2026, 1, 1, tzinfo=timezone.utc)
    report: Any = new(
        "TestReport",
        meta=new("ReportMeta", qbench_version=__version__, created_at=iso(started)),
        run=new(
            "RunMeta",
            run_id=f"bench-html-{count}",
            started_at=iso(started),
            completed_at=iso(started + timedelta(seconds=count * 0.005)),
            exit_code=1,
            cwd="/bench",
            command=["pytest"],
        ),
        environment=new(
            "Environment",
            python="3.12.0",
            implementation="CPython",
            platform="Linux",
            pytest_version="8.3",
            qbench_version=__version__,
        ),
        summary=aggregate(results).summary(count * 0.005),
    )
    return report, results


def measure(count: int, repeat: int, keep: Path | None) -> dict[str, float]:
    """Median render seconds and the page's bytes for ``count`` results."""
    report, results = build(count)
    times, text = [], ""
    for _ in range(repeat):
        started = time.perf_counter()
        text = render_html(report, iter(results))
        times.append(time.perf_counter() - started)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"report-{count}.html").write_text(text, encoding="utf-8")
    return {"seconds": statistics.median(times), "bytes": len(text.encode("utf-8"))}


def main(argv: list[str] | None = None) -> int:
    """Print one line per size; exit 1 when 50 000 results miss a target."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    missed = False
    print(f"{'results':>8}  {'render (median)':>16}  {'file size':>10}")
    for count in args.results:
        got = measure(count, args.repeat, args.keep)
        print(f"{count:>8}  {got['seconds']:>15.3f}s  {got['bytes'] / 1e6:>8.2f} MB")
        if count >= 50000:
            missed |= got["seconds"] > TARGET_S or got["bytes"] > TARGET_BYTES
    print(f"targets at 50 000: render < {TARGET_S:.0f} s, file < {TARGET_BYTES / 1e6:.0f} MB")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
