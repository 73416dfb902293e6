"""``qbench ingest-sarif`` (issue 13): SARIF files read into a check run of the run store, each
file copied beside ``check.json`` as the raw log its diagnostics came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_qbench.core.errors import SarifFormatError
from pytest_qbench.report import msbuild
from pytest_qbench.report.checks.sarif import parse_sarif
from pytest_qbench.report.checks.stored import finish_check_run
from pytest_qbench.report.checks.stored import new_check_dir
from pytest_qbench.report.checks.stored import now
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import CheckRun
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import RunMeta


@dataclass(frozen=True)
class SarifFile:
    """One SARIF file, read and checked: its bytes and each run's tool and diagnostics."""

    path: Path
    raw: bytes
    runs: list[tuple[str, list[Diagnostic]]]


def read_sarif_file(path: Path, cwd: Path) -> SarifFile:
    """Read and check one SARIF file.

    Raises:
        SarifFormatError: the file cannot be read or is not SARIF 2.1.0.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SarifFormatError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if path.suffix.lower() in msbuild.LOG_SUFFIXES:  # an MSBuild build log, not SARIF
        return SarifFile(path, raw, [(msbuild.TOOL, msbuild.parse_msbuild(raw, cwd))])
    return SarifFile(path, raw, list(parse_sarif(raw, str(path), cwd)))


def ingest_sarif(paths: list[Path], cwd: Path, qbench_dir: Path) -> tuple[CheckReport, Path]:
    """Every file read first (a malformed one stores nothing), then stored as one check run."""
    started = now()
    files = [read_sarif_file(path, cwd) for path in paths]
    directory = new_check_dir(qbench_dir, started)
    checks = []
    for index, sarif in enumerate(files, 1):
        log = f"sarif-{index}-{sarif.path.name}"
        (directory / log).write_bytes(sarif.raw)
        checks.extend(_check_runs(sarif, log, directory.name, cwd))
    command = ["qbench", "ingest-sarif", *map(str, paths)]
    return finish_check_run(directory, started, cwd, command, [], checks), directory


def _check_runs(sarif: SarifFile, log: str, run_id: str, cwd: Path) -> list[CheckRun]:
    """One check run per SARIF run, its results as its diagnostics."""
    checks = []
    for tool, found in sarif.runs:
        meta = RunMeta(
            run_id=run_id,
            tool=tool,
            started_at=now(),
            completed_at=now(),
            cwd=str(cwd),
            command=["qbench", "ingest-sarif", str(sarif.path)],
        )
        failed = any(item.severity == "error" for item in found)
        checks.append(
            CheckRun(run=meta, status="failed" if failed else "clean", log=log, diagnostics=found)
        )
    return checks
