"""A run is green only when qbench recorded it whole (fail closed), by one rule for every output:
``report/verdict.py``'s ``run_green``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_render import report_of
from test_render import result

from pytest_qbench.cli import main
from pytest_qbench.plugin.session import QBenchSession
from pytest_qbench.report.ctrf import render_ctrf
from pytest_qbench.report.digest import build_digest
from pytest_qbench.report.merge import Source
from pytest_qbench.report.merge import merge_reports
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.render import make_environment
from pytest_qbench.report.render import render
from pytest_qbench.report.verdict import bounded_errors
from pytest_qbench.report.verdict import run_green

from conftest import RunQBench


INJECTED = "internal error in pytest_runtest_logreport: RuntimeError: injected"


def _broken_send(self: QBenchSession, stored: Any, nodeid: str) -> None:
    raise RuntimeError("injected")


@pytest.fixture
def broken_run(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """A project with one passing test, run in-process with ``_send`` (which files each
    test's result) raising: qbench records nothing of it."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    monkeypatch.setattr(QBenchSession, "_send", _broken_send)
    pytester.makepyfile("def test_ok(): pass")
    return run_qbench(
        "--qbench-digest=digest.json", "--qbench-ctrf=ctrf.json", "--qbench-html=report.html"
    )


def test_an_internal_error_while_recording_is_never_green(
    pytester: pytest.Pytester, broken_run: Any
) -> None:
    """The lead's fault injection: pytest still exits 0 with its "1 passed" (qbench never
    changes it), and every output says not green, that qbench could not record the run, and
    the error (report.md, summary.md, HTML, digest, CTRF, report.json)."""
    broken_run.result.assert_outcomes(passed=1)
    assert broken_run.result.ret == 0
    report = broken_run.report
    assert report.run.recording_errors == [  # three times the same error: once
        INJECTED,
        "internal error in recording the results: pytest counted 1 passed that qbench did not "
        "record",
    ]
    markdown = broken_run.markdown
    headline = markdown.splitlines()[0]
    assert headline.startswith("# ❌ Test report incomplete: qbench could not record this run")
    assert "no results recorded" in headline
    assert "✅" not in markdown
    assert "> **❌ Incomplete:** qbench could not record this run" in markdown
    assert "RuntimeError: injected. Fix:" in markdown
    summary = (pytester.path / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# ❌ Test report incomplete")
    assert "RuntimeError: injected" in summary
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert 'data-ok="false"' in html
    assert '<p id="incomplete" class="banner bad">' in html
    assert "<title>Incomplete:" in html
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
    assert digest["next_steps"][0].startswith("qbench could not record this run")
    assert INJECTED in digest["next_steps"][0]
    ctrf = json.loads((pytester.path / "ctrf.json").read_text(encoding="utf-8"))
    assert ctrf["results"]["summary"]["failed"] == 1
    assert ctrf["results"]["summary"]["extra"]["success"] is False
    [test] = ctrf["results"]["tests"]
    assert test["rawStatus"] == "qbench could not record the run"
    assert test["extra"]["recordingErrors"] == report.run.recording_errors


def test_results_lost_without_an_error_are_not_green(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result lost on the way without any exception (here: never finished) is found at the
    end against pytest's own counts: the report is incomplete, and says what is missing."""
    monkeypatch.setattr(QBenchSession, "_send", lambda self, stored, nodeid: None)
    pytester.makepyfile("def test_ok(): pass\ndef test_bad(): assert 0")
    run = run_qbench()
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.report.run.recording_errors == [
        "internal error in recording the results: pytest counted 1 failed, 1 passed that "
        "qbench did not record"
    ]
    assert run.markdown.startswith("# ❌ Test report incomplete")


def test_the_index_knows_a_run_qbench_could_not_record(
    pytester: pytest.Pytester, broken_run: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench show``, ``qbench diff`` and ``qbench pr-comment`` read the index: it knows the
    run is incomplete (schema 10), so none of them calls it passing."""
    capsys.readouterr()
    assert main(["show", "last"]) == 0
    shown = capsys.readouterr().out
    assert "recorded  incomplete: qbench could not record the run (2 recording errors" in shown
    assert shown.splitlines()[0].endswith(" (incomplete)")
    assert main(["runs"]) == 0
    assert "0 tests: none ran (incomplete)" in capsys.readouterr().out.splitlines()[1]
    assert main(["show", "last", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["recording_errors"] == 2
    assert main(["pr-comment"]) == 0
    comment = capsys.readouterr().out
    assert "qbench: failing (no base run to compare with; qbench could not record" in comment


def test_a_diff_against_an_unrecorded_run_fails(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A clean run, then the same run that qbench could not record: the test is not "removed"
    and the comparison is not a pass; it fails, saying why."""
    pytester.makepyfile("def test_ok(): pass")
    run_qbench("--qbench-run-id=whole", run_dir="whole")
    with monkeypatch.context() as patched:
        patched.setattr(QBenchSession, "_send", _broken_send)
        run_qbench("--qbench-run-id=broken", run_dir="broken")
    capsys.readouterr()
    assert main(["diff", "whole", "broken"]) == 1
    out = capsys.readouterr().out
    assert "B did not finish (qbench could not record the run" in out


def _report(**run: Any) -> dict[str, Any]:
    report = report_of([result("t.py::test_ok", "passed")], exit_code=0, **run)
    return report.model_dump(mode="json")


def test_run_green_lists_every_condition() -> None:
    """Each condition of the docstring alone turns a green report red."""
    green = _report()
    assert run_green(green)
    cases: list[tuple[str, Any]] = [
        ("summary.failed", 1),
        ("summary.errors", 1),
        ("run.interrupted", True),
        ("run.exit_code", 3),
        ("run.recording_errors", ["internal error in x: boom"]),
    ]
    for path, value in cases:
        report = json.loads(json.dumps(green))
        section, key = path.split(".")
        report[section][key] = value
        assert not run_green(report), path
    report = json.loads(json.dumps(green))
    report["gates"] = [{"passed": False}]
    assert not run_green(report)
    report = json.loads(json.dumps(green))
    report["coverage"] = {"met": False}
    assert not run_green(report)


def test_a_report_written_before_the_field_is_judged_by_its_warnings() -> None:
    """A report of an older qbench has no ``recording_errors``: its internal-error warnings
    count instead, in the headline, the digest and CTRF."""
    report = _report()
    del report["run"]["recording_errors"]
    bug = Diagnostic(tool="qbench", severity="warning", code="internal-error", message="bug")
    report["warnings"] = [bug.model_dump(mode="json")]
    assert not run_green(report)
    from pytest_qbench.report.aggregate import aggregate

    view = aggregate(report["results"]).view()
    assert build_digest(report, view)["success"] is False
    assert render(report).startswith("# ❌ Test report incomplete")
    ctrf = json.loads(render_ctrf(report, report["results"]))
    assert ctrf["results"]["summary"]["extra"]["success"] is False


def test_a_user_template_that_computes_its_own_ok_keeps_working(tmp_path: Path) -> None:
    """Templates get ``green`` (and ``recording_errors``, ``incomplete``); a user's template
    that still sets its own ``ok`` the old way renders as before, and the built-in headline it
    includes follows the one rule."""
    (tmp_path / "mine.md.j2").write_text(
        "{% set ok = summary.failed == 0 and not report.run.interrupted %}"
        '{{ "OK" if ok else "KO" }} {{ green }} {{ recording_errors | length }}\n'
        '{% include "summary.md.j2" %}',
        encoding="utf-8",
    )
    env = make_environment(tmp_path)
    report = _report(recording_errors=["internal error in x: boom"])
    text = render(report, "mine.md.j2", env=env)
    assert text.startswith("OK False 1\n# ❌ Test report incomplete")
    assert render(_report(), "mine.md.j2", env=env).startswith("OK True 0\n# ✅ Test report:")


def test_merge_keeps_a_shard_qbench_could_not_record() -> None:
    """A merged report is incomplete when one shard's was, naming the shard."""
    whole = report_of([result("a.py::test_a", "passed")], exit_code=0, run_id="r1")
    broken = report_of(
        [result("b.py::test_b", "passed")], exit_code=0, run_id="r2", recording_errors=["boom"]
    )
    merged = merge_reports([Source("one.json", whole), Source("two.json", broken)])
    assert merged.run.recording_errors == ["two.json: boom"]
    assert not run_green(merged.model_dump(mode="json"))


def test_bounded_errors_says_how_many_more() -> None:
    """At most 20 distinct errors are kept; the last one kept says how many more there were."""
    errors = [f"e{i}" for i in range(30)] + ["e0"]
    kept = bounded_errors(errors)
    assert len(kept) == 20
    assert kept[-1] == "and 11 more internal errors (see the warnings)"


def test_every_xdist_worker_crashed_is_not_green(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers that crash before any test ran: pytest says "no tests ran" and exits 5 after
    "xdist: maximum crashed workers reached"; qbench's report is not green, and says why."""
    pytest.importorskip("xdist")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test may run in a worker
    pytester.makeconftest(
        """
        import os
        if os.environ.get("PYTEST_XDIST_WORKER"):
            os._exit(1)
        """
    )
    pytester.makepyfile("def test_ok(): pass")
    run = run_qbench(
        "-p",
        "xdist",
        "-n",
        "1",
        "--max-worker-restart=0",
        "--qbench-digest=d.json",
        subprocess=True,
    )
    assert run.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    run.result.stdout.fnmatch_lines(["*xdist: worker gw0 crashed and worker restarting disabled*"])
    assert run.report.run.interrupted is True
    assert run.markdown.startswith("# ❌ Test report: no tests ran")
    assert any(w.code == "workers-crashed" for w in run.report.warnings)
    digest = json.loads((pytester.path / "d.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
