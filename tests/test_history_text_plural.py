"""``qbench runs`` and ``qbench diff`` count one test as ``1 test`` (found on click, where a
``--sw`` run of one test was listed as ``1 tests: 1 failed``). Real runs, a real index."""

from __future__ import annotations

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.exit_codes import ERR


def test_one_test_is_singular(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile("def test_one():\n    assert False\n")
    pytester.runpytest_subprocess("-p", "qbench").assert_outcomes(failed=1)
    pytester.runpytest_subprocess("-p", "qbench").assert_outcomes(failed=1)
    store = str(pytester.path / ".qbench")
    main(["runs", "--dir", store])
    listed = capsys.readouterr().out
    assert "1 test: 1 failed" in listed and "1 tests" not in listed, listed
    assert main(["diff", "last~1", "last", "--dir", store]) in (0, ERR)
    compared = capsys.readouterr().out
    assert "1 test: 1 failed" in compared and "1 tests" not in compared, compared
