"""run_test_workflow's ``coverage_source`` when the project's configuration has pytest-cov
measure every run (``addopts = --cov=...``): qbench then reads pytest-cov's data and does not
measure what ``--qbench-cov`` names, so the sources the assistant named were never measured.
The tool said ``Coverage: 95.62%``, success, for pytest-cov's sources as if they were the ones
asked (trial11: parse's ``addopts = --cov=parse``, ``coverage_source: ["tests"]``); it is now a
tool error that says so and names the run. Sources pytest-cov measures too are honoured. A
real run through an in-process client."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mcp_helpers import quiet_children


pytest.importorskip("mcp")
pytest.importorskip("pytest_cov")

from test_mcp_contract import call
from test_mcp_contract import text_of

from pytest_qbench.mcp.config import ServerConfig


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServerConfig:
    """A project whose pytest.ini has pytest-cov measure ``shop`` in every run."""
    quiet_children(monkeypatch)
    monkeypatch.delenv("QBENCH_DB", raising=False)
    root = (tmp_path / "project").resolve()
    (root / "helpers").mkdir(parents=True)
    (root / "helpers" / "__init__.py").write_text("def one():\n    return 1\n")
    (root / "shop.py").write_text("def used():\n    return 1\n\n\ndef unused():\n    return 2\n")
    (root / "test_shop.py").write_text(
        textwrap.dedent("""
            import helpers
            import shop

            def test_used():
                assert shop.used() == helpers.one()
        """)
    )
    (root / "pytest.ini").write_text(
        "[pytest]\npythonpath = .\naddopts = -p pytest_cov.plugin --cov=shop\n"
    )
    return ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)


@pytest.mark.runs_pytest
def test_sources_pytest_cov_does_not_measure_are_refused_not_reported(
    config: ServerConfig,
) -> None:
    result = call(config, "run_test_workflow", {"coverage_source": ["helpers"]})
    assert result.is_error
    text = text_of(result)
    assert "coverage source helpers (coverage_source" in text, text
    assert "was not measured" in text, text
    assert "pytest-cov measure this run (--cov: shop)" in text, text
    assert "1 passed" in text, text  # the run's own line, so its results are not lost


@pytest.mark.runs_pytest
def test_the_sources_pytest_cov_measures_are_honoured(config: ServerConfig) -> None:
    result = call(config, "run_test_workflow", {"coverage_source": ["shop"]})
    assert not result.is_error, text_of(result)
    content = result.structured_content
    assert isinstance(content, dict)
    assert content["success"] is True
    assert content["coverage"]["lines_total"] == 4
