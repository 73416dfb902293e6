"""``--qbench-ctrf`` and ``qbench render --ctrf``: a CTRF document valid against the vendored
schema, whose counts reconcile with pytest's closing line, serially and under xdist."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cli_here import qbench_here

from conftest import find_run_dir


jsonschema = pytest.importorskip("jsonschema")

SCHEMA = Path(__file__).parent / "data" / "ctrf" / "ctrf.schema.json"

HOSTILE = """
    import pytest

    def test_pass():
        pass

    def test_fail():
        assert 1 == 2, "boom"

    @pytest.fixture
    def broken():
        raise RuntimeError("setup broke")

    def test_setup_error(broken):
        pass

    @pytest.fixture
    def bad_teardown():
        yield
        raise RuntimeError("teardown broke")

    def test_fail_and_teardown(bad_teardown):
        assert False

    def test_teardown_only(bad_teardown):
        pass

    @pytest.mark.skip(reason="nope")
    def test_skip():
        pass

    @pytest.mark.xfail(reason="known")
    def test_xfail():
        assert False

    @pytest.mark.xfail(reason="fixed?")
    def test_xpass():
        pass

    @pytest.mark.xfail(strict=True, reason="strict")
    def test_xpass_strict():
        pass

    COUNT = {"n": 0}

    @pytest.mark.flaky(reruns=2)
    def test_flaky():
        COUNT["n"] += 1
        assert COUNT["n"] > 1

    def test_subtests(subtests):
        for i in range(3):
            with subtests.test(msg="case", i=i):
                assert i != 1

    def test_subtests_ok(subtests):
        for i in range(2):
            with subtests.test(i=i):
                pass
"""

PYTEST_WORDS = {"error": "errors", "subtests passed": "subtests", "warnings": "warnings"}
"""The document's pytest keys as ``RunResult.parseoutcomes`` names them."""


@cache
def validator() -> Any:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def valid_ctrf(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    errors = [f"{list(e.path)}: {e.message}" for e in validator().iter_errors(document)]
    assert not errors, errors
    return document


def by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {test["name"].split("::")[-1]: test for test in document["results"]["tests"]}


def pytest_counts(document: dict[str, Any]) -> dict[str, int]:
    line = document["results"]["summary"]["extra"]["pytest"]
    return {PYTEST_WORDS.get(key, key): count for key, count in line.items()}


@pytest.mark.parametrize("xdist", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_hostile_suite_reconciles_with_pytest(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(test_mixed=HOSTILE, test_broken="import not_a_module_xyz\n")
    result = pytester.runpytest_subprocess(
        "-p",
        "qbench",
        "-p",
        "pytest_rerunfailures",
        *xdist,
        "--continue-on-collection-errors",
        "--qbench-ctrf=out/ctrf.json",
    )
    document = valid_ctrf(pytester.path / "out" / "ctrf.json")
    outcomes = result.parseoutcomes()
    assert pytest_counts(document) == {k: v for k, v in outcomes.items() if v}
    if not hasattr(pytest, "SubtestReport"):
        # pytest 8 has no subtests fixture: its two tests error in setup; the document agrees
        # with pytest's line (above), the per-test expectations below are pytest 9's.
        return
    summary = document["results"]["summary"]
    # pytest: 5 failed (a failed subtest and its test count twice), 4 errors (one of them the
    # collection error, one the teardown after a failure); CTRF: one status per test.
    assert {k: summary[k] for k in ("tests", "passed", "failed", "skipped", "flaky")} == {
        "tests": 13,
        "passed": 4,
        "failed": 7,
        "skipped": 2,
        "flaky": 1,
    }
    assert summary["extra"]["exitCode"] == 1
    tests = by_name(document)
    assert {name: (t["status"], t["rawStatus"]) for name, t in tests.items()} == {
        "test_pass": ("passed", "passed"),
        "test_fail": ("failed", "failed"),
        "test_setup_error": ("failed", "error in setup"),
        "test_fail_and_teardown": ("failed", "failed, error in teardown"),
        "test_teardown_only": ("failed", "error in teardown"),
        "test_skip": ("skipped", "skipped"),
        "test_xfail": ("skipped", "xfailed"),
        "test_xpass": ("passed", "xpassed"),
        "test_xpass_strict": ("failed", "xpassed (strict)"),
        "test_flaky": ("passed", "passed"),
        "test_subtests": ("failed", "failed"),
        "test_subtests_ok": ("passed", "passed"),
        "test_broken.py": ("failed", "collection error"),
    }
    assert "not_a_module_xyz" in tests["test_broken.py"]["message"]
    flaky = tests["test_flaky"]
    assert flaky["flaky"] is True and flaky["retries"] == 1
    assert [a["status"] for a in flaky["retryAttempts"]] == ["failed", "passed"]
    steps = tests["test_subtests"]["steps"]
    # pytest names them "[case] (i=1)", and "[case] (i='1')" under xdist
    assert [(s["name"].replace("'", ""), s["status"]) for s in steps] == [
        ("[case] (i=0)", "passed"),
        ("[case] (i=1)", "failed"),
        ("[case] (i=2)", "passed"),
    ]
    if xdist:
        assert {t.get("threadId") for t in tests.values()} - {None} <= {"gw0", "gw1"}


def test_interrupted_collection_is_a_failed_test(pytester: pytest.Pytester) -> None:
    """pytest stops at a collection error: "1 error", exit 2. The document must not say that
    all tests passed."""
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n", test_bad="import nope_xyz\n")
    result = pytester.runpytest("-p", "qbench", "--qbench-ctrf=ctrf.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    summary = valid_ctrf(pytester.path / "ctrf.json")["results"]["summary"]
    assert (summary["tests"], summary["failed"], summary["passed"]) == (1, 1, 0)
    assert summary["extra"]["pytest"] == {"error": 1}
    assert summary["extra"]["exitCode"] == pytest.ExitCode.INTERRUPTED


def test_insights_and_baseline_from_the_history(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        """
        import os

        def test_same():
            pass

        def test_breaks():
            assert os.environ.get("BREAK") != "1"
        """
    )
    pytester.runpytest("-p", "qbench", "--qbench-run-id=first", "--qbench-ctrf=first.json")
    first = valid_ctrf(pytester.path / "first.json")
    assert first["insights"]["runsAnalyzed"] == 1
    assert "baseline" not in first and "baseline" not in first["insights"]["passRate"]
    monkeypatch.setenv("BREAK", "1")
    pytester.runpytest("-p", "qbench", "--qbench-run-id=second", "--qbench-ctrf=second.json")
    second = valid_ctrf(pytester.path / "second.json")
    assert second["baseline"]["reportId"] == first["reportId"]
    assert second["baseline"]["extra"] == {"runId": "first"}
    insights = second["insights"]
    assert insights["runsAnalyzed"] == 2
    assert insights["passRate"] == {"current": 0.75, "baseline": 1.0, "change": -0.25}
    assert insights["failRate"] == {"current": 0.25, "baseline": 0.0, "change": 0.25}
    breaks = by_name(second)["test_breaks"]
    assert breaks["insights"]["executedInRuns"] == 2
    assert breaks["insights"]["passRate"] == {"current": 0.5, "baseline": 1.0, "change": -0.5}
    assert breaks["testId"] == by_name(first)["test_breaks"]["testId"]
    assert breaks["executionId"] != by_name(first)["test_breaks"]["executionId"]


def test_render_writes_the_same_document(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(HOSTILE)
    pytester.runpytest("-p", "qbench", "-p", "pytest_rerunfailures", "--qbench-ctrf=live.json")
    run_dir = find_run_dir(pytester.path)
    out = pytester.path / "rendered.json"
    done = qbench_here("render", run_dir, "--ctrf", out)  # what it writes is the subject
    assert done.ret == 0, done.err
    rendered, live = valid_ctrf(out), valid_ctrf(pytester.path / "live.json")
    assert {k: v for k, v in rendered.items() if k != "results"} == {
        k: v for k, v in live.items() if k != "results"
    }
    for key in ("summary", "environment", "tool"):
        assert rendered["results"][key] == live["results"][key], key
    assert rendered["results"]["tests"] == live["results"]["tests"]
