"""The ``qbench`` command: render reports, rebuild a crashed run's reports, merge shard reports,
read other runners' JUnit XML, print the schema; index runs and compare them (``history/``).

Never imports the pytest plugin: it reads stored reports and streams only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import cast

from pytest_qbench._version import __version__
from pytest_qbench.core.errors import QBenchError


if TYPE_CHECKING:
    from pytest_qbench.report.merge import Source
    from pytest_qbench.report.models import TestReport
    from pytest_qbench.report.records import TestReportRecord

from pytest_qbench.cli.schemas import DEFAULT
from pytest_qbench.cli.schemas import MODELS
from pytest_qbench.cli.schemas import schema_for
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_count
from pytest_qbench.core.numbers import parse_name
from pytest_qbench.core.numbers import parse_output
from pytest_qbench.core.numbers import parse_path


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``qbench`` command; return its exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["mcp"]:  # the server parses its own options (mcp/launch.py)
        args = argparse.Namespace(func=cmd_mcp, server_args=arguments[1:])
    else:
        args = build_parser().parse_args(arguments)
    try:
        return int(args.func(args))
    except QBenchError as exc:
        print(f"qbench: error: {exc}", file=sys.stderr)
        return ERR
    except BrokenPipeError:  # `qbench check | head`: the reader left before the verdict's end
        return output_closed()
    except OSError as exc:  # an output that cannot be written: -o into a missing or read-only place
        where = exc.filename2 or exc.filename
        detail = f"{exc.strerror}: {where}" if exc.strerror and where else str(exc)
        print(f"qbench: error: {detail}", file=sys.stderr)
        return ERR
    except Exception as exc:  # a bug in qbench: one line, the traceback in a file
        from pytest_qbench.core.crash import report_internal_error

        return report_internal_error(exc)


def output_closed() -> int:
    """The status of a command whose output was closed before it was all written (``qbench check
    | head``): ERR, whatever it found, so that ``set -o pipefail`` never reads a verdict it did
    not see as a pass; the rest of the output goes nowhere (Python's advice for SIGPIPE: no
    second error when the interpreter flushes stdout at exit)."""
    import os

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    with contextlib.suppress(OSError, ValueError):
        print(
            "qbench: error: the output was closed before all of it was written (a pipe to "
            "`head`?); exit status 1 whatever the command found",
            file=sys.stderr,
        )
    return ERR


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="qbench", description="Render and inspect pytest-qbench reports."
    )
    parser.add_argument("--version", action="version", version=f"pytest-qbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    render = sub.add_parser(
        "render",
        help="Render a report, or rebuild a run directory's reports from its stream",
        description="Render REPORT.json with a template (Markdown by default) to OUT or stdout. "
        "Given a run directory and no --template/-o, rebuild its report.json and report.md from "
        "results.jsonl: this recovers the reports of a run whose process died.",
    )
    render.add_argument("source", type=parse_path, metavar="REPORT.json|RUN_DIR")
    render.add_argument("--template", "-t", help="Template name or path. Default: report.md.j2")
    render.add_argument(
        "--template-dir", type=parse_path, help="Directory searched before the built-ins"
    )
    render.add_argument(
        "-o", "--output", type=parse_output, help="Output file, '-' for stdout. Default: stdout"
    )
    render.add_argument(
        "--max-items",
        type=parse_count,
        default=50,
        help="Items listed per section. Default: %(default)r",
    )
    render.add_argument(
        "--html",
        type=parse_path,
        metavar="OUT",
        help="Write the HTML report (one self-contained file) to OUT, with the trend of the "
        "run store holding the run. Alone, nothing else is written",
    )
    render.add_argument(
        "--ctrf",
        type=parse_path,
        metavar="OUT",
        help="Write the run as a CTRF document to OUT ('-' for stdout), with insights from the "
        "run store's history index. Alone, nothing else is written",
    )
    render.set_defaults(func=cmd_render)

    add_merge_parser(sub)
    add_ingest_junit_parser(sub)
    from pytest_qbench.cli.dotnet import add_ingest_trx_parser

    add_ingest_trx_parser(sub)
    from pytest_qbench.cli.check import add_check_parser
    from pytest_qbench.cli.check import add_ingest_sarif_parser

    add_check_parser(sub)
    add_ingest_sarif_parser(sub)
    from pytest_qbench.cli.coverage import add_coverage_parser

    add_coverage_parser(sub)
    from pytest_qbench.cli.history import add_history_parsers

    add_history_parsers(sub)
    from pytest_qbench.cli.quarantine import add_quarantine_parser

    add_quarantine_parser(sub)
    from pytest_qbench.cli.pr_comment import add_pr_comment_parser

    add_pr_comment_parser(sub)
    from pytest_qbench.cli.generate import add_generate_parser

    add_generate_parser(sub)
    from pytest_qbench.cli.test import add_test_parser

    add_test_parser(sub)
    sub.add_parser(
        "mcp",
        help="Serve the MCP tools over stdio (needs the 'mcp' extra); qbench mcp --help lists "
        "its options",
        add_help=False,
    )

    schema = sub.add_parser(
        "schema", help="Print the JSON Schema of report.json, or of a command's --json output"
    )
    schema.add_argument(
        "--model",
        choices=list(MODELS),
        default=DEFAULT,
        metavar="NAME",
        help=f"Which schema: {', '.join(MODELS)} (report.json, the failure digest, a line of "
        "results.jsonl, check.json, then the --json output of that command). "
        "Default: %(default)r",
    )
    schema.set_defaults(func=cmd_schema)
    return parser


def cmd_mcp(args: argparse.Namespace) -> int:
    """``qbench mcp``: the MCP modules are imported only now, and parse the server's options."""
    from pytest_qbench.mcp.launch import run

    return run(args.server_args)


def add_merge_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench merge``'s arguments."""
    merge = sub.add_parser(
        "merge",
        help="Merge the reports of CI shards into the report of the whole run",
        description="Merge REPORT.json files (or run directories) of shards into one report whose "
        "counts are the whole run's: a test present in several shards is kept once, as its last "
        "attempt, earlier failures becoming rerun attempts. Each shard's run, environment and "
        "summary are kept in 'shards'.",
    )
    merge.add_argument("sources", nargs="+", type=parse_path, metavar="REPORT.json|RUN_DIR")
    add_output_options(merge)
    merge.set_defaults(func=cmd_merge)


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``-o`` (the report.json written) and ``--md`` (its Markdown)."""
    parser.add_argument(
        "-o",
        "--output",
        type=parse_output,
        required=True,
        help="report.json to write; '-' is stdout",
    )
    parser.add_argument("--md", type=parse_path, help="Also write the Markdown report here")


def add_ingest_junit_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench ingest-junit``'s arguments."""
    ingest = sub.add_parser(
        "ingest-junit",
        help="Read JUnit XML of other test runners into a qbench report",
        description="Read JUnit XML files (vitest, jest-junit, go-junit-report, Maven Surefire, "
        "dotnet JunitXml.TestLogger, pytest --junitxml, ...) into one qbench report.json, which "
        "'qbench merge' and 'qbench render' accept. DTDs and entity declarations are refused.",
    )
    ingest.add_argument("sources", nargs="+", type=parse_path, metavar="FILE.xml|DIR")
    add_output_options(ingest)
    ingest.add_argument(
        "--tool", type=parse_name, help="Name of the test runner. Default: detected from the XML"
    )
    add_limit_options(ingest)
    ingest.set_defaults(func=cmd_ingest_junit)


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-output`` and ``--max-trace`` of the commands reading other runners' results."""
    from pytest_qbench.core.text import DEFAULT_MAX_OUTPUT
    from pytest_qbench.core.text import DEFAULT_MAX_TRACE

    parser.add_argument(
        "--max-output",
        type=int,
        default=DEFAULT_MAX_OUTPUT,
        help="Characters kept per captured stream. Default: %(default)r",
    )
    parser.add_argument(
        "--max-trace",
        type=int,
        default=DEFAULT_MAX_TRACE,
        help="Characters kept per stack trace. Default: %(default)r",
    )


def cmd_merge(args: argparse.Namespace) -> int:
    """``qbench merge``."""
    from pytest_qbench.report.merge import Source
    from pytest_qbench.report.merge import merge_reports

    sources = [Source(str(path), load_shard(path)) for path in args.sources]
    if args.output != "-":
        carry_attachments(sources, [Path(p) for p in args.sources], Path(args.output).parent)
    command = ["qbench", "merge", *map(str, args.sources)]
    report = merge_reports(sources, command=command)
    write_report(report, args.output, args.md)
    reports = "report" if len(sources) == 1 else "reports"
    note(args.output, f"merged {len(sources)} {reports}: {counts_line(report)}")
    for warning in report.warnings:
        if warning.code in (
            "merge-missing-shards",
            "merge-plans-differ",
            "merge-unfinished-shards",
        ):
            print(f"qbench: warning: {warning.message}", file=sys.stderr)
    return OK


def carry_attachments(sources: Sequence[Source], paths: list[Path], out_dir: Path) -> None:
    """Copy the shards' attachments next to the merged report (``attachments/<run id>/...``);
    a file that is gone is noted on stderr and listed as not stored."""
    from pytest_qbench.report.attachments import carry_attachments as carry

    pairs = zip(sources, paths, strict=True)
    runs = [(s.report, path if path.is_dir() else path.parent) for s, path in pairs]
    for problem in carry(runs, out_dir):
        print(f"qbench: warning: attachment {problem}", file=sys.stderr)


def load_shard(path: Path) -> TestReport:
    """A report to merge; a JUnit XML file given by mistake gets a hint."""
    from pytest_qbench.core.errors import ReportFormatError
    from pytest_qbench.report.readers import load_source

    try:
        return load_source(path)
    except ReportFormatError as exc:
        if path.suffix.lower() == ".xml":
            raise ReportFormatError(
                f"{exc}; {path} looks like JUnit XML: run "
                f"'qbench ingest-junit {path} -o {path.with_suffix('.json')}' and merge that",
                slug=exc.slug,
            ) from None
        raise


def cmd_ingest_junit(args: argparse.Namespace) -> int:
    """``qbench ingest-junit``."""
    from pytest_qbench.core.limits import Limits
    from pytest_qbench.report.junit import read_junit

    if args.max_output < 0 or args.max_trace < 0:
        raise QBenchError("--max-output and --max-trace must not be negative; use 0 or more")
    limits = Limits(max_output=args.max_output, max_trace=args.max_trace)
    command = ["qbench", "ingest-junit", *map(str, args.sources)]
    report = read_junit(args.sources, tool=args.tool, limits=limits, command=command)
    write_report(report, args.output, args.md)
    note(args.output, f"read {report.run.tool} JUnit XML: {counts_line(report)}")
    return OK


def write_report(report: TestReport, output: str, markdown: Path | None) -> None:
    """Write ``report`` as JSON to ``output`` (``-`` is stdout) and, if asked, as Markdown."""
    from pytest_qbench.report import store
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.outputs import OutputWriter

    record = cast("TestReportRecord", report.model_dump(mode="json"))
    store.write_report_json(output if output == "-" else Path(output), record, None)
    if markdown is not None:
        view = aggregate(record["results"]).view()
        writer = OutputWriter(record, None, view, template_dir=None, max_items=50)
        writer.markdown(markdown)


def counts_line(report: TestReport) -> str:
    """``12 tests: 1 failed, 10 passed, 1 skipped, 1 todo``: the counts that are not zero,
    other runners' words (vitest's ``todo``) last, so that they add up to the total."""
    from pytest_qbench.core.summary_words import OUTCOME_FIELDS
    from pytest_qbench.core.summary_words import pluralize
    from pytest_qbench.core.summary_words import summary_parts

    s = report.summary
    parts = summary_parts(s.model_dump(), (*OUTCOME_FIELDS, "reruns"), s.other)
    return f"{pluralize(s.total, 'test')}: {', '.join(parts) or 'none ran'}"


def note(output: str, message: str) -> None:
    """One ``qbench: ...`` line: on stdout, or on stderr when stdout carries the report."""
    print(f"qbench: {message}", file=sys.stderr if output == "-" else sys.stdout)


def cmd_render(args: argparse.Namespace) -> int:
    """``qbench render``: the outputs are written as at the end of a live run (``Publisher``)."""
    from pytest_qbench.core.gc_pause import paused_gc

    with paused_gc():  # a big report's records are acyclic: collections would walk them all
        return _render(args)


def _render(args: argparse.Namespace) -> int:
    from functools import partial

    from pytest_qbench.history.publish import OutputPlan
    from pytest_qbench.history.publish import Publisher
    from pytest_qbench.report.aggregate import aggregate
    from pytest_qbench.report.outputs import OutputWriter
    from pytest_qbench.report.readers import load_source_results_json
    from pytest_qbench.report.render import MARKDOWN_TEMPLATE
    from pytest_qbench.report.render import template_option

    source: Path = args.source
    if args.template_dir is not None and not args.template_dir.is_dir():
        raise QBenchError(
            f"--template-dir is not a directory, given: {args.template_dir}; "
            "create it or fix the path"
        )
    alone = args.template is None and args.output is None
    extras = args.html is not None or args.ctrf is not None
    rebuild = source.is_dir() and alone and not extras
    if rebuild:
        _note_died(source)
    report, results_json, view = load_source_results_json(source, args.max_items)
    if view is None:  # read from report.json: not counted yet
        view = aggregate(report["results"], max_items=args.max_items).view()
    writer = OutputWriter(
        report=report,
        stream=None,
        view=view,
        template_dir=args.template_dir,
        max_items=args.max_items,
        results_json=results_json,
    )
    run_dir = source if source.is_dir() else source.parent
    plan = OutputPlan(run_dir=source if rebuild else None, attachments_dir=run_dir)
    if args.html is not None:
        from pytest_qbench.cli.html import store_trend

        plan.html = args.html
        run = report["run"]
        plan.trend = partial(store_trend, run_dir, run["run_id"], run["started_at"])
    if args.ctrf is not None:
        from pytest_qbench.cli.ctrf import store_history

        plan.ctrf = args.ctrf
        plan.ctrf_history = partial(store_history, run_dir, report["run"]["run_id"])
    if not rebuild and not (alone and extras):
        template = template_option(args.template) if args.template else MARKDOWN_TEMPLATE
        plan.templates = [(template, Path(args.output or "-"))]
    publisher = Publisher(writer, plan, strict=True)
    try:
        written = publisher.publish()
    finally:
        for line in publisher.notes:
            print(f"qbench: {line}", file=sys.stderr)
        asked = [*(out for _, out in plan.templates), args.html, args.ctrf]
        _say_written([path for path in asked if path is not None], publisher.written)
    if rebuild:
        run = report["run"]
        state = "interrupted run" if run["interrupted"] else "run"
        print(f"qbench: rebuilt {state} {run['run_id']}: {', '.join(map(str, written))}")
        from pytest_qbench.cli.history import index_rebuilt

        index_rebuilt(source, report)
    return OK


def _note_died(run_dir: Path) -> None:
    """Refuse a run still going; keep how a run that died at its end died (``store.note_died``)
    before its report.json is written, so that a second ``qbench render`` reads it as the
    first (its mark, which said so, goes; its report.json is there).

    Raises:
        QBenchError: the run is still going, or the note cannot be written.
    """
    from pytest_qbench.report import store

    going = store.run_in_progress(run_dir)
    if going:  # its own session end writes and indexes its reports
        raise QBenchError(
            f"{run_dir}: its run is still going, and writes its reports when it ends; render "
            "it then, or its results so far to another file with -o FILE",
            slug="run-going",
        )
    try:
        store.note_died(run_dir, going)
    except OSError as exc:
        raise QBenchError(
            f"cannot write {run_dir / store.DIED_NAME}: {exc.strerror or exc}; its reports are "
            "not rebuilt (a second render would read the run as complete): free the disk or "
            "fix the directory's permissions, and render again",
            slug="died-note-unwritten",
        ) from None


def _say_written(asked: list[Path], written: list[Path]) -> None:
    """One ``qbench: wrote PATH`` line per file of ``asked`` that was written (each of ``-o``,
    ``--html``, ``--ctrf``); on stderr when one of them is stdout, which then holds it alone."""
    shared = any(str(path) == "-" for path in asked)
    for path in asked:
        if str(path) != "-" and path in written:
            print(f"qbench: wrote {path}", file=sys.stderr if shared else sys.stdout)


def cmd_schema(args: argparse.Namespace) -> int:
    """``qbench schema``: the JSON Schema, as checked into docs/."""
    print(json.dumps(schema_for(args.model), indent=2))
    return OK
