"""An empty flaky list over fewer runs than asked says how many there were: `qbench flaky` and
the MCP server's `flaky_tests` said ``no flaky or broken test in the last 50 runs`` of an index
holding one run, a verdict of 50 runs the history could not give."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_qbench.cli import main


@pytest.mark.runs_pytest
def test_an_empty_flaky_list_says_how_many_runs_it_looked_at(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=only")
    capsys.readouterr()
    assert main(["flaky", "--runs", "50", "--dir", ".qbench"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no flaky or broken test in the 1 run indexed (50 asked)"), out
    assert main(["flaky", "--runs", "1", "--dir", ".qbench"]) == 0
    assert capsys.readouterr().out.startswith("no flaky or broken test in the last 1 runs")
    pytest.importorskip("mcp")
    from test_mcp_contract import call
    from test_mcp_contract import text_of

    from pytest_qbench.mcp.config import ServerConfig

    root = Path(pytester.path)
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)
    result = call(config, "flaky_tests", {"runs": 50})
    assert "no flaky or broken test in the 1 run indexed (50 asked)" in text_of(result)
