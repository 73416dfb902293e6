"""Crash safety: hard exits, Ctrl-C, and bugs inside qbench never lose results."""

from __future__ import annotations

import json

import pytest

from pytest_qbench.cli import main
from pytest_qbench.report.models import TestReport

from conftest import RunQBench
from conftest import find_run_dir


def test_hard_exit_then_render(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """After os._exit the stream holds every test finished before the last 0.1 s (its timer
    writes them: ``store.BATCH_SECONDS``); `qbench render` rebuilds the reports."""
    pytester.makepyfile(
        """
        import glob, os, time
        def test_one(): pass
        def test_two(): assert 0, "two fails"
        def test_die():
            stream = glob.glob(".qbench/runs/*/results.jsonl")[0]
            deadline = time.monotonic() + 60  # the stream's timer writes them meanwhile
            while open(stream).read().count('"kind":"result"') < 2 < deadline - time.monotonic():
                time.sleep(0.01)
            os._exit(9)
        def test_never(): pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == 9
    run_dir = find_run_dir(pytester.path)
    assert not (run_dir / "report.json").exists()
    kinds = [
        json.loads(line)["kind"]
        for line in (run_dir / "results.jsonl").read_text().split("\n")
        if line
    ]
    assert kinds == ["start", "result", "result"]

    assert main(["render", str(run_dir)]) == 0
    assert "rebuilt interrupted run" in capsys.readouterr().out
    report = TestReport.model_validate_json((run_dir / "report.json").read_text())
    assert report.run.interrupted is True
    assert report.run.exit_code is None
    # test_die failed: the process died in it (the first test it was to run without a result)
    assert [(r.nodeid, r.outcome) for r in report.results][2:] == [
        ("test_hard_exit_then_render.py::test_die", "failed")
    ]
    assert [r.outcome for r in report.results] == ["passed", "failed", "failed"]
    assert (report.summary.passed, report.summary.failed) == (1, 2)
    died = report.results[2].failure
    assert died is not None and died.error_type == "ProcessDied"
    md = (run_dir / "report.md").read_text()
    assert "**❌ Not green:** the run did not finish: its process died or was killed" in md
    assert "two fails" in md


def test_keyboard_interrupt_writes_reports(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Ctrl-C: the reports are written, marked interrupted, with the tests that finished."""
    pytester.makepyfile(
        """
        def test_one(): pass
        def test_stop(): raise KeyboardInterrupt
        def test_never(): pass
        """
    )
    run = run_qbench(subprocess=True)  # in-process, the interrupt would reach the outer run
    assert run.result.ret == pytest.ExitCode.INTERRUPTED
    assert run.report.run.interrupted is True
    assert run.report.run.exit_code == 2
    assert [r.nodeid.split("::")[1] for r in run.report.results] == ["test_one"]
    assert "**❌ Not green:** the run was interrupted (Ctrl-C, pytest.exit" in run.markdown


def test_bug_in_qbench_keeps_results_and_exit_status(pytester: pytest.Pytester) -> None:
    """A qbench bug becomes a warning; the result is still recorded; pytest's exit status holds."""
    pytester.makeconftest(
        """
        import pytest_qbench.plugin.session

        def broken(*args, **kwargs):
            raise RuntimeError("qbench bug")

        pytest_qbench.plugin.session.captured_output = broken  # simulate a bug inside qbench
        """
    )
    pytester.makepyfile("def test_ok(): pass\ndef test_bad(): assert 0")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["qbench: internal error in building the result of *test_bad*qbench bug"]
    )
    report = TestReport.model_validate_json(
        (find_run_dir(pytester.path) / "report.json").read_text()
    )
    assert [r.outcome for r in report.results] == ["passed", "failed"]
    assert any(w.code == "internal-error" for w in report.warnings)


def test_broken_output_does_not_stop_the_others(pytester: pytest.Pytester) -> None:
    """If writing the Markdown fails, report.json and the copies are still written."""
    pytester.makeconftest(
        """
        from pytest_qbench.report.outputs import OutputWriter

        def broken(self, path):
            def write():
                raise OSError("disk full")

            return write

        OutputWriter.rendered_markdown = broken  # simulate a failing write
        """
    )
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-json=out.json")
    assert result.ret == pytest.ExitCode.OK
    # the user's disk, not a qbench bug (issue 11.1): the path and the system's reason
    result.stdout.fnmatch_lines(["qbench: could not write .qbench/runs/*/report.md: disk full"])
    assert "internal error" not in result.stdout.str()
    assert (pytester.path / "out.json").is_file()


def test_stream_unavailable_keeps_results_in_memory(pytester: pytest.Pytester) -> None:
    """If results.jsonl cannot be opened, the results still reach report.json."""
    pytester.makeconftest(
        """
        import pytest_qbench.report.store

        def refuse(self, path, batched=False):
            raise OSError(28, "No space left on device")

        pytest_qbench.report.store.StreamWriter.__init__ = refuse  # simulate a full disk at start
        """
    )
    pytester.makepyfile("def test_ok(): pass\ndef test_bad(): assert 0")
    result = pytester.runpytest_subprocess("-p", "qbench")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(  # a full disk is no qbench bug (issue 11.1)
        ["qbench: could not write .qbench/runs/*/results.jsonl: No space left on device*"]
    )
    report = TestReport.model_validate_json(
        (find_run_dir(pytester.path) / "report.json").read_text()
    )
    assert [r.outcome for r in report.results] == ["passed", "failed"]
    assert report.summary.failed == 1


def test_a_bug_in_closing_the_stream_changes_no_exit_status(pytester: pytest.Pytester) -> None:
    """The stream's writer is closed when pytest unconfigures, after the closing line, and
    closing writes the lines still waiting: a bug there is named on the terminal, never a
    traceback that turns pytest's exit status 0 into 1."""
    pytester.makeconftest(
        """
        from pytest_qbench.report import store

        def pytest_configure(config):
            def broken(self):
                raise RuntimeError("injected close")

            store.StreamWriter.close = broken
        """
    )
    pytester.makepyfile(test_a="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*1 passed*", "qbench: internal error in pytest_unconfigure: RuntimeError: injected close"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_bug_in_putting_back_the_real_os_changes_no_exit_status(
    pytester: pytest.Pytester,
) -> None:
    """The session's end puts back the ``os`` functions a test left mocked (`real_os.restored`)
    around writing the run's files: a bug there is an internal error of the session's end,
    named on the terminal, never a traceback that turns pytest's exit status 0 into 1; and
    what it cannot put back stays as the test left it (``restored`` never raises itself)."""
    pytester.makeconftest(
        """
        from contextlib import contextmanager

        from pytest_qbench.core import real_os

        @contextmanager
        def broken():
            raise RuntimeError("injected restore")
            yield []

        real_os.restored = broken
        """
    )
    pytester.makepyfile(test_a="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["qbench: internal error in pytest_sessionfinish: RuntimeError: injected restore"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    report = TestReport.model_validate_json(
        (find_run_dir(pytester.path) / "report.json").read_text()
    )
    assert report.summary.passed == 1  # the run's end went on, its report red: incomplete
    assert any("injected restore" in error for error in report.run.recording_errors)


def test_restoring_the_real_os_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module whose attributes cannot be set (a test's own ``__setattr__``): ``restored``
    puts back nothing there, yields what it did put back, and raises nothing."""
    from pytest_qbench.core import real_os

    class Locked:
        replace = None

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(name)

    locked = Locked()
    monkeypatch.setattr(real_os, "_REAL", {(locked, "replace"): print})
    with real_os.restored() as names:
        assert names == []
    assert locked.replace is None
