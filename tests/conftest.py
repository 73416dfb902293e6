from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import json
import pkgutil
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.source import getstatementrange_ast as statement_range
from child_pytest import CI_MARKERS
from hypothesis import HealthCheck
from hypothesis import settings
from pytest_api import chooses_from
from pytest_api import on_oldest_pytest

from pytest_qbench.report.models import TestReport
from pytest_qbench.report.models import TestResult
from pytest_qbench.report.shapes import compact


pytest_plugins = [
    "pytester",
    "postgres_server",
    "browser",
    "node_tools",
    "xdist_groups",
    "chmod_binds",
    "kept_modules",
    "rewrite_cache",
    "shared_pycache",
]


settings.register_profile(
    "qbench-tests", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("qbench-tests")
"""Hypothesis' two verdicts that time decides (a 200 ms deadline per example, and input
generation "too slow") are off: on 2 busy cores they failed property tests whose code was right
(a test's verdict must never depend on the machine's load)."""


RUN_PACKAGES = ("core", "report", "history", "plugin", "tools", "evaluation")
"""The packages of ``pytest_qbench`` a ``pytest -p qbench`` run imports from (not the CLI, the MCP
server or ``qbench generate``, which tests run in processes of their own)."""


@pytest.fixture(scope="session", autouse=True)
def import_what_runs_import() -> None:
    """Import every module of ``RUN_PACKAGES`` into this process once, before the first test (in
    a test process: not in pytest-xdist's controller, which runs none).

    An in-process ``pytester.runpytest`` restores ``sys.modules`` when it ends: each module the
    run imported that this process had not (qbench's plugin and session modules, the history
    index, Jinja...) is dropped and imported again by the next run, 0.3 to 0.4 s of CPU a run
    (0.45 to 0.55 s for a two-test run, 0.11 to 0.12 s with them imported before). A module an
    extra provides that is not installed (pytestmin has none) is left out. The checks that a run
    imports something late (``test_plugin.py``, ``test_run_imports.py``...) run in processes of
    their own, which this does not touch."""
    for package in RUN_PACKAGES:
        root = importlib.import_module(f"pytest_qbench.{package}")
        for module in pkgutil.walk_packages(root.__path__, f"{root.__name__}."):
            with contextlib.suppress(ImportError):
                importlib.import_module(module.name)


@functools.lru_cache(maxsize=64)
def _parsed(content: str) -> ast.Module:
    with warnings.catch_warnings():  # as pytest parses it (pytest#4260)
        warnings.simplefilter("ignore")
        return ast.parse(content, "source", "exec")


@pytest.fixture(scope="session", autouse=True)
def parse_traceback_sources_once() -> Iterator[None]:
    """In this process, pytest parses the source of a traceback's file once, not at every
    in-process run that formats a traceback through it.

    An in-process run that ends interrupted (a collection error, ``pytest.exit``) formats the
    whole traceback of the interruption (pytest's ``pytest_keyboard_interrupt``), through
    pytest's and pluggy's own modules: each formatting parses those files again and walks
    their syntax trees (0.2 s of CPU a run; 17 runs of test_agent_cases.py, 7.7 -> 4.5 s).
    The cache is keyed by the source text itself, so a file a test rewrites is parsed anew;
    what pytest prints does not change (``getstatementrange_ast`` gets the tree it would have
    parsed). Child processes are not touched."""

    def getstatementrange_ast(
        lineno: int, source: Any, assertion: bool = False, astnode: ast.AST | None = None
    ) -> tuple[ast.AST, int, int]:
        if astnode is None:
            with contextlib.suppress(SyntaxError):  # pytest's own parse raises it again
                astnode = _parsed(str(source))
        return statement_range(lineno, source, assertion, astnode)

    with pytest.MonkeyPatch.context() as patch:
        # where pytest's traceback formatting looks it up (raising=False: a pytest that no
        # longer does so is simply not sped up)
        patch.setattr(
            "_pytest._code.code.getstatementrange_ast", getstatementrange_ast, raising=False
        )
        yield


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the marker given here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses ``pytester`` runs pytest with qbench: it is marked ``runs_pytest``.
    Those of them that tox's pytestmin env runs on the oldest pytest (``pytest_api.py`` chooses
    them) are marked ``pytest_api``. The longest tests (``qbench
    generate``'s end-to-end runs, marked ``generation``) go first, the rest in their order: under
    pytest-xdist no worker is left running one alone at the end."""
    for item in items:
        if "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.runs_pytest)
        name = getattr(item, "originalname", item.name)
        if item.get_closest_marker("runs_pytest") and on_oldest_pytest(item.path.name, name):
            item.add_marker(pytest.mark.pytest_api)  # tox's pytestmin runs these (pytest_api.py)
    items.sort(key=lambda item: item.get_closest_marker("generation") is None)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m pytest_api`` alone (tox's pytestmin) a test module that holds none of the tests
    ``pytest_api.py`` chooses is not collected: importing and rewriting the asserts of every test
    module cost each xdist worker about 15 s of CPU (two thirds in pytest's assertion rewriting,
    which no cache spares under PYTHONDONTWRITEBYTECODE), for tests -m then deselects."""
    if config.getoption("markexpr") != "pytest_api" or collection_path.suffix != ".py":
        return None
    name = collection_path.name
    if name.startswith("test_") and not chooses_from(name):
        return True
    return None


@pytest.fixture(scope="session", autouse=True)
def shared_mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One mypy cache for every mypy the tests of this process run (``MYPY_CACHE_DIR``): each
    runs in a fresh project, where mypy would build its cache of the standard library's stubs
    again (seconds each). mypy checks each cached module against its source, so a project's own
    modules are checked anew; what it prints does not depend on the cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MYPY_CACHE_DIR", str(tmp_path_factory.mktemp("mypy-cache")))
        yield


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester with no plugin autoloading (so every run says `-p qbench` itself), fixed width,
    no colour, and no CI variables leaking in from the outer run."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("COLUMNS", "80")
    for name in ("NO_COLOR", "FORCE_COLOR", "PYTEST_ADDOPTS", "GITHUB_STEP_SUMMARY", *CI_MARKERS):
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
        text = (self.run_dir / "results.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.split("\n") if line]  # not splitlines: U+2028


RunQBench = Callable[..., QBenchRun]


def compact_report(report: TestReport) -> dict[str, Any]:
    """What ``report.json`` holds for ``report``: its JSON, each result without the fields at
    their default."""
    data = report.model_dump(mode="json")
    data["results"] = [compact("TestResult", result) for result in data["results"]]
    return data


def find_run_dir(root: Path, name: str | None = None) -> Path:
    if name is not None:
        return root / ".qbench" / "runs" / name
    runs = sorted((root / ".qbench" / "runs").iterdir())
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture
def run_qbench(pytester: pytest.Pytester) -> RunQBench:
    """Run pytest with ``-p qbench`` (in-process, or in a subprocess with ``subprocess=True``) and
    parse the report it wrote."""

    def run(*args: str, subprocess: bool = False, run_dir: str | None = None) -> QBenchRun:
        runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
        result = runner("-p", "qbench", *args)
        run_dir_path = find_run_dir(pytester.path, run_dir)
        text = (run_dir_path / "report.json").read_text(encoding="utf-8")
        report = TestReport.model_validate_json(text)
        # report.json is built from records, never from the model: it must be the model's fixed
        # point, field for field (what TestReport.model_dump_json() would write), except that a
        # result leaves out its fields at their default; read back, it is the same model.
        assert json.loads(text) == compact_report(report)
        assert TestReport.model_validate(compact_report(report)) == report
        return QBenchRun(result, run_dir_path, report)

    return run


ALL_OUTCOMES = """
    import pytest

    def test_pass():
        print("hello out")

    def test_fail():
        x = 1
        assert x == 2, "x must be two"

    def test_raise():
        raise ValueError("bad value")

    @pytest.mark.skip(reason="not today")
    def test_skip():
        pass

    def test_skip_inside():
        pytest.skip("inside skip")

    @pytest.mark.xfail(reason="known bug")
    def test_xfail():
        assert False

    @pytest.mark.xfail(reason="fixed?")
    def test_xpass():
        pass

    @pytest.mark.xfail(reason="must fail", strict=True)
    def test_xpass_strict():
        pass

    def test_imperative_xfail():
        pytest.xfail("not ready")

    @pytest.fixture
    def broken_setup():
        raise RuntimeError("setup broke")

    def test_setup_error(broken_setup):
        pass

    @pytest.fixture
    def broken_teardown():
        yield
        raise OSError("teardown broke")

    def test_teardown_error(broken_teardown):
        pass

    def test_fail_and_teardown_error(broken_teardown):
        assert 0
"""


def line_of(text: str, source: str = ALL_OUTCOMES) -> int:
    """1-based line of ``text`` in a file pytester wrote from ``source``."""
    import textwrap

    lines = textwrap.dedent(source).strip("\n").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


SUMMARY_KEYS = {
    "passed": "passed",
    "failed": "failed",
    "errors": "errors",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "deselected": "deselected",
    "warnings": "warnings",
    "rerun": "reruns",
    "subtests": "subtests_passed",  # parseoutcomes reads "3 subtests passed" as subtests=3
}


def assert_summary_matches_pytest(run: QBenchRun) -> None:
    """Every count pytest prints equals the report's, and the report has nothing pytest lacks."""
    outcomes = run.result.parseoutcomes()
    summary = run.report.summary
    for word, field in SUMMARY_KEYS.items():
        assert getattr(summary, field) == outcomes.get(word, 0), (word, outcomes, summary)
