"""``qbench test``: run pytest, vitest and jest (or every runner that applies) on the project
as one run, written like a pytest run: the run store's ``runs/<id>/`` (report.json, report.md,
the runners' raw output), its history index, and the HTML page when asked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.numbers import parse_path
from pytest_qbench.core.numbers import parse_seconds


if TYPE_CHECKING:
    from pytest_qbench.report.models import TestReport


def add_test_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench test``'s arguments."""
    parser = sub.add_parser(
        "test",
        help="Run pytest, vitest and jest as one run, stored and reported like a pytest run",
        description="Run the chosen test runners in the working directory, each as a child "
        "process with its machine-readable report (pytest through qbench's plugin, vitest "
        "--reporter=json, jest --json), the project's own binaries (node_modules/.bin). Write "
        "one run: <dir>/runs/<run id>/report.json and report.md, each result naming its runner. "
        "Exit 0 when every runner ran and nothing failed, 5 when no test ran, 1 otherwise (a "
        "runner that is not installed or crashed fails the run).",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="Test files or directories")
    parser.add_argument(
        "--runner",
        default="all",
        metavar="NAME",
        help="pytest, vitest, jest, a plugin's runner, or all: every runner that applies to "
        "the project. Default: %(default)s",
    )
    parser.add_argument(
        "--build",
        action="store_true",
        help="First run each JavaScript workspace package's build script, package by package; "
        "a package that fails to build is counted in projects_build_failed and not tested",
    )
    parser.add_argument(
        "--dir",
        type=parse_path,
        default=Path(".qbench"),
        help="The qbench directory the run is stored in. Default: %(default)s",
    )
    parser.add_argument("--html", type=parse_path, metavar="OUT", help="Also write the HTML report")
    parser.add_argument(
        "--timeout",
        type=parse_seconds,
        default=900.0,
        help="Seconds a runner may take before it is stopped. Default: %(default)g",
    )
    parser.add_argument(
        "--python", help="The Python pytest runs with. Default: the one running qbench"
    )
    parser.set_defaults(func=cmd_test)


def cmd_test(args: argparse.Namespace) -> int:
    """``qbench test``."""
    from pytest_qbench.core.exit_codes import ERR
    from pytest_qbench.core.exit_codes import OK
    from pytest_qbench.core.exit_codes import PytestExit
    from pytest_qbench.report import store
    from pytest_qbench.tools.run_tests import build_report
    from pytest_qbench.tools.run_tests import parse_choice
    from pytest_qbench.tools.run_tests import run_tests
    from pytest_qbench.tools.run_tests import started_now

    chosen = parse_choice(args.runner)
    root = Path.cwd()
    started = started_now()
    run_id = store.new_run_id(started)
    store.prepare_store(args.dir)
    run_dir = store.run_dir(args.dir, run_id)
    run_dir.mkdir(parents=True)
    gathered = run_tests(
        root,
        chosen,
        list(args.paths),
        run_dir,
        timeout=args.timeout,
        build=args.build,
        python=args.python,
    )
    command = [
        "qbench",
        "test",
        "--runner",
        args.runner,
        *(["--build"] if args.build else []),
        *args.paths,
    ]
    report = build_report(gathered, run_id, started, command, root)
    publish(report, args.dir, run_dir, args.html)
    print_summary(report, run_dir)
    if gathered.exit_code == PytestExit.NO_TESTS_COLLECTED:
        print('qbench: no tests ran (exit 5, as pytest\'s "no tests collected")', file=sys.stderr)
        return gathered.exit_code
    return OK if gathered.exit_code == 0 else ERR


def publish(report: TestReport, qbench_dir: Path, run_dir: Path, html: Path | None) -> None:
    """Index the run, then write its outputs, as at the end of a pytest run."""
    from typing import cast

    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.publish import publish_test_run
    from pytest_qbench.report.records import TestReportRecord

    record = cast("TestReportRecord", report.model_dump(mode="json"))
    db = configured_db(None, Path.cwd())
    for line in publish_test_run(record, qbench_dir, run_dir, html=html, db=db):
        print(f"qbench: {line}", file=sys.stderr)


def print_summary(report: TestReport, run_dir: Path) -> None:
    """Per runner its counts, the runners' problems and notes, then the failures (one line
    each)."""
    from pytest_qbench.cli import counts_line
    from pytest_qbench.tools.run_tests import NOTES

    for problem in report.collection_errors:
        where = f" {problem.file}" if problem.file else ""
        where += f":{problem.line}" if where and problem.line else ""
        where += f" {problem.code}" if where and problem.code else ""
        print(
            f"ERROR {problem.tool}{where}: "
            f"{problem.message.splitlines()[0] if problem.message else ''}"
        )
    for note in report.warnings:
        if note.code in NOTES:
            print(f"NOTE {note.tool}: {note.message}")
    for result in report.results:
        if result.outcome in ("failed", "error"):
            failure = result.failure
            where = f"{failure.file}:{failure.line}" if failure and failure.line else result.file
            message = (
                failure.error_message.splitlines()[0] if failure and failure.error_message else ""
            )
            print(
                f"{result.outcome.upper()} [{result.runner}] {result.nodeid} ({where}): {message[:200]}"
            )
    if report.summary.projects_build_failed:
        print(f"projects_build_failed: {report.summary.projects_build_failed}")
    print(
        f"qbench: {report.run.tool}: {counts_line(report)}; run {report.run.run_id} stored in {run_dir}"
    )
