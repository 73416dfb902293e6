"""Instructions per result of a run's end alone: indexing the stream, report.json's copy.

A whole run under callgrind takes minutes and mixes the session end with everything else. This
takes the stream and report of one ``-p qbench`` run of ``overhead.py``'s generated suite at
each of two sizes, and counts, under ``valgrind --tool=callgrind``, one step of the session
end run alone on them (a fresh index each time; ``PYTHONHASHSEED=0``); per result is the
difference of the two counts over the difference of the sizes.

Usage::

    python benchmarks/session_end_cost.py --qbench-at old=/tmp/old --qbench-at new=. \\
        --steps read parse index copy rewrite rewrite-index
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from overhead import DEFAULT_WORK_DIR
from overhead import child_env
from overhead import generate_suite


STEP = r"""
import json, shutil, sys, tempfile
from pathlib import Path
from pytest_qbench.history.publish import history_patches
from pytest_qbench.history.session_end import record_run
try:  # what indexing reads (before: records)
    from pytest_qbench.history.session_end import index_items as index_records
except ImportError:
    from pytest_qbench.history.session_end import index_records
from pytest_qbench.report.store import iter_result_json, write_report_json

step, head, stream = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
report = json.loads(head.read_text())
work = Path(tempfile.mkdtemp(prefix="session-end-"))
histories = {}
if step == "read":
    for _ in iter_result_json(stream):
        pass
elif step == "parse":
    for _ in index_records(stream, []):
        pass
elif step in ("index", "copy"):
    histories = record_run(work, report, stream, [], 200).histories
elif step.startswith("rewrite"):  # the stream written again as the run writes it
    from pytest_qbench.report.store import StreamWriter
    again = work / "results.jsonl"
    writer = StreamWriter(again)
    for item in iter_result_json(stream):
        writer.write_stored(json.loads(item))
    writer.close()
    if step == "rewrite-index":  # then indexed as the session end does
        kept = getattr(writer, "written", None)  # what the writer kept (a checkout that keeps)
        extra = {} if kept is None else {"written": kept}
        histories = record_run(work, report, again, [], 200, **extra).histories
if step == "copy":  # indexing first gives the failing lines' history to splice in
    write_report_json(work / "report.json", report, stream, history_patches(histories))
shutil.rmtree(work)
"""
"""One step, run by the checkout first on ``PYTHONPATH``: ``copy`` counts indexing too
(subtract ``index``); ``rewrite`` writes the stream again through ``StreamWriter`` (each line
parsed first), ``rewrite-index`` then indexes it as the session end does, with what the writer
kept when the checkout keeps it (subtract ``rewrite``)."""


def stream_of(python: str, size: int, work_dir: Path) -> tuple[Path, Path]:
    """A run's report (its results left out) and stream, of the suite of ``size`` tests."""
    suite = generate_suite(work_dir, size, 100)
    out = work_dir / f"session-end-{size}"
    if not (out / "head.json").is_file():
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "qbench"]
        run_argv = [*argv, f"--qbench-dir={out}", "tests"]
        subprocess.run(run_argv, cwd=suite.path, env=child_env(), capture_output=True, check=False)
        run = next((out / "runs").iterdir())
        code = (
            "import json, sys; r = json.load(open(sys.argv[1])); r['results'] = []; "
            "json.dump(r, open(sys.argv[2], 'w'))"
        )
        subprocess.run([python, "-c", code, run / "report.json", out / "head.json"], check=True)
        (run / "results.jsonl").replace(out / "results.jsonl")
    return out / "head.json", out / "results.jsonl"


def count(
    python: str, checkout: str, step: str, head: Path, stream: Path, script: str = STEP
) -> int:
    """The instructions of one step on one stream (of ``script``, given the step and both
    paths)."""
    with tempfile.TemporaryDirectory() as where:
        profile = Path(where) / "callgrind.out"
        env = child_env(checkout)
        env["PYTHONHASHSEED"] = "0"
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"]
        argv += [python, "-c", script, step, str(head), str(stream)]
        subprocess.run(argv, cwd=where, env=env, capture_output=True, check=True)
        for line in profile.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"no totals for {step} of {checkout}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[200, 800])
    parser.add_argument("--qbench-at", action="append", required=True, metavar="NAME=CHECKOUT")
    parser.add_argument("--steps", nargs="+", default=["read", "parse", "index", "copy"])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    args = parser.parse_args(argv)
    small, large = sorted(args.sizes)
    streams = {size: stream_of(args.python, size, args.work_dir) for size in (small, large)}
    print("| checkout | step | per result |")
    print("|---|---|---:|")
    for spec in args.qbench_at:
        name, _, checkout = spec.partition("=")
        for step in args.steps:
            low, high = (count(args.python, checkout, step, *streams[s]) for s in (small, large))
            print(f"| {name} | {step} | {(high - low) / (large - small) / 1000:.1f} k |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
