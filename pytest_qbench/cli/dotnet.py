"""``qbench ingest-trx``: .NET test results (VSTest TRX, NUnit 3 XML) into a qbench run: by
default stored in the run store (``<dir>/runs/<run id>/report.json`` and ``report.md``) and
indexed, as a run of pytest is; with ``-o``, written there instead, as ``ingest-junit`` does."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_output
from pytest_qbench.core.numbers import parse_path


def add_ingest_trx_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench ingest-trx``'s arguments."""
    from pytest_qbench.cli import add_limit_options

    ingest = sub.add_parser(
        "ingest-trx",
        help="Read .NET test results (dotnet test TRX, NUnit 3 XML) into a qbench run",
        description="Read 'dotnet test --logger trx' files and NUnit 3 result XML into one "
        "qbench run, stored in the run store and indexed (or, with -o, written as report.json). "
        "A file recording a run that did not finish (aborted, timed out), whose results "
        "disagree with its own counters, or that cannot be read is refused: nothing is stored.",
    )
    ingest.add_argument("sources", nargs="+", type=parse_path, metavar="FILE.trx|FILE.xml|DIR")
    ingest.add_argument(
        "--dir",
        type=parse_path,
        default=Path(".qbench"),
        help="The qbench directory the run is stored in. Default: %(default)s",
    )
    ingest.add_argument(
        "-o", "--output", type=parse_output, help="Write report.json here instead ('-' is stdout)"
    )
    ingest.add_argument(
        "--md", type=parse_path, help="With -o: also write the Markdown report here"
    )
    add_limit_options(ingest)
    ingest.set_defaults(func=cmd_ingest_trx)


def cmd_ingest_trx(args: argparse.Namespace) -> int:
    """``qbench ingest-trx``."""
    from pytest_qbench.cli import counts_line
    from pytest_qbench.cli import note
    from pytest_qbench.cli import write_report
    from pytest_qbench.core.limits import Limits
    from pytest_qbench.report import store
    from pytest_qbench.report.dotnet import read_dotnet

    if args.max_output < 0 or args.max_trace < 0:
        raise QBenchError("--max-output and --max-trace must not be negative; use 0 or more")
    if args.md is not None and args.output is None:
        raise QBenchError("--md needs -o; without -o the run store gets report.md")
    limits = Limits(max_output=args.max_output, max_trace=args.max_trace)
    command = ["qbench", "ingest-trx", *map(str, args.sources)]
    report = read_dotnet(args.sources, limits=limits, command=command)
    if args.output is not None:
        write_report(report, args.output, args.md)
        note(args.output, f"read {report.run.tool} results: {counts_line(report)}")
        return OK
    run_dir = args.dir / store.RUNS_DIR / report.run.run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    write_report(report, str(run_dir / "report.json"), run_dir / "report.md")
    note(
        str(run_dir), f"read {report.run.tool} results: {counts_line(report)}; stored in {run_dir}"
    )
    _index(run_dir, report.model_dump(mode="json"))
    return OK


def _index(run_dir: Path, record: dict[str, Any]) -> None:
    from pytest_qbench.cli.history import index_rebuilt

    index_rebuilt(run_dir, record)
