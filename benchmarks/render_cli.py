"""How long ``qbench render`` and ``qbench --help`` take on a large stored report, old and new side by side.

Targets: ``qbench render REPORT.json --html OUT`` and ``qbench render RUN_DIR`` (rebuilding
``report.json`` and ``report.md``) of 50 000 results (5% failing with 19-frame tracebacks) each
under 2 s; ``qbench --help`` under 0.3 s.

Builds the results of ``html_render.py`` (``--results`` of them), writes them as a
``report.json`` and as a run directory's ``results.jsonl``, then runs each command ``--repeat``
times as ``python -m pytest_qbench ...`` with ``PYTHONPATH`` set to each checkout given
(``--checkout NAME=DIR``; this checkout by default), the checkouts' runs interleaved round by
round so that both see the same machine, and prints the median wall time (and CPU time) of each.
Each checkout's package is byte-compiled first (``compileall``), as installing it does: with
``PYTHONDONTWRITEBYTECODE`` set, a checkout never imported before would compile its modules on
every run. To compare with ``main``::

    git archive main | tar -x -C /tmp/old
    python benchmarks/render_cli.py --checkout old=/tmp/old --checkout new=.

Usage::

    python benchmarks/render_cli.py [--results 50000] [--repeat 5] [--checkout NAME=DIR ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from _measure import add_checkout_option
from _measure import checkouts_of
from _measure import compile_package
from _measure import measure
from html_render import build

from pytest_qbench.report import store
from pytest_qbench.report.shapes import new


TARGETS_S = {
    "--help": 0.3,
    "render --html": 2.0,
    "render RUN_DIR": 2.0,
    "render LOOSE_RUN_DIR": 2.0,
    "render -o report.md": 2.0,
}
"""``RUN_DIR`` is in a run store (``<dir>/runs/<id>``), so the rebuilt run is indexed too;
``LOOSE_RUN_DIR`` is a copy of it outside any run store: the reports alone."""


def write_inputs(count: int, work: Path) -> tuple[Path, Path]:
    """``report.json`` and a run directory holding only ``results.jsonl``, of ``count`` results."""
    report, results = build(count)
    report_json = work / "report.json"
    report["results"] = results
    store.write_report_json(report_json, report, None)
    run_dir = work / "runs" / "bench-run"
    run_dir.mkdir(parents=True)
    report["results"] = []
    stream = store.StreamWriter(run_dir / store.STREAM_NAME)
    stream.write_start(
        new(
            "StreamStart", meta=report["meta"], run=report["run"], environment=report["environment"]
        )
    )
    for result in results:
        stream.write_result(result)  # type: ignore[arg-type]
    stream.write_end(new("StreamEnd", run=report["run"], environment=report["environment"]))
    stream.close()
    shutil.copytree(run_dir, work / "loose-run")
    return report_json, run_dir


def commands(report_json: Path, run_dir: Path, out: Path) -> dict[str, list[str]]:
    """The ``qbench`` arguments of each step."""
    return {
        "--help": ["--help"],
        "render --html": ["render", str(report_json), "--html", str(out / "report.html")],
        "render RUN_DIR": ["render", str(run_dir)],
        "render LOOSE_RUN_DIR": ["render", str(out / "loose-run")],
        "render -o report.md": ["render", str(report_json), "-o", str(out / "report.md")],
    }


def run_once(checkout: Path, argv: list[str], log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``qbench`` command importing the package from ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    with log.open("wb") as output:
        usage = measure([sys.executable, "-m", "pytest_qbench", *argv], output=output, env=env)
    if usage.exit_code != 0:
        raise RuntimeError(f"qbench {' '.join(argv)} exited {usage.exit_code}: {log.read_text()}")
    return usage.wall_s, usage.cpu_s


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=5)
    add_checkout_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the Markdown table; exit 1 when the last checkout misses a target."""
    args = parse_args(argv)
    checkouts = checkouts_of(args.checkout)
    work = Path(tempfile.mkdtemp(prefix="qbench-render-cli-"))
    try:
        for _name, checkout in checkouts:
            compile_package(checkout)
        report_json, run_dir = write_inputs(args.results, work)
        steps = commands(report_json, run_dir, work)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _round in range(args.repeat):
            for step, step_argv in steps.items():
                for name, checkout in checkouts:
                    got = run_once(checkout, step_argv, work / "log")
                    times.setdefault((step, name), []).append(got)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = f"{args.results:,}".replace(",", " ")
    print(f"{size} results, median of {args.repeat}, wall s (CPU s):\n")
    names = [name for name, _ in checkouts]
    print("| step | " + " | ".join(names) + " | target |")
    print("|---|" + "---:|" * len(names) + "---|")
    missed = False
    for step in steps:
        cells = []
        for name in names:
            wall = statistics.median(t[0] for t in times[(step, name)])
            cpu = statistics.median(t[1] for t in times[(step, name)])
            cells.append(f"{wall:.2f} ({cpu:.2f})")
        last = statistics.median(t[0] for t in times[(step, names[-1])])
        missed |= last > TARGETS_S[step]
        print(f"| `qbench {step}` | " + " | ".join(cells) + f" | < {TARGETS_S[step]} s |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
