"""Whether two checkouts of qbench write the same outputs for a varied suite.

Runs a suite of 49 tests and a doctest (passes, failures ten frames deep and chained, setup
and teardown errors, skips, xfails, xpasses, parametrized tests, a ``qbench_case`` marker,
docstrings, captured output, user properties, pytest 9's subtests, secrets set by a test and by
a fixture, a warning, an attachment, a test that fails once, tests of 20 and 30 ms, a
``unittest.TestCase`` and a failing doctest) with each checkout (on ``PYTHONPATH``) in the same
directory, serially, with ``-n 2``, with ``--reruns 1`` and with both, and compares
results.jsonl, report.json, report.md and the index's ``results``, ``fingerprints``, ``tests``
and ``diagnostics`` rows: run ids, dates, floats and addresses aside, report.md's slowest tests
aside; under xdist lines, lists and rows sorted and the index's integer keys aside.
``--wrap``: with a root conftest holding a plain ``pytest_runtest_makereport`` (qbench's
makereport is then a wrapper). Needs pytest-xdist and pytest-rerunfailures.

Usage::

    python benchmarks/output_compare.py /tmp/old /tmp/new
    python benchmarks/output_compare.py /tmp/old /tmp/new --wrap --modes serial xdist
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any


MODES = {
    "serial": [],
    "xdist": ["-n", "2"],
    "reruns": ["--reruns", "1"],
    "both": ["-n", "2", "--reruns", "1"],
}
TABLES = ("results", "fingerprints", "tests", "diagnostics")
XDIST_KEYS = ("id", "run_pk", "result_id", "test_id", "test_ref")
MASKS = (
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}"), "RUNID"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.]+(?:Z|[+-]\d\d:\d\d)?"), "DATE"),
    (re.compile(r"0x[0-9a-f]+"), "0xADDR"),
    (re.compile(r"\d+\.\d+"), "F"),
    (re.compile(r"pytest-of-[^/]+/pytest-\d+"), "PYTMP"),
)
WORKER = re.compile(r"gw\d")
INI = """\
[pytest]
markers =
    slow: slow tests
"""
CONFTEST = """\
import os
import pytest

@pytest.fixture
def secret_fixture(monkeypatch):
    monkeypatch.setenv("FIXTURE_API_KEY", "fixture-secret-0123456789")
    yield

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup broke")

@pytest.fixture
def broken_teardown():
    yield
    raise ValueError("teardown broke")
"""
PLAIN = """\
def test_p0(): pass
def test_p1(): pass
def test_p2(): pass
def test_p3(): pass
def test_p4(): pass
def test_p5(): pass
def test_p6(): pass
def test_p7(): pass
def test_p8(): pass
def test_p9(): pass
"""
VARIED = '''\
"""Varied outcomes."""
import os
import sys
import time
import unittest
import warnings

import pytest


def _deep(level):
    if level == 0:
        raise KeyError(f"deep {level}")
    _deep(level - 1)


def test_recursion():
    """Fails ten frames deep."""
    _deep(9)


def test_chained():
    try:
        {}["missing"]
    except KeyError as exc:
        raise ValueError("chained") from exc


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    pass


def test_fail_and_teardown(broken_teardown):
    assert 1 == 2, "both"


@pytest.mark.skip(reason="marked")
def test_skip_mark():
    pass


@pytest.mark.skipif(True, reason="skipif")
def test_skipif():
    pass


def test_skip_inline():
    pytest.skip("inline")


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert 0


@pytest.mark.xfail(reason="passes")
def test_xpass():
    pass


@pytest.mark.xfail(reason="strict one", strict=True)
def test_xpass_strict():
    pass


@pytest.fixture
def xfail_in_setup():
    pytest.xfail("setup xfails")


def test_xfail_setup(xfail_in_setup):
    pass


def test_xfail_call():
    pytest.xfail("called")


@pytest.mark.xfail(raises=TypeError, reason="wrong type")
def test_xfail_wrong_raises():
    raise ValueError("not a type error")


@pytest.mark.parametrize("n", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_param(n):
    assert n != 2


@pytest.mark.qbench_case(key="K-1", title="a case", priority="high")
def test_case():
    """A documented case.

    With two paragraphs.
    """


def test_output(record_property):
    print("to stdout")
    sys.stderr.write("to stderr\\n")
    record_property("answer", 42)
    record_property("odd", object)


def test_subtests(subtests):
    for i in range(3):
        with subtests.test(i=i):
            assert i != 1


def test_secret_by_test(monkeypatch):
    monkeypatch.setenv("MY_SECRET_TOKEN", "test-secret-9876543210")
    assert os.environ["MY_SECRET_TOKEN"] == "nope"


def test_secret_by_fixture(secret_fixture):
    print("key is", os.environ["FIXTURE_API_KEY"])
    assert False, os.environ["FIXTURE_API_KEY"]


def test_warning():
    warnings.warn("careful", UserWarning)


def test_attach(qbench):
    qbench.attach(b"hello", name="hello.txt")


def test_fails_once():
    marker = os.environ["FAILS_ONCE"]
    if not os.path.exists(marker):
        open(marker, "w").close()
        assert False, "first time"


class TestClass:
    def test_method(self):
        assert True

    def test_method_fails(self):
        assert [1, 2] == [1, 3]


def test_slow_20():
    time.sleep(0.02)


def test_slow_30():
    time.sleep(0.03)


class TestUnit(unittest.TestCase):
    def test_unit_ok(self):
        self.assertTrue(True)

    def test_unit_fail(self):
        self.assertEqual(1, 2)

    def test_unit_error(self):
        raise OSError("unit error")

    @unittest.skip("unit skip")
    def test_unit_skip(self):
        pass

    def test_unit_subtest(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)


def doubled(x):
    """
    >>> doubled(2)
    4
    >>> doubled(3)
    7
    """
    return x * 2
'''

WRAP_CONFTEST = "\n\ndef pytest_runtest_makereport(item, call):\n    pass\n"

SUITE = {
    "pytest.ini": INI,
    "tests/conftest.py": CONFTEST,
    "tests/test_plain.py": PLAIN,
    "tests/test_varied.py": VARIED,
}


def masked(text: str) -> str:
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    return text


def normal(value: Any, xdist: bool) -> Any:
    """``value`` with what differs between two runs of one checkout masked."""
    if isinstance(value, float):
        return 0.0
    if isinstance(value, str):
        text = masked(value)
        return WORKER.sub("gw?", text) if xdist else text
    if isinstance(value, list):
        items = [normal(item, xdist) for item in value]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True)) if xdist else items
    if isinstance(value, dict):
        return {
            key: normal(item, xdist)
            for key, item in value.items()
            if not (xdist and key in XDIST_KEYS)
        }
    return value


def write_suite(where: Path, wrap: bool) -> None:
    for name, text in SUITE.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if wrap and name == "tests/conftest.py":
            text += WRAP_CONFTEST
        path.write_text(text, encoding="utf-8")


def outputs(python: str, checkout: str, mode: str, wrap: bool, where: Path) -> dict[str, Any]:
    """The normalized outputs of one run of the suite with ``checkout``'s qbench."""
    if where.exists():
        shutil.rmtree(where)
    write_suite(where, wrap)
    env = dict(os.environ, PYTHONPATH=checkout, PYTHONHASHSEED="0")
    env["FAILS_ONCE"] = str(where / "fails-once")
    argv = [python, "-m", "pytest", "-p", "qbench", "--doctest-modules", "-p", "no:randomly"]
    argv += [f"--qbench-dir={where / '.qbench'}", "--qbench-capture=all", *MODES[mode]]
    done = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, check=False)
    runs = list((where / ".qbench" / "runs").iterdir())
    if len(runs) != 1:
        raise SystemExit(f"{checkout} {mode}: {len(runs)} runs\n{done.stdout[-2000:]}")
    run = runs[0]
    xdist = "-n" in MODES[mode]
    found: dict[str, Any] = {"exit": done.returncode}
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    found["results.jsonl"] = normal([json.loads(line) for line in lines], xdist)
    found["report.json"] = normal(json.loads((run / "report.json").read_text()), xdist)
    markdown = masked((run / "report.md").read_text(encoding="utf-8")).split("## Slowest")[0]
    found["report.md"] = sorted(markdown.splitlines()) if xdist else markdown.splitlines()
    index = sqlite3.connect(where / ".qbench" / "index.sqlite")
    index.row_factory = sqlite3.Row
    for table in TABLES:
        rows = [normal(dict(row), xdist) for row in index.execute(f"select * from {table}")]
        key = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
        found[table] = sorted(rows, key=key) if xdist else rows
    index.close()
    found["summary"] = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="a checkout (its directory holds pytest_qbench)")
    parser.add_argument("new", help="the checkout compared with it")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--wrap", action="store_true", help="a root conftest's makereport")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "run"  # one directory for both: paths in the outputs alike
        for mode in args.modes:
            old = outputs(args.python, args.old, mode, args.wrap, where)
            new = outputs(args.python, args.new, mode, args.wrap, where)
            old_summary, new_summary = old.pop("summary"), new.pop("summary")
            print(f"== {mode}: old {masked(old_summary)} / new {masked(new_summary)}")
            keys = [key for key in old if old[key] != new.get(key)]
            print("  identical" if not keys else f"  differ: {', '.join(keys)}")
            differ += bool(keys)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
