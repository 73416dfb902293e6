"""tox's ``pytestmin`` environment runs the tests ``tests/pytest_api.py`` chooses: every name it
gives is a test that exists, so a renamed test cannot leave a feature untested on pytest 8.0."""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest
from pytest_api import ONE_PER_FEATURE
from pytest_api import WHOLE_MODULES


TESTS = Path(__file__).parent


def defined_tests(module: str) -> set[str]:
    """The names of the test functions (and methods) defined in the test module ``module``."""
    tree = ast.parse((TESTS / module).read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


@pytest.mark.parametrize("module", sorted(WHOLE_MODULES | ONE_PER_FEATURE.keys()))
def test_every_chosen_test_exists(module: str) -> None:
    names = defined_tests(module)
    assert names, f"{module} has no tests"
    missing = set(ONE_PER_FEATURE.get(module, ())) - names
    assert not missing, f"tests/pytest_api.py names tests {module} no longer has: {missing}"


def test_no_module_is_chosen_twice() -> None:
    assert not WHOLE_MODULES & ONE_PER_FEATURE.keys()


def test_pytestmin_runs_the_chosen_tests() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(TESTS.parent / "tox.ini", encoding="utf-8")
    assert '-m "pytest_api"' in tox["testenv:pytestmin"]["commands"]
