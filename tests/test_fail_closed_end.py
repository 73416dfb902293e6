"""Fail closed at the session's end: an earlier run's report never stands as this run's verdict,
whether qbench erred at the end, the run was killed, or the disk refused one output
(docs/fail-closed.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_qbench.report.environment import describe_environment
from pytest_qbench.report.last_resort import last_resort_report
from pytest_qbench.report.last_resort import pytest_counts
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.shapes import new
from pytest_qbench.report.verdict import run_green
from pytest_qbench.report.verdict import verdict_of

from conftest import find_run_dir


OUTPUTS = (
    "--qbench-json=r.json",
    "--qbench-md=r.md",
    "--qbench-html=r.html",
    "--qbench-ctrf=r.ctrf.json",
    "--qbench-template=summary.md.j2=summary.md",
)
EARLIER = {
    "r.json": '{"run": {"run_id": "earlier"}}',
    "r.md": "# ✅ Test report: 3 passed\n",
    "r.html": "<h1>✅ earlier</h1>",
    "r.ctrf.json": '{"earlier": true}',
    "summary.md": "# ✅ earlier\n",
}
RAISES = """
import importlib

def boom(*args, **kwargs):
    raise RuntimeError("boom at the end")

owner = importlib.import_module({module!r})
for name in {path!r}.split(".")[:-1]:
    owner = getattr(owner, name)
setattr(owner, {path!r}.split(".")[-1], boom)
"""
SUITE = "def test_ok():\n    pass\n\ndef test_also():\n    pass\n\ndef test_bad():\n    assert 0\n"


def earlier_outputs(root: Path) -> None:
    """What an earlier, green run left at the configured paths."""
    for name, text in EARLIER.items():
        (root / name).write_text(text, encoding="utf-8")


def run_failing_at_the_end(pytester: pytest.Pytester, *faults: tuple[str, str]) -> pytest.RunResult:
    """The suite run after an earlier green run's outputs, each of ``faults`` (module, name)
    raising: pytest's exit status is its own (1: a test failed)."""
    earlier_outputs(pytester.path)
    pytester.makeconftest("".join(RAISES.format(module=m, path=p) for m, p in faults))
    pytester.makepyfile(SUITE)
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    return result


def read_json_report(root: Path) -> TestReport:
    data = json.loads((root / "r.json").read_text(encoding="utf-8"))
    assert not run_green(data)
    return TestReport.model_validate(data)


@pytest.mark.parametrize(
    ("module", "path"),
    [
        ("pytest_qbench.report.aggregate", "Aggregator.summary"),
        ("pytest_qbench.history.publish", "Publisher.publish"),
        ("pytest_qbench.history.publish", "index_live_run"),
    ],
)
def test_a_bug_at_the_end_leaves_a_last_resort_report(
    pytester: pytest.Pytester, module: str, path: str
) -> None:
    """A bug of qbench's at the session's end (aggregating, publishing, indexing) leaves a
    last-resort report at every configured output, red and incomplete, naming the error, with
    pytest's own counts and exit status; the outputs it cannot write so are removed; pytest's
    exit status is its own. Before, the earlier run's green reports stood."""
    result = run_failing_at_the_end(pytester, (module, path))
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "qbench: internal error in pytest_sessionfinish: RuntimeError: boom at the end",
            "qbench: r.json, r.md, r.html: a last-resort report (incomplete, never green)*",
        ]
    )
    report = read_json_report(pytester.path)
    assert report.run.run_id != "earlier" and report.run.exit_code == 1
    assert report.run.recording_errors == [
        "internal error in pytest_sessionfinish: RuntimeError: boom at the end"
    ]
    assert (report.summary.total, report.summary.passed, report.summary.failed) == (3, 2, 1)
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report incomplete\n")
    assert "pytest exited with status 1; pytest counted 1 failed, 2 passed" in markdown
    assert "<h1>❌ Test report incomplete</h1>" in (pytester.path / "r.html").read_text("utf-8")
    assert not (pytester.path / "r.ctrf.json").exists()
    assert not (pytester.path / "summary.md").exists()


def test_a_bug_in_the_last_resort_removes_the_outputs(pytester: pytest.Pytester) -> None:
    """When even the last-resort report cannot be made, the earlier run's outputs are removed,
    and the terminal says so."""
    result = run_failing_at_the_end(
        pytester,
        ("pytest_qbench.report.aggregate", "Aggregator.summary"),
        ("pytest_qbench.report.last_resort", "last_resort_report"),
    )
    result.stdout.fnmatch_lines(
        [
            "qbench: internal error in the last-resort report: RuntimeError: boom at the end",
            "qbench: internal error in pytest_sessionfinish: RuntimeError: boom at the end",
            "qbench: internal error in the last-resort report: RuntimeError: boom at the end",
        ]
    )
    assert not [name for name in EARLIER if (pytester.path / name).exists()]


def test_a_bug_in_finding_the_outputs_at_the_end_never_breaks_the_run(
    pytester: pytest.Pytester,
) -> None:
    """The session's end failed, and so did finding the outputs for the last-resort report:
    both are named, and the run ends with pytest's own status (before, a traceback out of
    pytest's session end)."""
    result = run_failing_at_the_end(
        pytester,
        ("pytest_qbench.report.aggregate", "Aggregator.summary"),
        ("pytest_qbench.plugin.session_end", "configured_outputs"),
    )
    result.stdout.fnmatch_lines(
        [
            "qbench: internal error in pytest_sessionfinish: RuntimeError: boom at the end",
            "qbench: internal error in the last-resort report: RuntimeError: boom at the end",
        ]
    )


def test_a_killed_run_leaves_an_unfinished_report(pytester: pytest.Pytester) -> None:
    """A run killed mid-way (``kill -9``) leaves, where an earlier run's outputs were, a report
    saying it started and did not finish (red), and none of the earlier run's; where none was,
    it leaves none. Before, the earlier run's green reports stood."""
    earlier_outputs(pytester.path)
    (pytester.path / "r.html").unlink()
    pytester.makepyfile(
        "import os, signal\n\ndef test_ok():\n    pass\n\n"
        "def test_killed():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == -9
    report = read_json_report(pytester.path)
    assert report.run.interrupted and report.run.exit_code is None
    assert report.run.completed_at is None
    (error,) = report.run.recording_errors
    assert f"run {report.run.run_id} started at " in error
    assert "did not finish" in error
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report incomplete\n")
    assert "it has not finished" in markdown
    assert not (pytester.path / "r.html").exists()  # none before: none written at the start
    assert not (pytester.path / "r.ctrf.json").exists()
    assert not (pytester.path / "summary.md").exists()


def test_a_finished_run_replaces_the_unfinished_report(pytester: pytest.Pytester) -> None:
    """The report put at the start is replaced by the run's own at its end."""
    earlier_outputs(pytester.path)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.OK
    data = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert run_green(data) and data["summary"]["passed"] == 1
    assert (pytester.path / "r.md").read_text(encoding="utf-8").startswith("# ✅")
    assert (pytester.path / "summary.md").is_file() and (pytester.path / "r.ctrf.json").is_file()
    assert "qbench: removed" not in result.stdout.str()


def test_pytest_counts_read_the_closing_lines_reports() -> None:
    """pytest's own counts, by its terminal reporter's keys, each report that counts."""

    class Report:
        def __init__(self, counts: bool = True) -> None:
            self.count_towards_summary = counts

    stats = {"passed": [Report(), Report()], "error": [Report()], "failed": [Report(False)]}
    counts = pytest_counts(stats)
    assert counts is not None
    assert (counts["passed"], counts["errors"], counts["failed"]) == (2, 1, 0)
    assert pytest_counts(None) is None


def test_the_last_resort_report_is_a_valid_red_report() -> None:
    """The last-resort report is a valid ``TestReport``, incomplete, never green."""
    run = new(
        "RunMeta",
        run_id="r1",
        started_at="2026-01-01T00:00:00Z",
        cwd="/",
        command=["pytest"],
        exit_code=0,
        completed_at="2026-01-01T00:00:01Z",
    )
    meta = new("ReportMeta", qbench_version="1", created_at="2026-01-01T00:00:01Z")
    environment = describe_environment("9.0", {}, {})
    data = last_resort_report(run, environment, {"passed": 3}, "internal error in x: boom", meta)
    report = TestReport.model_validate(data)
    assert report.summary.total == 3 and report.run.recording_errors
    assert [reason.kind for reason in verdict_of(data).reasons] == ["incomplete"]


REFUSE = """
import errno
from pytest_qbench.core import atomic

refuse = {refuse!r}  # a file's name: the writes of it the disk refuses (None: every one)
seen = {{}}
enter = atomic.atomic_writer.__enter__

def refused(self):
    seen[self.path.name] = seen.get(self.path.name, 0) + 1
    if self.path.name in refuse and refuse[self.path.name] in (None, seen[self.path.name]):
        raise OSError(errno.ENOSPC, "No space left on device")
    return enter(self)

atomic.atomic_writer.__enter__ = refused
"""


def test_an_output_the_disk_refuses_makes_the_others_incomplete(
    pytester: pytest.Pytester,
) -> None:
    """When the disk refuses one output (a full disk), the outputs written, before it and
    after it, say so (incomplete, never green), and none is an earlier run's. Before, r.md
    said "✅ 2 passed" with r.json missing."""
    earlier_outputs(pytester.path)
    pytester.makeconftest(REFUSE.format(refuse={"r.json": None}))
    pytester.makepyfile("def test_ok():\n    pass\n\ndef test_also():\n    pass\n")
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-json=r.json", "--qbench-md=r.md"
    )
    assert result.ret == pytest.ExitCode.OK  # pytest's own: a qbench failure never changes it
    result.stdout.fnmatch_lines(["qbench: could not write r.json: No space left on device"])
    assert not (pytester.path / "r.json").exists()
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report incomplete")
    assert "could not write r.json: No space left on device" in markdown
    run_json = json.loads((find_run_dir(pytester.path) / "report.json").read_text("utf-8"))
    assert run_json["run"]["recording_errors"] == [
        "could not write r.json: No space left on device"
    ]


def test_an_output_that_cannot_be_written_again_is_removed(pytester: pytest.Pytester) -> None:
    """An output written before another was refused, which the disk then refuses as it is
    written again to say so, is removed rather than left green beside the others."""
    pytester.makeconftest(REFUSE.format(refuse={"r.html": None, "report.md": 2}))
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-md=r.md", "--qbench-html=r.html"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["qbench: removed .qbench/runs/*/report.md: written before another output failed*"]
    )
    assert not (find_run_dir(pytester.path) / "report.md").exists()
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report incomplete")
    assert "could not write r.html" in markdown


def test_a_bug_in_the_loop_writing_the_outputs_leaves_a_last_resort_report(
    pytester: pytest.Pytester,
) -> None:
    """A bug in the loop that writes every output (none written) leaves the last-resort report
    at --qbench-json/-md/-html. Before, they were only removed."""
    result = run_failing_at_the_end(pytester, ("pytest_qbench.history.publish", "Publisher.jobs"))
    result.stdout.fnmatch_lines(
        [
            "qbench: internal error in writing the outputs: RuntimeError: boom at the end",
            "qbench: r.json, r.md, r.html: a last-resort report (incomplete, never green)*",
        ]
    )
    report = read_json_report(pytester.path)
    assert report.run.recording_errors == [
        "internal error in writing the outputs: RuntimeError: boom at the end"
    ]
    assert (report.summary.passed, report.summary.failed) == (2, 1)


def test_a_bug_in_the_terminal_summary_is_shown(pytester: pytest.Pytester) -> None:
    """An internal error in qbench's terminal summary is written on the terminal (after it).
    Before, it was noted after the notes were written, and never shown."""
    pytester.makeconftest(
        RAISES.format(module="pytest_qbench.plugin.session", path="QBenchSession._shown_paths")
    )
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["qbench: internal error in pytest_terminal_summary: RuntimeError: boom at the end"]
    )


EXITS_WHILE_COLLECTING = """
import pytest

def pytest_collection_modifyitems():
    pytest.exit("stop here", returncode=0)
"""


def test_a_gate_never_judged_fails_the_run(pytester: pytest.Pytester) -> None:
    """A gate asked for that nothing judged (``pytest.exit(returncode=0)`` while collecting:
    the tests' loop, where gates are judged, never ran) fails the run, named. Before, the run
    exited 0 with the gate undecided."""
    pytester.makeconftest(EXITS_WHILE_COLLECTING)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-metric-min=quality=0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["qbench: metric gate quality: not judged, so it fails: the run*"])
    report = TestReport.model_validate_json(
        (find_run_dir(pytester.path) / "report.json").read_text(encoding="utf-8")
    )
    assert [(g.kind, g.passed) for g in report.gates] == [("metric_min", False)]
    assert report.run.exit_code == 1


def test_collect_only_judges_no_gate(pytester: pytest.Pytester) -> None:
    """``--collect-only`` runs no test: its gates are not judged, and that fails nothing."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest("-p", "qbench", "--collect-only", "--qbench-metric-min=quality=0.5")
    assert result.ret == pytest.ExitCode.OK
    assert "not judged" not in result.stdout.str()


@pytest.mark.parametrize("gated", [True, False])
def test_a_bug_in_reading_the_verdicts_fails_only_a_gated_run(
    pytester: pytest.Pytester, gated: bool
) -> None:
    """A bug in reading the gates' verdicts at the session's end is noted; with a gate asked for,
    the run fails (its verdict could not be read), without one pytest's status stands. Before,
    it raised out of pytest_sessionfinish: a traceback and exit 1 either way."""
    pytester.makeconftest(
        RAISES.format(module="pytest_qbench.plugin.verdicts", path="Verdicts.failed")
    )
    pytester.makepyfile("def test_ok():\n    pass\n")
    args = ["--qbench-metric-min=quality=0.5"] if gated else []
    result = pytester.runpytest_subprocess("-p", "qbench", *args)
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if gated else pytest.ExitCode.OK)
    failing = " (the run fails)" if gated else ""
    result.stdout.fnmatch_lines(
        [f"qbench: internal error in the gates' verdicts{failing}: RuntimeError: boom at the end"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
