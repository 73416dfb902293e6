"""The coverage total every output prints is coverage.py's own (``coverage report``'s TOTAL:
statements and branches together when branches are measured), and says what it counts. The
MCP run's line said ``Coverage: 76.92% (8/9 lines)`` with branches measured: 8/9 lines is
88.89%, the percentage was the lines' and branches' together (coverage.py's 77%), so it read
as a wrong sum. A real run through an in-process client, checked against coverage.py's JSON
report on the run's own data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp_helpers import quiet_children


pytest.importorskip("mcp")
pytest.importorskip("coverage")

from test_mcp_contract import call
from test_mcp_contract import text_of

from pytest_qbench.mcp.config import ServerConfig


PKG = """
def f(x):
    if x:
        y = 1
    else:
        y = 2
    return y


def g(x):
    if x > 0:
        x += 1
    return x
"""


def coverage_py_totals(project: Path) -> dict[str, float]:
    """coverage.py's JSON report's ``totals`` on the newest run's data, made in ``project``."""
    import coverage

    [data] = sorted(project.glob(".qbench/runs/*/coverage.db"), key=os.path.getmtime)[-1:]
    here = os.getcwd()
    os.chdir(project)
    try:
        cov = coverage.Coverage(data_file=str(data), config_file=str(project / "pyproject.toml"))
        cov.load()
        cov.json_report(outfile="cov.json")
        totals: dict[str, float] = json.loads(Path("cov.json").read_text())["totals"]
    finally:
        os.chdir(here)
    return totals


@pytest.mark.runs_pytest
def test_the_mcp_coverage_line_is_coverage_pys_total_and_says_what_it_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet_children(monkeypatch)
    monkeypatch.delenv("QBENCH_DB", raising=False)
    for branch in (False, True):
        root = (tmp_path / f"branch-{branch}").resolve()
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text(PKG)
        (root / "test_pkg.py").write_text(
            "from pkg import f, g\n\n\ndef test_f():\n    assert f(1) == 1 and g(1) == 2\n"
        )
        (root / "pyproject.toml").write_text(
            f"[tool.coverage.run]\nbranch = {str(branch).lower()}\n"
            "[tool.pytest.ini_options]\npythonpath = ['.']\n"
        )
        config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)
        result = call(config, "run_test_workflow", {"coverage_source": ["pkg"]})
        text = text_of(result)
        totals = coverage_py_totals(root)
        expected = (
            f"Coverage: {totals['percent_covered']:.2f}% "
            f"({totals['covered_lines']:.0f}/{totals['num_statements']:.0f} lines"
        )
        if branch:
            expected += f", {totals['covered_branches']:.0f}/{totals['num_branches']:.0f} branches"
        assert f"{expected})" in text, text
        content = result.structured_content
        assert isinstance(content, dict)
        assert content["coverage"]["percentage"] == totals["percent_covered"]
        assert content["coverage"]["branches_total"] == (totals["num_branches"] if branch else None)
