"""A failure in a test that a plugin generated (pytest-bdd's scenarios): pytest's item location is
in the plugin's installed module, and every frame of it is hidden."""

from __future__ import annotations

import json
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


def test_a_generated_test_is_filed_under_the_module_that_made_it(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Found on pytest-bdd: every scenario's result (passed or failed) was filed under
    ``.venv/lib/python3.11/site-packages/pytest_bdd/scenario.py`` line 303 (pytest's item
    location), in report.json, the CTRF ``filePath`` and the HTML page's files, where pytest's
    -rA lines and junitxml's classname name the test module that calls ``scenarios()``."""
    plugin = pytester.mkdir("site-packages")
    (plugin / "fakebdd.py").write_text(
        "def scenario(fails):\n    def test_generated():\n        assert not fails\n\n"
        "    return test_generated\n",
        encoding="utf-8",
    )
    pytester.makeconftest("import sys, os\nsys.path.insert(0, os.path.abspath('site-packages'))")
    pytester.makepyfile(
        test_shop="from fakebdd import scenario\n"
        "test_ok = scenario(False)\ntest_bad = scenario(True)\n"
    )
    run = run_qbench("--qbench-ctrf=ctrf.json")
    run.result.assert_outcomes(passed=1, failed=1)
    assert {(r.test_name, r.file, r.line) for r in run.report.results} == {
        ("test_ok", "test_shop.py", None),
        ("test_bad", "test_shop.py", None),
    }
    ctrf = json.loads((pytester.path / "ctrf.json").read_text(encoding="utf-8"))
    assert {t["filePath"] for t in ctrf["results"]["tests"]} == {"test_shop.py"}


def test_a_project_directory_ending_in_packages_is_the_project_s(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A test in the project's own ``my-packages/`` directory is not a plugin's: its result and
    its failure keep their line. Two checks decided it before, and the accumulator's
    (``"-packages/" in file``) took the directory for ``site-packages`` (one helper now:
    ``in_installed_package``)."""
    tests = pytester.mkdir("my-packages")
    (tests / "test_local.py").write_text(
        "def test_ok():\n    pass\n\n\ndef test_bad():\n    assert 1 == 2\n", encoding="utf-8"
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    assert {(r.test_name, r.file, r.line) for r in run.report.results} == {
        ("test_ok", "my-packages/test_local.py", 1),
        ("test_bad", "my-packages/test_local.py", 5),
    }
    failure = run.by_name("test_bad").failure
    assert failure is not None and (failure.file, failure.line) == ("my-packages/test_local.py", 6)
