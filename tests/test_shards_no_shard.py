"""``qbench shards`` on a run store whose runs were no shards: one plain sentence."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import ERR


def test_no_sharded_run_says_so_plainly(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found on click: ``no indexed run was not a CI shard`` said the opposite of what it meant."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    pytester.runpytest_subprocess("-p", "qbench").assert_outcomes(passed=1)
    assert main(["shards", "--dir", str(pytester.path / ".qbench")]) == ERR
    err = capsys.readouterr().err
    assert err.startswith("qbench: error: no indexed run was a CI shard; run pytest with"), err
    assert "not a CI shard" not in err
