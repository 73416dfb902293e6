"""The ``qbench`` command: render reports, rebuild a crashed run's reports, print the schema.

Never imports the pytest plugin: it reads stored reports and streams only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench._version import __version__
from pytest_qbench.errors import QBenchError


if TYPE_CHECKING:
    from pytest_qbench.models import TestReport

OK = 0
ERR = 1
USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``qbench`` command; return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except QBenchError as exc:
        print(f"qbench: error: {exc}", file=sys.stderr)
        return ERR
    except BrokenPipeError:  # `qbench render ... | head`
        return OK
    except OSError as exc:  # an output that cannot be written: -o into a missing or read-only place
        where = exc.filename2 or exc.filename
        detail = f"{exc.strerror}: {where}" if exc.strerror and where else str(exc)
        print(f"qbench: error: {detail}", file=sys.stderr)
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
    render.add_argument("source", type=Path, metavar="REPORT.json|RUN_DIR")
    render.add_argument("--template", "-t", help="Template name or path. Default: report.md.j2")
    render.add_argument("--template-dir", type=Path, help="Directory searched before the built-ins")
    render.add_argument("-o", "--output", help="Output file, '-' for stdout. Default: stdout")
    render.add_argument(
        "--max-items", type=int, default=50, help="Items listed per section. Default: %(default)r"
    )
    render.set_defaults(func=cmd_render)

    schema = sub.add_parser("schema", help="Print the JSON Schema of report.json")
    schema.add_argument(
        "--model",
        choices=["report", "digest", "stream"],
        default="report",
        help="Which schema. Default: %(default)r",
    )
    schema.set_defaults(func=cmd_schema)
    return parser


def cmd_render(args: argparse.Namespace) -> int:
    """``qbench render``."""
    from pytest_qbench import store
    from pytest_qbench.aggregate import aggregate
    from pytest_qbench.outputs import OutputWriter

    source: Path = args.source
    rebuild = source.is_dir() and args.template is None and args.output is None
    model = load_source(source)
    report = model.model_dump(mode="json")
    view = aggregate(report["results"], max_items=args.max_items).view()
    writer = OutputWriter(
        report=report,
        stream=None,
        view=view,
        template_dir=args.template_dir,
        max_items=args.max_items,
    )
    if rebuild:
        written = [
            writer.json(source / store.REPORT_JSON),
            writer.markdown(source / store.REPORT_MD),
        ]
        state = "interrupted run" if model.run.interrupted else "run"
        print(f"qbench: rebuilt {state} {model.run.run_id}: {', '.join(map(str, written))}")
        return OK
    writer.template(args.template or "report.md.j2", Path(args.output or "-"))
    return OK


def load_source(source: Path) -> TestReport:
    """A report from ``report.json``, or from a run directory (its stream first)."""
    from pytest_qbench import readers
    from pytest_qbench import store
    from pytest_qbench.errors import ReportFormatError

    if source.is_dir():
        stream = source / store.STREAM_NAME
        if stream.is_file():
            contents = readers.read_stream(stream)
            if contents.bad_lines:
                print(
                    f"qbench: skipped {contents.bad_lines} damaged line(s) of {stream} "
                    "(a process killed mid-write leaves a torn last line)",
                    file=sys.stderr,
                )
            return readers.report_from_stream(contents)
        if (source / store.REPORT_JSON).is_file():
            return readers.read_report(source / store.REPORT_JSON)
        raise ReportFormatError(
            f"{source} holds neither {store.STREAM_NAME} nor {store.REPORT_JSON}: not a run directory",
            slug="not-a-run",
        )
    return readers.read_report(source)


def cmd_schema(args: argparse.Namespace) -> int:
    """``qbench schema``: the JSON Schema, as checked into docs/."""
    print(json.dumps(schema_for(args.model), indent=2))
    return OK


def schema_for(model: str) -> dict[str, object]:
    """The JSON Schema of ``report``, ``digest`` or ``stream`` (one line of results.jsonl)."""
    from pydantic import TypeAdapter

    from pytest_qbench.models import FailureDigest
    from pytest_qbench.models import StreamRecord
    from pytest_qbench.models import TestReport

    if model == "digest":
        return FailureDigest.model_json_schema(mode="serialization")
    if model == "stream":
        return TypeAdapter(StreamRecord).json_schema(mode="serialization")
    return TestReport.model_json_schema(mode="serialization")
