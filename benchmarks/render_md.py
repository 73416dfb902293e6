"""How long the built-in Markdown report takes for a large run (target: under 1 s for 50 000).

Builds a synthetic ``TestReport`` of N results in memory (mostly passed; ~2% failed with 19-frame
tracebacks and captured output, errors, skips with shared and unique reasons, xfails, xpasses,
flaky reruns), then times:

- ``render(report)``: the built-in Markdown, as ``pytest_qbench.report.render.render`` does it (a fresh
  Jinja environment, the aggregation of every result, the template), median of ``--repeat`` runs;
- ``render(record)``, the same report as plain JSON data (``model_dump(mode="json")``), which is
  what the pytest plugin passes since it works on records (skipped when ``render`` takes models
  only);
- its two halves: ``aggregate(...).view()`` alone, and the template alone with that view (on the
  record when ``render`` takes one);
- ``report.model_dump_json()`` and ``TestReport.model_validate_json()`` (what ``qbench render``
  has to load);
- ``qbench render report.json -o report.md`` and ``qbench render RUN_DIR`` (rebuilding
  ``report.json`` and ``report.md`` from ``results.jsonl``) as subprocesses, with their CPU time
  and peak RSS; ``qbench --version`` gives the interpreter's and the CLI's start-up cost.

Usage::

    python benchmarks/render_md.py [--results 50000] [--repeat 7] [--cli-repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import Any

from _measure import MIB
from _measure import exit_on_sigterm
from _measure import measure
from _measure import source_revision

import pytest_qbench
from pytest_qbench._version import __version__
from pytest_qbench.report.aggregate import aggregate
from pytest_qbench.report.models import Attempt
from pytest_qbench.report.models import Captured
from pytest_qbench.report.models import Environment
from pytest_qbench.report.models import Failure
from pytest_qbench.report.models import Frame
from pytest_qbench.report.models import PhaseDurations
from pytest_qbench.report.models import ReportMeta
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import RunMeta
from pytest_qbench.report.models import StreamEnd
from pytest_qbench.report.models import StreamResult
from pytest_qbench.report.models import StreamStart
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.render import render


HERE = Path(__file__).resolve().parent
PACKAGE_CHECKOUT = Path(pytest_qbench.__file__).resolve().parent.parent
DEFAULT_WORK_DIR = HERE / ".work"
TARGET_S = 1.0
STREAM_NAME = "results.jsonl"
FRAMES = 19
SHARED_SKIP_REASONS = (
    "not supported on this platform",
    "needs a GPU",
    "backend unavailable",
    "slow test; run with --runslow",
    "requires network",
)
# Cumulative thresholds on a uniform draw: which outcome a synthetic result gets.
MIX = (
    (0.020, "failed"),
    (0.025, "error"),
    (0.075, "skipped"),
    (0.095, "xfailed"),
    (0.100, "xpassed"),
    (0.103, "flaky"),
)


# --- the synthetic report -------------------------------------------------------------------


def make_failure(index: int, file: str, phase: str = "call") -> Failure:
    """A failure with a 19-frame traceback, like a recursive helper gives."""
    frames = [Frame(path=file, line=40 + index % 50, function=f"test_case_{index}")]
    frames += [Frame(path=file, line=12, function="_descend") for _ in range(FRAMES - 1)]
    trace_lines = [f"    def test_case_{index}():", f">       _descend(DEPTH, {index})", ""]
    for _ in range(FRAMES - 1):
        trace_lines += [
            f"{file}:12: in _descend",
            "    return _descend(level - 1, value + 1)",
        ]
    trace_lines += [
        "",
        f"level = 0, value = {index + FRAMES}",
        "",
        "    def _descend(level, value):",
        "        if level == 0:",
        ">           assert value == -1, f'value {value} never reached the sentinel'",
        f"E           AssertionError: value {index + FRAMES} never reached the sentinel",
        f"E           assert {index + FRAMES} == -1",
        "",
        f"{file}:11: AssertionError",
    ]
    return Failure(
        error_type="AssertionError",
        error_message=f"value {index + FRAMES} never reached the sentinel\n"
        f"assert {index + FRAMES} == -1",
        phase=phase,  # type: ignore[arg-type]
        file=file,
        line=11,
        stack_trace="\n".join(trace_lines),
        frames=frames,
    )


def make_result(index: int, rng: random.Random, started: datetime) -> TestResult:
    """One synthetic result; its outcome drawn from ``MIX``."""
    module = index // 100
    file = f"tests/pkg_{module // 50:02d}/test_mod_{module:04d}.py"
    name = f"test_case_{index}" if index % 10 else f"TestGroup.test_method[{index % 7}-x]"
    draw = rng.random()
    kind = next((outcome for limit, outcome in MIX if draw < limit), "passed")
    call = rng.expovariate(1 / 0.004)
    durations = PhaseDurations(setup=0.0002, call=round(call, 6), teardown=0.0001)
    fields: dict[str, Any] = {
        "nodeid": f"{file}::{name}",
        "test_name": name,
        "file": file,
        "line": 10 + index % 90,
        "outcome": "passed",
        "duration": round(durations.setup + durations.call + durations.teardown, 6),
        "durations": durations,
        "started_at": started + timedelta(seconds=index * 0.005),
        "markers": ["parametrize"] if "[" in name else [],
        "counted_as": ["passed"],
    }
    if kind == "failed":
        fields["outcome"] = "failed"
        fields["counted_as"] = ["failed"]
        fields["failure"] = make_failure(index, file)
        fields["captured"] = Captured(stdout=f"module {module} test {index}: about to descend\n")
    elif kind == "error":
        fields["outcome"] = "error"
        fields["counted_as"] = ["error"]
        fields["failure"] = make_failure(index, file, phase="setup")
    elif kind == "skipped":
        fields["outcome"] = "skipped"
        fields["counted_as"] = ["skipped"]
        shared = rng.random() < 0.8
        fields["reason"] = (
            SHARED_SKIP_REASONS[index % len(SHARED_SKIP_REASONS)]
            if shared
            else f"ticket QB-{index} still open"
        )
        fields["markers"] = ["skip"]
    elif kind == "xfailed":
        fields["outcome"] = "xfailed"
        fields["counted_as"] = ["xfailed"]
        fields["reason"] = f"known bug #{index % 40}"
        fields["markers"] = ["xfail"]
    elif kind == "xpassed":
        fields["outcome"] = "xpassed"
        fields["counted_as"] = ["xpassed"]
        fields["reason"] = "fixed upstream?"
        fields["markers"] = ["xfail"]
    elif kind == "flaky":
        fields["counted_as"] = ["rerun", "passed"]
        fields["reruns"] = 1
        fields["flaky"] = True
        fields["attempts"] = [
            Attempt(outcome="failed", duration=0.01, failure=make_failure(index, file))
        ]
    return TestResult(**fields)


def build_report(count: int, seed: int = 0) -> TestReport:
    """A ``TestReport`` of ``count`` synthetic results with a summary that agrees with them."""
    rng = random.Random(seed)
    started = datetime(2026, 1, 1, tzinfo=timezone.utc)
    results = [make_result(i, rng, started) for i in range(count)]
    duration = count * 0.005
    run = RunMeta(
        run_id="bench-render",
        started_at=started,
        completed_at=started + timedelta(seconds=duration),
        exit_code=1,
        cwd="/work/project",
        command=["pytest", "-p", "qbench"],
    )
    environment = Environment(
        python="3.11.7",
        implementation="CPython",
        platform="Linux-6.1-x86_64",
        pytest_version="9.2.0",
        qbench_version=__version__,
    )
    return TestReport(
        meta=ReportMeta(qbench_version=__version__, created_at=started),
        run=run,
        environment=environment,
        summary=summarize(results, duration),
        results=results,
    )


def summarize(results: Sequence[TestResult], duration: float) -> ReportSummary:
    """The summary pytest's closing line would give: every result's ``counted_as`` words."""
    fields = {"error": "errors", "rerun": "reruns"}
    counts: dict[str, int] = {}
    for result in results:
        for word in result.counted_as:
            name = fields.get(word, word)
            counts[name] = counts.get(name, 0) + 1
    flaky = sum(1 for r in results if r.flaky)
    return ReportSummary.model_validate(
        {**counts, "total": len(results), "flaky": flaky, "duration": duration}
    )


def write_run_dir(report: TestReport, directory: Path) -> None:
    """A run directory holding only ``results.jsonl`` (one stream record per line, as the models
    define them), as a run whose process died would leave it."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    start = StreamStart(meta=report.meta, run=report.run, environment=report.environment)
    with (directory / STREAM_NAME).open("w", encoding="utf-8", newline="\n") as stream:
        stream.write(start.model_dump_json() + "\n")
        for result in report.results:
            stream.write(StreamResult(result=result).model_dump_json() + "\n")
        stream.write(StreamEnd(run=report.run).model_dump_json() + "\n")


# --- timing ---------------------------------------------------------------------------------


@dataclass
class Timing:
    """The timings of one step."""

    step: str
    runs: list[float]
    cpu: list[float] | None = None
    max_rss_mib: float | None = None
    target_s: float | None = None

    @property
    def median(self) -> float:
        """Median seconds (wall)."""
        return statistics.median(self.runs)


def time_call(step: str, func: Callable[[], object], repeat: int) -> Timing:
    """Wall time of ``func()`` over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        func()
        runs.append(time.perf_counter() - started)
    return Timing(step, runs)


def time_command(step: str, argv: Sequence[str], repeat: int, log: Path) -> Timing:
    """Wall time, CPU time (user + sys) and peak RSS of a command, measured by a launcher."""
    runs: list[float] = []
    cpu: list[float] = []
    rss = 0.0
    for _ in range(repeat):
        with log.open("wb") as output:
            usage = measure(argv, output=output)
        if usage.exit_code != 0:
            raise RuntimeError(
                f"{' '.join(argv)} exited {usage.exit_code}: {log.read_text(errors='replace')}"
            )
        runs.append(usage.wall_s)
        cpu.append(usage.cpu_s)
        rss = max(rss, usage.max_rss_mib)
    return Timing(step, runs, cpu, rss)


def table(timings: Sequence[Timing]) -> str:
    """The Markdown table of the timings."""
    lines = [
        "| step | median wall s | min s | runs | median CPU s | peak RSS MiB | target |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for t in timings:
        cpu = f"{statistics.median(t.cpu):.3f}" if t.cpu else ""
        rss = f"{t.max_rss_mib:.1f}" if t.max_rss_mib is not None else ""
        target = ""
        if t.target_s is not None:
            verdict = "met" if t.median < t.target_s else "**MISSED**"
            target = f"< {t.target_s:g} s: {verdict}"
        lines.append(
            f"| {t.step} | {t.median:.3f} | {min(t.runs):.3f} | {len(t.runs)} | {cpu} "
            f"| {rss} | {target} |"
        )
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=50_000, help="Results in the report")
    parser.add_argument("--repeat", type=int, default=7, help="Runs of each in-process step")
    parser.add_argument("--cli-repeat", type=int, default=3, help="Runs of each subprocess")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument(
        "--qbench", default=None, help="The qbench command. Default: python -m pytest_qbench"
    )
    parser.add_argument("--json", type=Path, help="Also write the timings here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 1 when rendering misses its target."""
    args = parse_args(argv)
    exit_on_sigterm()
    qbench = args.qbench.split() if args.qbench else [sys.executable, "-m", "pytest_qbench"]
    work = args.work_dir.resolve() / f"render-{args.results}"
    work.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    report = build_report(args.results, args.seed)
    built = time.perf_counter() - started
    counts = report.summary.model_dump(include={"passed", "failed", "errors", "skipped"})
    print(f"built {len(report.results)} results in {built:.1f}s: {counts}", file=sys.stderr)

    markdown = render(report)
    timings = [time_call("render(report): built-in Markdown", lambda: render(report), args.repeat)]
    timings[0].target_s = TARGET_S
    # Since the record-based plugin, render() also takes the report as plain JSON data, which is
    # what the plugin passes; a TestReport is converted first (model_dump) on every call.
    record = report.model_dump(mode="json")
    subject: Any = report
    try:
        same = render(record) == markdown
    except Exception as exc:  # an older qbench: render() takes models only
        print(f"render(record) not supported: {type(exc).__name__}: {exc}", file=sys.stderr)
    else:
        subject = record
        if not same:
            print("warning: render(record) differs from render(report)", file=sys.stderr)
        timings.append(
            time_call(
                "render(record): the report as JSON data", lambda: render(record), args.repeat
            )
        )
    results = subject["results"] if isinstance(subject, dict) else subject.results
    timings.append(
        time_call(
            "  aggregate(results).view() alone", lambda: aggregate(results).view(), args.repeat
        )
    )
    view = aggregate(results).view()
    env = make_environment()
    timings.append(
        time_call(
            "  template alone (view given, env reused)",
            lambda: render(subject, view=view, env=env),
            args.repeat,
        )
    )

    report_json = work / "report.json"
    text = report.model_dump_json()
    report_json.write_text(text, encoding="utf-8")
    timings.append(time_call("report.model_dump_json()", report.model_dump_json, args.repeat))
    timings.append(
        time_call(
            "TestReport.model_validate_json(report.json)",
            lambda: TestReport.model_validate_json(text),
            max(1, args.repeat // 2),
        )
    )
    run_dir = work / "run"
    write_run_dir(report, run_dir)
    log = work / "command-output.txt"
    timings.append(time_command("`qbench --version` (start-up)", [*qbench, "--version"], 3, log))
    timings.append(
        time_command(
            "`qbench render report.json -o report.md`",
            [*qbench, "render", str(report_json), "-o", str(work / "report.md")],
            args.cli_repeat,
            log,
        )
    )
    timings.append(
        time_command(
            "`qbench render RUN_DIR` (rebuild from stream)",
            [*qbench, "render", str(run_dir)],
            args.cli_repeat,
            log,
        )
    )
    cli_md = (work / "report.md").read_text(encoding="utf-8")
    if cli_md != markdown:
        print("warning: qbench render's Markdown differs from render(report)", file=sys.stderr)

    print(f"### Markdown rendering, {len(report.results)} results\n")
    print(
        f"pytest-qbench at {source_revision(PACKAGE_CHECKOUT)}, Python {sys.version.split()[0]}\n"
    )
    print(
        f"report.json {len(text) / MIB:.1f} MiB; report.md {len(markdown) / 1024:.1f} KiB; "
        f"{report.summary.failed} failed, {report.summary.errors} errors, "
        f"{report.summary.skipped} skipped\n"
    )
    print(table(timings))
    if args.json:
        data = {
            "revision": source_revision(PACKAGE_CHECKOUT),
            "results": len(report.results),
            "report_json_bytes": len(text),
            "markdown_bytes": len(markdown),
            "timings": [{**asdict(t), "median": t.median} for t in timings],
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0 if timings[0].median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
