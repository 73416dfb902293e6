"""``qbench`` imports a subcommand's machinery only when that subcommand runs: ``qbench --help``
loads neither the static checkers nor pydantic, ``qbench render`` not the checkers (each in a
fresh interpreter, by what ``sys.modules`` holds, not by time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_store import report_of
from test_store import result

from pytest_qbench.report import store


CHECKERS = "pytest_qbench.tools."
NOT_MACHINERY = {CHECKERS + "names"}
"""The checkers' names, and how a report shows their findings (the digest uses it)."""
LOADED = """
import contextlib, io, json, sys
from pytest_qbench.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        status = main({argv!r})
    except SystemExit as exc:
        status = exc.code
print(json.dumps({{"status": status, "modules": sorted(sys.modules)}}))
"""


def run_qbench(argv: list[str], cwd: Path) -> list[str]:
    """The modules loaded by ``qbench ARGV`` in a fresh interpreter (which must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        timeout=600,
    )
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["status"] in (0, None), done.stderr
    modules: list[str] = answer["modules"]
    return modules


def checkers(modules: list[str]) -> list[str]:
    """The static checkers' machinery among ``modules`` (their names alone are not)."""
    return [m for m in modules if m.startswith(CHECKERS) and m not in NOT_MACHINERY]


def test_help_loads_no_subcommand_machinery(tmp_path: Path) -> None:
    modules = run_qbench(["--help"], tmp_path)
    assert "pytest_qbench.cli" in modules
    assert checkers(modules) == []
    assert [m for m in modules if m.split(".")[0] in ("pydantic", "jinja2", "sqlite3")] == []


@pytest.mark.parametrize("output", [["-o", "report.md"], ["--html", "report.html"]])
def test_render_loads_no_checker(tmp_path: Path, output: list[str]) -> None:
    report = report_of([result("test_a"), result("test_b", "failed")])
    store.write_report_json(tmp_path / "report.json", report, None)
    modules = run_qbench(["render", "report.json", *output], tmp_path)
    assert (tmp_path / output[1]).is_file()
    assert "pytest_qbench.report.render" in modules
    assert checkers(modules) == []


def test_render_html_outside_a_run_store_loads_no_history_index(tmp_path: Path) -> None:
    """The HTML page of a report that is in no run store has no trend to show: the history
    index's readers (and SQLite) are not imported for it."""
    report = report_of([result("test_a"), result("test_b", "failed")])
    store.write_report_json(tmp_path / "report.json", report, None)
    modules = run_qbench(["render", "report.json", "--html", "report.html"], tmp_path)
    assert (tmp_path / "report.html").is_file()
    index = ("sqlite3", "pytest_qbench.history.trend", "pytest_qbench.history.queries")
    assert [m for m in modules if m in index] == []
