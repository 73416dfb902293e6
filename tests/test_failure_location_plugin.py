"""A failure in a test that a plugin generated (pytest-bdd's scenarios): pytest's item location is
in the plugin's installed module, and every frame of it is hidden."""

from __future__ import annotations

import textwrap

import pytest

from conftest import RunQBench


GENERATOR = """
    def scenario(name):
        def test_generated():
            __tracebackhide__ = True
            raise LookupError(f"Step definition is not found: {name}")

        return test_generated
"""


def test_a_generated_test_s_failure_is_not_located_in_site_packages(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Found on pytest-bdd: a missing step failed at
    ``.venv/lib/python3.11/site-packages/pytest_bdd/scenario.py:303`` in every report; pytest
    names no location (all frames hidden), and a failure's file is never a third party's: it is
    the test's own file, its line unknown."""
    plugin = pytester.mkdir("site-packages")
    (plugin / "fakebdd.py").write_text(textwrap.dedent(GENERATOR).lstrip(), encoding="utf-8")
    pytester.makeconftest("import sys, os\nsys.path.insert(0, os.path.abspath('site-packages'))")
    pytester.makepyfile(test_shop="from fakebdd import scenario\ntest_missing = scenario('x')\n")
    run = run_qbench()
    run.result.assert_outcomes(failed=1)
    failure = run.by_name("test_missing").failure
    assert failure is not None and failure.error_type == "LookupError"
    assert (failure.file, failure.line) == ("test_shop.py", None)
