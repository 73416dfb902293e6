"""``qbench coverage RUN``: coverage.py's own report of a stored run's coverage.

The run directory keeps the data qbench measured (``coverage.db``); coverage.py loads it and
writes its report (`pytest_qbench.report.coverage.reports`), exactly as ``coverage xml`` would on
the same data file. The measured source files must still be where they were.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_output
from pytest_qbench.core.numbers import parse_path
from pytest_qbench.report.coverage.reports import DATA_FILE
from pytest_qbench.report.coverage.reports import REPORT_TYPES
from pytest_qbench.report.coverage.reports import CoverageReportSpec


def add_coverage_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``qbench coverage``'s arguments."""
    parser = sub.add_parser(
        "coverage",
        help="Write coverage.py's report (xml, lcov, html, json, term) of a stored run",
        description="Load the coverage data a run kept (RUN_DIR/coverage.db, written when qbench "
        "measured with --qbench-cov) and write coverage.py's own report of it: xml (Cobertura, "
        "for Codecov and GitLab), lcov, html, json, or term / term-missing on stdout. RUN is a "
        "run directory, or a run in --dir: a run id, a unique prefix of one, 'last' or 'last~N' "
        "(N runs before the last, in the order the history index holds them: the order they were "
        "indexed in). The project's coverage configuration "
        "(.coveragerc, pyproject.toml) in the current directory applies.",
    )
    parser.add_argument("run", metavar="RUN_DIR|RUN")
    parser.add_argument(
        "--format",
        "-f",
        choices=REPORT_TYPES,
        default="term-missing",
        help="Which report. Default: %(default)s",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=parse_output,
        help="The file (html: the directory) to write. Default: coverage.py's configured "
        "output, else coverage.xml, coverage.lcov, htmlcov, coverage.json",
    )
    parser.add_argument(
        "--dir", type=parse_path, default=Path(".qbench"), help="Run store. Default: .qbench"
    )
    parser.set_defaults(func=cmd_coverage)


def cmd_coverage(args: argparse.Namespace) -> int:
    """``qbench coverage``."""
    import coverage

    from pytest_qbench.report.coverage.reports import write_coverage_report

    data_file = find_data_file(args.run, args.dir)
    spec = CoverageReportSpec(args.format, args.output)
    if spec.dest is not None and spec.to_terminal:
        raise QBenchError(
            f"--output does not apply to --format {args.format} (printed on stdout); "
            "use --format xml, lcov, html or json to write a file",
            slug="coverage-report",
        )
    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    path = write_coverage_report(cov, spec, Path.cwd(), sys.stdout)
    if path is not None:
        print(f"qbench: wrote coverage {args.format} report of {data_file.parent.name}: {path}")
    return OK


def find_data_file(run: str, qbench_dir: Path) -> Path:
    """The run's ``coverage.db``: RUN as a run directory, else a run in ``qbench_dir`` named as
    every command names one (``report.runref``: an id, a unique prefix, ``last``, ``last~N``);
    `QBenchError` names what is missing."""
    given = Path(run)
    from pytest_qbench.report.runref import find_run_dir

    if given.is_dir():
        run_dir = given
    else:
        run_dir = find_run_dir(qbench_dir, run, indexed=_index_order(qbench_dir, run))
    data_file = run_dir / DATA_FILE
    if not data_file.is_file():
        raise QBenchError(
            f"run {run_dir} has no coverage data ({DATA_FILE}); qbench keeps it when it "
            "measures (--qbench-cov), not when pytest-cov does",
            slug="coverage-data",
        )
    return data_file


def _index_order(qbench_dir: Path, run: str) -> list[str]:
    """For ``last`` and ``last~N``: the history index's order of the runs (the order they were
    indexed in, as ``qbench show last`` names them), none without an index."""
    from pytest_qbench.report.runref import LAST

    if not LAST.match(run):
        return []
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.files import index_order

    return index_order(qbench_dir, configured_db(None, Path.cwd()))


__all__ = ["add_coverage_parser", "cmd_coverage", "find_data_file"]
