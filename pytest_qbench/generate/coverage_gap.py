"""Measure the target's line coverage by running pytest in a child with ``--qbench-cov``, and
read the lines executed back from the ``coverage.db`` that qbench writes in the run directory."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_qbench.core.supervise import Ending
from pytest_qbench.core.supervise import run
from pytest_qbench.generate._alarm import SECONDS
from pytest_qbench.generate.process import ALARM
from pytest_qbench.generate.process import child_env
from pytest_qbench.generate.process import python
from pytest_qbench.generate.pycache import prefix_of
from pytest_qbench.generate.target import Target
from pytest_qbench.report.coverage.reports import DATA_FILE


@dataclass
class Lines:
    """Statements and executed lines of each file of the target."""

    statements: dict[Path, set[int]]
    executed: dict[Path, set[int]] = field(default_factory=dict)

    def missing(self, path: Path) -> set[int]:
        """The statements of ``path`` not executed."""
        return self.statements[path] - self.executed.get(path, set())

    def percent(self) -> float:
        """Line coverage over every file, in percent (100 when there are no statements)."""
        total = sum(len(s) for s in self.statements.values())
        covered = sum(len(s & self.executed.get(p, set())) for p, s in self.statements.items())
        return 100.0 * covered / total if total else 100.0

    def adds(self, other: dict[Path, set[int]]) -> int:
        """How many statements ``other`` executes that these lines do not."""
        return sum(
            len((other.get(p, set()) & s) - self.executed.get(p, set()))
            for p, s in self.statements.items()
        )

    def absorb(self, other: dict[Path, set[int]]) -> None:
        """Count ``other``'s executed lines as covered."""
        for path, lines in other.items():
            self.executed.setdefault(path, set()).update(lines)


@dataclass(frozen=True)
class Measured:
    """A pytest run with coverage: how it ended and what it executed."""

    finished: Ending
    executed: dict[Path, set[int]]


def statements_of(target: Target, project: Path) -> Lines:
    """The statements of every file of the target, as coverage.py counts them (the project's
    coverage configuration, such as ``exclude_lines``, applies)."""
    import coverage

    cov = coverage.Coverage(data_file=None, config_file=_config_file(project))
    statements: dict[Path, set[int]] = {}
    for module in target.modules:
        _, lines, excluded, _, _ = cov.analysis2(str(module.path))
        statements[module.path] = set(lines) - set(excluded)
    return Lines(statements)


def _config_file(project: Path) -> str | bool:
    for name in (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml"):
        if (project / name).is_file():
            return str(project / name)
    return False


def run_with_coverage(
    target: Target,
    cwd: Path,
    args: list[str],
    scratch: Path,
    run_id: str,
    timeout: float,
    isolated: bool,
    extra_env: dict[str, str] | None = None,
    test_seconds: float | None = None,
    measure: bool = True,
) -> Measured:
    """Run ``pytest ARGS`` in ``cwd`` with qbench measuring the target's directories; the run
    directory goes to ``scratch``. ``isolated``: ignore any pytest configuration in ``cwd``.
    ``test_seconds``: each test is stopped that long after its set-up starts, inside the child
    (``_alarm``); ``timeout`` still bounds the whole child. ``measure`` false: a run whose
    outcomes alone are read (report.json), without coverage's tracing; ``executed`` is empty."""
    if test_seconds is not None:
        args = [*args, *ALARM]
        extra_env = {**(extra_env or {}), SECONDS: f"{test_seconds:g}"}
    sources = sorted({str(m.path.parent) for m in target.modules})
    command = [python(), "-m", "pytest", "-p", "qbench", "-q", "-p", "no:cacheprovider"]
    command += [f"--qbench-cov={s}" for s in sources] if measure else []
    command += [f"--qbench-dir={scratch}", f"--qbench-run-id={run_id}", "--color=no"]
    if isolated:
        ini = scratch / f"{run_id}.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        command += ["-c", str(ini), f"--rootdir={cwd}"]
    env = child_env(target.import_root, extra_env, prefix_of(scratch))
    # Every run, in the project's copy too (which has no .hypothesis), shares the generation's
    # storage: Hypothesis's Unicode tables cost seconds of CPU to build in each new directory,
    # and the user's own storage directory lies outside the copy.
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(scratch / "hypothesis")
    finished = run([*command, *args], cwd=cwd, env=env, timeout=timeout, name="generate")
    data_file = scratch / "runs" / run_id / DATA_FILE
    return Measured(finished, executed_lines(data_file, target) if measure else {})


def executed_lines(data_file: Path, target: Target) -> dict[Path, set[int]]:
    """The lines of the target's files that the data file records as executed."""
    import coverage

    if not data_file.is_file():
        return {}
    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    wanted = {str(m.path): m.real for m in target.modules}
    executed: dict[Path, set[int]] = {}
    for filename in data.measured_files():
        path = wanted.get(str(Path(filename).resolve()))
        if path is not None:
            executed[path] = set(data.lines(filename) or ())
    return executed
