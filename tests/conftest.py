from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.models import TestReport
from pytest_qbench.models import TestResult


pytest_plugins = ["pytester"]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester with no plugin autoloading (so every run says `-p qbench` itself), fixed width,
    no colour, and no CI variables leaking in from the outer run."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("COLUMNS", "80")
    for name in ("NO_COLOR", "FORCE_COLOR", "PYTEST_ADDOPTS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    return pytester


@dataclass
class QBenchRun:
    """A pytest run with qbench, and what it wrote."""

    result: pytest.RunResult
    run_dir: Path
    report: TestReport

    def by_name(self, suffix: str) -> TestResult:
        """The one result whose nodeid ends with ``suffix``."""
        found = [r for r in self.report.results if r.nodeid.endswith(suffix)]
        assert len(found) == 1, [r.nodeid for r in self.report.results]
        return found[0]

    @property
    def markdown(self) -> str:
        return (self.run_dir / "report.md").read_text(encoding="utf-8")

    def stream_records(self) -> list[dict[str, Any]]:
        lines = (self.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


RunQBench = Callable[..., QBenchRun]


def find_run_dir(root: Path) -> Path:
    runs = sorted((root / ".qbench" / "runs").iterdir())
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture
def run_qbench(pytester: pytest.Pytester) -> RunQBench:
    """Run pytest with ``-p qbench`` (in-process, or in a subprocess with ``subprocess=True``) and
    parse the report it wrote."""

    def run(*args: str, subprocess: bool = False) -> QBenchRun:
        runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
        result = runner("-p", "qbench", *args)
        run_dir = find_run_dir(pytester.path)
        text = (run_dir / "report.json").read_text(encoding="utf-8")
        return QBenchRun(result, run_dir, TestReport.model_validate_json(text))

    return run


def outcomes_of(result: pytest.RunResult) -> dict[str, int]:
    """pytest's own closing line, parsed (``errors``, ``warnings`` normalised to plural)."""
    return result.parseoutcomes()
