"""``qbench check`` (issue 13): run ruff, mypy, pyright or the build check on the project, store
the run and the raw logs in the run store, print the counts and the errors."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_count
from pytest_qbench.core.numbers import parse_path
from pytest_qbench.core.numbers import parse_seconds


if TYPE_CHECKING:
    from pytest_qbench.report.models import CheckReport
    from pytest_qbench.report.models import Diagnostic

MAX_COUNT_LINES = 50
"""Checkers (SARIF runs) given a count line; the rest are counted in one line."""
MAX_PRINTED = 300
"""Characters printed of a name, a place or a message."""


def add_check_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench check``'s arguments."""
    from pytest_qbench.tools.names import DEFAULT_TIMEOUT
    from pytest_qbench.tools.names import DEFAULT_TOOLS
    from pytest_qbench.tools.names import TOOLS

    parser = sub.add_parser(
        "check",
        help="Run static checkers (ruff, mypy, pyright, build) and list their errors",
        description="Run each checker as a child process in the working directory, with the "
        "project's own configuration (pyproject.toml, ruff.toml, mypy.ini...), on PATHS "
        "(default: the files each checker's configuration names, such as mypy's files or "
        "pyright's include; . for mypy when its configuration names none). Store the run (check.json and each checker's raw output) in "
        "<dir>/runs/<run id>/. Exit 0 when clean, 1 when a checker found errors or crashed, "
        f"3 when nothing failed but a checker could not run. Checkers: {', '.join(TOOLS)}, tsc, eslint, and those of installed plugins.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="Files or directories to check")
    parser.add_argument(
        "--checker",
        "--tools",
        dest="checkers",
        action="append",
        metavar="NAME",
        help="A registered checker (repeatable, or a comma list; --list shows them). Default: "
        f"{','.join(DEFAULT_TOOLS)} for the back end, the front end's checkers that apply",
    )
    parser.add_argument(
        "--target",
        choices=("frontend", "backend", "both"),
        help="The Python back end, the JavaScript/TypeScript front end (qbench_frontend, else "
        "the nearest directory with a package.json) or both. Default: both when there is a "
        "front end, else backend",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        dest="list_checkers",
        help="List the registered checkers (kind, target, distribution, applies, installed)",
    )
    add_common_options(parser)
    parser.add_argument(
        "--timeout",
        type=parse_seconds,
        default=DEFAULT_TIMEOUT,
        help="Seconds a checker may take before it is stopped. Default: %(default)g",
    )
    parser.set_defaults(func=cmd_check)


def add_ingest_sarif_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench ingest-sarif``'s arguments."""
    parser = sub.add_parser(
        "ingest-sarif",
        help="Read SARIF 2.1.0 files of any tool into diagnostics, stored like a check run",
        description="Read SARIF 2.1.0 files (eslint, semgrep, bandit, CodeQL, tsc converters...): "
        "each result becomes a diagnostic (ruleId, level, message, first location's file and "
        "region). A malformed file is refused with the JSON path of the problem, and nothing "
        "is stored. Otherwise the run is stored in <dir>/runs/<run id>/ (check.json and a copy "
        "of each file). Exit 0 when no result is an error, 1 otherwise.",
    )
    parser.add_argument("sources", nargs="+", type=parse_path, metavar="FILE.sarif")
    add_common_options(parser)
    parser.set_defaults(func=cmd_ingest_sarif)


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """``--json``, ``--dir`` and ``--max-items``, shared by ``check`` and ``ingest-sarif``."""
    parser.add_argument("--json", action="store_true", help="Print check.json instead of text")
    parser.add_argument(
        "--dir",
        type=parse_path,
        default=Path(".qbench"),
        help="The qbench directory the run is stored in. Default: %(default)s",
    )
    parser.add_argument(
        "--max-items", type=parse_count, default=50, help="Diagnostics listed. Default: %(default)r"
    )


def cmd_ingest_sarif(args: argparse.Namespace) -> int:
    """``qbench ingest-sarif``."""
    from pytest_qbench.report.checks.ingest import ingest_sarif

    if args.max_items < 0:
        raise QBenchError(
            "--max-items must be 0 or more; e.g. --max-items 50", slug="check-options"
        )
    report, directory = ingest_sarif(list(args.sources), Path.cwd(), args.dir)
    return show(report, directory, args.json, args.max_items)


def show(report: CheckReport, directory: Path, as_json: bool, max_items: int) -> int:
    """Print the run (JSON, or the text lines and where it is stored); its exit status."""
    from pytest_qbench.report.store import CHECK_JSON

    if as_json:  # the stored check.json, not a second dump of a report that may be large
        with (directory / CHECK_JSON).open(encoding="utf-8") as stored:
            shutil.copyfileobj(stored, sys.stdout)
    else:
        print("\n".join(text_lines(report, max_items)))
        print(f"qbench: check run {report.run.run_id} stored in {directory}")
    return report.run.exit_code or OK


def cmd_check(args: argparse.Namespace) -> int:
    """``qbench check``."""
    from pytest_qbench.tools.runner import run_checks

    root = Path.cwd()
    if args.list_checkers:
        from pytest_qbench.cli.check_list import print_checkers

        return print_checkers(root, configured_frontend(root))
    frontend, names = chosen_checkers(args, root)
    report, directory = run_checks(
        names, root, list(args.paths), args.dir, args.timeout, frontend=frontend
    )
    return show(report, directory, args.json, args.max_items)


def configured_frontend(root: Path) -> str | None:
    """``qbench_frontend`` of the pytest configuration file found from ``root``."""
    from pytest_qbench.history.database import ini_value

    found = ini_value(root, "qbench_frontend")
    return found[1] if found else None


def chosen_checkers(args: argparse.Namespace, root: Path) -> tuple[Path | None, list[str]]:
    """The front end's directory and the checkers to run: those named (``--checker``), else
    the default back-end ones and the front end's that apply, as ``--target`` asks.

    Raises:
        QBenchError: an unknown checker, or a front end asked for and not found.
    """
    from pytest_qbench.tools.frontend import find_frontend
    from pytest_qbench.tools.names import DEFAULT_TOOLS
    from pytest_qbench.tools.registry import registry
    from pytest_qbench.tools.runner import parse_tools
    from pytest_qbench.tools.select import checkers_for
    from pytest_qbench.tools.select import default_target
    from pytest_qbench.tools.select import targets_of
    from pytest_qbench.tools.spec import KINDS

    frontend = find_frontend(root, configured_frontend(root))
    target = args.target or default_target(frontend)
    if target != "backend" and frontend is None:
        raise QBenchError(
            f"--target {target}: no front end found under {root} (no package.json); name its "
            "directory with qbench_frontend in the pytest configuration, e.g. qbench_frontend = web",
            slug="check-options",
        )
    if args.checkers:
        return frontend, parse_tools(",".join(args.checkers), "--checker")
    names = list(DEFAULT_TOOLS) if target != "frontend" else []
    if target != "backend":
        names += checkers_for(registry(), KINDS, targets_of("frontend"), root, frontend)
    if not names:
        raise QBenchError(
            f"--target frontend: no front-end checker applies to {frontend} (no tsconfig.json, "
            "no eslint, oxlint nor biome configuration, no lint script running one of them nor "
            "prettier); name one with --checker",
            slug="check-options",
        )
    return frontend, names


def text_lines(report: CheckReport, max_items: int) -> list[str]:
    """Counts per tool and severity, then the diagnostics, errors first, at most ``max_items``."""
    from pytest_qbench.report.checks.intest import SEVERITY_ORDER

    lines = [
        count_line(check.run.tool, check.status, check.note, check.diagnostics)
        for check in report.checks[:MAX_COUNT_LINES]
    ]
    if len(report.checks) > MAX_COUNT_LINES:
        more = len(report.checks) - MAX_COUNT_LINES
        lines.append(f"... {more} more checkers (--json for all)")
    found = [item for check in report.checks for item in check.diagnostics]
    found.sort(key=lambda item: SEVERITY_ORDER[item.severity])
    lines.extend(diagnostic_line(item) for item in found[:max_items])
    if len(found) > max_items:
        lines.append(f"... {len(found) - max_items} more (--max-items, or --json for all)")
    return lines


def count_line(tool: str, status: str, note: str | None, found: list[Diagnostic]) -> str:
    """``ruff.lint: 2 errors, 1 warning`` or ``pyright.typecheck: not run: install pyright``."""
    from pytest_qbench.report.checks.intest import severity_text

    tool = bounded(tool)
    if status == "not_run":
        return f"{tool}: {bounded(note or '')}"
    counts: Counter[str] = Counter(item.severity for item in found)
    state = "crashed" if status == "crashed" else severity_text(counts)
    return f"{tool}: {state}"


def diagnostic_line(item: Diagnostic) -> str:
    """``a.py:5:12: error mypy.typecheck return-value: message`` (one line)."""
    where = ":".join(str(part) for part in (item.file, item.line, item.column) if part is not None)
    code = f" {bounded(item.code)}" if item.code else ""
    message = bounded(" ".join(item.message.split()))
    return f"{bounded(where) or '-'}: {item.severity} {bounded(item.tool)}{code}: {message}"


def bounded(text: str) -> str:
    """``text`` cut to ``MAX_PRINTED`` characters, ``…`` marking the cut."""
    from pytest_qbench.report.checks.spans import cut

    return cut(text, MAX_PRINTED)
