"""Report-side truths (session 40): real pytest runs through pytester. A test killed in the
teardown after a setup that did not pass dies in its teardown; the summaries say pytest's words
for the subtests; report.md's headings all count; an output that fails to render leaves every
output saying so, report.json first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_here import qbench_here

from conftest import RunQBench


KILLED_AFTER_SETUP = """
    import os, signal, pytest

    @pytest.fixture
    def killer():
        yield
        __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

    @pytest.fixture
    def skipping():
        pytest.skip("no resource")

    @pytest.fixture
    def broken():
        raise RuntimeError("setup broke")

    def test_first():
        pass

    if os.environ["QBENCH_TEST_SETUP"] == "skipped":
        def test_killed(killer, skipping):
            pass
    elif os.environ["QBENCH_TEST_SETUP"] == "xfailed":
        @pytest.mark.xfail(reason="known")
        def test_killed(killer, broken):
            pass
    else:
        def test_killed(killer, broken):
            pass

    def test_after():
        pass
"""


@pytest.mark.parametrize("setup", ["skipped", "xfailed", "error"])
def test_a_test_killed_in_its_teardown_after_its_setup_did_not_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, setup: str
) -> None:
    """A test whose setup skipped (``pytest.skip`` in a fixture), xfailed (a failing fixture
    under ``xfail``) or failed, killed (SIGKILL, as pytest-timeout's thread method) in its
    teardown: no call ran, and the rebuilt report says it died in its teardown, an error. Before,
    a skipped or xfailed setup was taken for one that passed, so the death was a failure in the
    call."""
    pytester.makepyfile(test_k=KILLED_AFTER_SETUP)
    monkeypatch.setenv("QBENCH_TEST_SETUP", setup)
    died = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=k")
    assert died.ret not in (0, 1)  # killed by SIGKILL
    assert qbench_here("render", ".qbench/runs/k").ret == 0
    report = json.loads((pytester.path / ".qbench/runs/k/report.json").read_text())
    killed = [r for r in report["results"] if r["nodeid"] == "test_k.py::test_killed"]
    deaths = [r.get("teardown_failure") or r["failure"] for r in killed]  # the setup's error first
    assert [(r["outcome"], d["phase"]) for r, d in zip(killed, deaths, strict=True)] == [
        ("error", "teardown")
    ]
    assert report["run"]["interrupted"] is True


SUBTESTS = """
    import pytest

    def test_one_fails(subtests):
        with subtests.test("a"):
            assert 0
        with subtests.test("b"):
            pass

    def test_two_fail(subtests):
        for i in range(2):
            with subtests.test(i=i):
                assert 0
"""


@pytest.mark.parametrize(("tests", "failed"), [("test_one_fails", 1), ("", 3)])
def test_failed_subtests_are_counted_in_pytest_s_words(
    pytester: pytest.Pytester, run_qbench: RunQBench, tests: str, failed: int
) -> None:
    """The summaries (report.md, summary.md, the HTML page) count the failed subtests as pytest
    words its subtest counts, ``N subtests failed`` whatever N (``1 subtests passed``), and the
    tests as ``1 test``/``2 tests``. Before: ``1 failed subtests``, ``1 tests``."""
    pytester.makepyfile(test_s=SUBTESTS)
    selected = [f"test_s.py::{tests}"] if tests else []
    run = run_qbench(*selected, "--qbench-html=page.html")
    count = 1 if tests else 2
    line = run.markdown.splitlines()[2]
    word = "test" if count == 1 else "tests"
    assert line.startswith(
        f"**{count}** {word} · pass rate **0.0%** · **{failed}** subtests failed"
    )
    html = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert f"<strong>{count}</strong> {word} · " in html
    assert f"<strong>{failed}</strong> subtests failed" in html


def test_every_heading_of_report_md_counts(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """report.md's "Expected failures" heading counts its tests (xfailed and xpassed) like the
    other headings (Failures, Errors, Skipped, Flaky...), and so does the HTML page's "Skipped,
    by reason". Before, they alone had no count."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.xfail(reason="known")
        def test_x1(): assert 0

        @pytest.mark.xfail(reason="known")
        def test_x2(): assert 0

        @pytest.mark.xfail(reason="fixed?")
        def test_xp(): pass

        def test_bad(): assert 0

        def test_skip(): pytest.skip("later")
        """
    )
    run = run_qbench("--qbench-html=page.html")
    headings = [line for line in run.markdown.splitlines() if line.startswith("## ")]
    headings = [h for h in headings if h != "## Slowest tests"]  # shown for slow tests only
    assert headings == [
        "## Failures (1)",
        "## Skipped (1)",
        "## Expected failures (3)",
    ]
    html = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert "<h2>Skipped, by reason (1)</h2>" in html


@pytest.mark.parametrize(
    ("args", "headline"),
    [
        ((), "4 tests collected"),
        (("test_x.py::test_a",), "1 test collected"),
        (("-k", "test_a"), "1/4 tests collected (3 deselected)"),
        (("-k", "nomatch"), "no tests collected (4 deselected)"),
    ],
)
def test_a_collection_s_headline_is_pytest_s_line(
    pytester: pytest.Pytester, run_qbench: RunQBench, args: tuple[str, ...], headline: str
) -> None:
    """``--collect-only``: report.md's and the HTML page's headline is pytest's closing line
    (``no tests collected (4 deselected)``, not ``0/4 tests collected``)."""
    pytester.makepyfile(
        test_x="def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass",
        test_y="def test_one(): pass",
    )
    run = run_qbench("--co", *args, "--qbench-html=page.html")
    run.result.stdout.fnmatch_lines([f"*= {headline} in *"])
    assert run.markdown.splitlines()[0].split(": ", 1)[1].rsplit(" in ", 1)[0] == headline
    html = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert f"Collection: {headline} in " in html


def test_an_output_that_cannot_be_rendered_is_in_report_json(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.md's template fails (the user's, from --qbench-template-dir): report.json, written
    first, records it (``run.recording_errors``), so a reader of report.json alone sees an
    incomplete run, never a whole green one; so do the HTML page, the digest and the history
    index; the --qbench-md copy of an earlier run is removed, not left green beside this run.
    Before, only the terminal said so, and the earlier run's copy stayed."""
    pytester.makepyfile("def test_ok(): pass")
    (pytester.path / "tpl").mkdir()
    (pytester.path / "tpl" / "report.md.j2").write_text("{{ no_such_variable }}\n")
    (pytester.path / "out.md").write_text("# ✅ Test report: 1 passed (an earlier run)\n")
    run = run_qbench(
        "--qbench-template-dir=tpl",
        "--qbench-md=out.md",
        "--qbench-html=page.html",
        "--qbench-digest=digest.json",
    )
    assert run.result.ret == 0  # pytest's status: no gate failed
    error = (
        "could not write report.md: template 'report.md.j2' failed: UndefinedError: "
        "'no_such_variable' is undefined"
    )
    assert run.report.run.recording_errors == [error]
    assert not (run.run_dir / "report.md").exists()
    assert not (pytester.path / "out.md").exists()
    run.result.stdout.fnmatch_lines(
        [f"qbench: {error}", "qbench: removed out.md, an earlier run's, as it was not written"]
    )
    html = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert 'data-ok="false"' in html and "<title>Incomplete:" in html
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
    from pytest_qbench.cli import main

    capsys.readouterr()
    assert main(["show", "last", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["recording_errors"] == 1


def test_an_internal_error_in_a_later_output_is_in_every_output(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of qbench's rendering the CTRF document, an output written after report.json and
    report.md: both, and the job summary, say the run is incomplete and name the error; every
    output rendered before the failure was rendered again. Before, report.json and report.md
    read ``1 passed``, green, and only the terminal named the error."""
    import pytest_qbench.report.ctrf

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("injected")

    monkeypatch.setattr(pytest_qbench.report.ctrf, "render_ctrf", broken)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    pytester.makepyfile("def test_ok(): pass")
    run = run_qbench("--qbench-ctrf=ctrf.json", "--qbench-json=out.json")
    error = "internal error in writing --qbench-ctrf: RuntimeError: injected"
    assert run.report.run.recording_errors == [error]
    copy = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert copy["run"]["recording_errors"] == [error]
    assert not (pytester.path / "ctrf.json").exists()
    assert run.markdown.startswith("# ❌ Test report incomplete")
    assert f"The error: {error}." in run.markdown
    assert "the counts are whole, but an output asked for is missing" in run.markdown
    summary = (pytester.path / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# ❌ Test report incomplete") and error in summary
    run.result.stdout.fnmatch_lines([f"qbench: {error}"])


def test_max_warnings_without_the_terminal_reporter_is_not_exit_6(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """pytest 9's ``--max-warnings`` status (6) is set by its terminal reporter: with ``-p
    no:terminal`` pytest exits 0 with more warnings than allowed, and the report says 0, green.
    Before, qbench foresaw a 6 that never came: ``pytest exited 6``, red, beside a green job."""
    pytester.makepyfile("import warnings\ndef test_w(): warnings.warn('w1')")
    run = run_qbench(
        "-p", "no:terminal", "--max-warnings=0", "-W", "always", "--qbench-run-id=a", run_dir="a"
    )
    assert run.result.ret == 0
    assert run.report.run.exit_code == 0
    assert run.markdown.startswith("# ✅ Test report: 1 passed, 1 warning in ")
    with_terminal = run_qbench("--max-warnings=0", "-W", "always", "--qbench-run-id=b", run_dir="b")
    assert with_terminal.result.ret == 6
    assert with_terminal.report.run.exit_code == 6


STEPWISE = """
    def test_a(): pass
    def test_b(): assert 0
    def test_c(): pass
"""


def test_a_run_stepwise_stopped_says_so(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """``--sw`` stops the run at a failure (pytest: ``Interrupted: Test failed, continuing from
    this test next run.``, exit status 2): the report's reason is pytest's, not "Ctrl-C,
    pytest.exit or a signal"."""
    pytester.makepyfile(STEPWISE)
    run = run_qbench("--sw", "-p", "no:randomly")
    assert run.result.ret == pytest.ExitCode.INTERRUPTED
    assert run.report.run.interrupted is True
    assert (
        "**❌ Not green:** the run did not finish: pytest stopped the run: Test failed, continuing "
        "from this test next run; this report holds the tests that ran"
    ) in run.markdown
    assert "Ctrl-C" not in run.markdown


def test_the_warnings_heading_is_pytest_s_count_in_every_output(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """1 200 warnings: pytest's closing line says ``1200 warnings``; report.json keeps the first
    1 000. The HTML page's heading said ``Warnings (1000)`` and report.md ``…and 950 more
    warnings``; both now count pytest's 1 200 and say what report.json keeps."""
    pytester.makepyfile(
        "import warnings\ndef test_many():\n    for i in range(1200):\n        warnings.warn(f'w{i}')"
    )
    run = run_qbench("-W", "always", "--qbench-html=page.html")
    run.result.stdout.fnmatch_lines(["*1 passed, 1200 warnings in *"])
    assert len(run.report.warnings) == 1000
    assert "## Warnings (1200)" in run.markdown
    assert "…and 1150 more warnings (report.json keeps the first 1000)." in run.markdown
    html = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert "<h2>Warnings (1200)</h2>" in html
    assert "…and 200 more warnings (report.json keeps the first 1000)." in html


def test_a_run_xdist_stopped_at_its_first_failure_says_so(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """``-n 2 -x``: pytest-xdist stops the run (``stopping after 1 failures``, exit status 2,
    its own ``Interrupted``): the report's reason is xdist's words, not "Ctrl-C"."""
    pytest.importorskip("xdist")
    pytester.makepyfile(STEPWISE)
    run = run_qbench("-p", "xdist", "-n", "2", "-x", subprocess=True)
    assert run.result.ret == pytest.ExitCode.INTERRUPTED
    assert "pytest stopped the run: stopping after 1 failures" in run.markdown
    assert "Ctrl-C" not in run.markdown


def test_a_job_summary_that_cannot_be_rendered_says_so_on_the_job_page(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job summary's template fails (the user's ``step-summary.md.j2``): the job page gets a
    red line naming the error instead of nothing, and report.json and report.md record it.
    Before, the job page showed nothing of the run and report.json read whole."""
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile("def test_ok(): pass")
    (pytester.path / "tpl").mkdir()
    (pytester.path / "tpl" / "step-summary.md.j2").write_text("{{ nope }}\n")
    run = run_qbench("--qbench-template-dir=tpl")
    error = (
        "could not write $GITHUB_STEP_SUMMARY: template 'step-summary.md.j2' failed: "
        "UndefinedError: 'nope' is undefined"
    )
    assert run.report.run.recording_errors == [error]
    assert run.markdown.startswith("# ❌ Test report incomplete")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# ❌ qbench: this job summary could not be written\n\n")
    assert "'nope' is undefined" in text


def test_a_bug_in_the_outputs_driver_leaves_no_earlier_runs_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of qbench's outside any one output (the loop that renders and writes them all):
    the --qbench-md and --qbench-json files of an earlier, green run are not left beside this
    run as if they were its reports: each holds qbench's last-resort report, never green, naming
    the bug (docs/fail-closed.md), and the terminal says so. Before, they stayed (found by the
    lead's fault injection)."""
    from pytest_qbench.history import publish

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("injected")

    monkeypatch.setattr(publish.Publisher, "_render_all", broken)
    pytester.makepyfile("def test_ok(): pass")
    (pytester.path / "out.md").write_text("# ✅ Test report: 1 passed (an earlier run)\n")
    (pytester.path / "out.json").write_text("{}\n")
    result = pytester.runpytest(
        "-p", "qbench", "-p", "no:randomly", "--qbench-md=out.md", "--qbench-json=out.json"
    )
    assert result.ret == 0  # pytest's status: no gate
    result.stdout.fnmatch_lines(["qbench: internal error in writing the outputs: RuntimeError: *"])
    result.stdout.fnmatch_lines(["qbench: out.json, out.md: a last-resort report *"])
    markdown = (pytester.path / "out.md").read_text()
    assert markdown.startswith("# ❌ Test report incomplete")
    assert "an earlier run" not in markdown
    assert "RuntimeError: injected" in markdown
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["results"] == []
    assert any("RuntimeError: injected" in e for e in report["run"]["recording_errors"])


SETUP_ERROR_THEN_DEATH = """
    import os, signal, pytest

    @pytest.fixture
    def dying():
        yield
        if os.environ["QBENCH_TEST_DEATH"] == "os._exit":
            __import__('pytest_qbench.report.store').report.store.wait_written(); os._exit(3)
        __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

    @pytest.fixture
    def broken():
        raise RuntimeError("the database is down")

    def test_first():
        pass

    def test_killed(dying, broken):
        pass
"""


@pytest.mark.parametrize("death", ["os._exit", "SIGKILL"])
def test_a_death_in_the_teardown_keeps_the_setup_s_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, death: str
) -> None:
    """A test whose setup errored and whose process then died in its teardown: the rebuilt
    report and the history keep the setup's error (its type, message and where it was raised)
    and say it died in the teardown (``teardown_failure``). Before, the result said only
    ``ProcessDied`` in teardown: why the test errored was lost."""
    pytester.makepyfile(test_k=SETUP_ERROR_THEN_DEATH)
    monkeypatch.setenv("QBENCH_TEST_DEATH", death)
    died = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly", "--qbench-run-id=k")
    assert died.ret not in (0, 1)
    shown = qbench_here("show", "k")  # the history's path
    assert shown.ret == 0
    lines = pytest.LineMatcher(shown.out.splitlines())
    lines.fnmatch_lines(["*test_k.py::test_killed*RuntimeError*: the database is down"])
    assert qbench_here("render", ".qbench/runs/k").ret == 0
    report = json.loads((pytester.path / ".qbench/runs/k/report.json").read_text())
    [killed] = [r for r in report["results"] if r["nodeid"] == "test_k.py::test_killed"]
    failure, teardown = killed["failure"], killed["teardown_failure"]
    assert killed["outcome"] == "error"
    assert (failure["phase"], failure["error_type"]) == ("setup", "RuntimeError")
    assert failure["error_message"] == "the database is down"
    assert failure["file"] == "test_k.py" and failure["line"] == 12
    assert (teardown["phase"], teardown["error_type"]) == ("teardown", "ProcessDied")
    assert report["summary"]["errors"] == 1 and report["run"]["interrupted"] is True


def test_a_worker_dying_in_the_teardown_after_a_setup_error_says_so(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under pytest-xdist, a worker that dies in the teardown of a test whose setup errored:
    pytest says ``1 failed, 1 error`` for it (the setup's error, then xdist's crash report).
    The result keeps the setup's error and now says where the process died, in its teardown
    (``teardown_failure``: the crash). Before, the crash was taken for a call that never ran
    and dropped, since the setup's error came first."""
    pytester.makepyfile(test_k=SETUP_ERROR_THEN_DEATH)
    monkeypatch.setenv("QBENCH_TEST_DEATH", "os._exit")
    run = run_qbench("-p", "xdist", "-n", "2", "-p", "no:randomly", subprocess=True)
    run.result.assert_outcomes(passed=1, failed=1, errors=1)
    killed = run.by_name("test_killed")
    assert killed.outcome == "error" and killed.counted_as == ["error", "failed"]
    assert killed.failure is not None and killed.failure.error_type == "RuntimeError"
    assert killed.failure.phase == "setup"
    teardown = killed.teardown_failure
    assert teardown is not None and teardown.phase == "teardown"
    assert "crashed while running 'test_k.py::test_killed'" in teardown.error_message


def test_a_kept_setup_error_is_read_only_whole_and_for_its_test(tmp_path: Path) -> None:
    """The setup's error kept for a death in the teardown (``setup-error.json``) is read only
    when the phase mark says the teardown follows a setup error, for the test it names, and
    when it is whole JSON (a death between its write and its cut leaves an earlier tail)."""
    from pytest_qbench.report.store import PhaseMark
    from pytest_qbench.report.store import died_setup_failure

    mark = PhaseMark(tmp_path / "phase")
    failure = {"error_type": "RuntimeError", "error_message": "down", "phase": "setup"}
    mark.keep_setup_error("t.py::test_long_name", {**failure, "stack_trace": "x" * 100})
    mark.keep_setup_error("t.py::test_a", failure)
    assert died_setup_failure(tmp_path / "phase", "t.py::test_a") is None  # mark: setup goes
    assert mark.map is not None
    mark.map[0] = 3
    assert died_setup_failure(tmp_path / "phase", "t.py::test_a") == failure
    assert died_setup_failure(tmp_path / "phase", "t.py::test_b") is None
    kept = tmp_path / "setup-error.json"
    kept.write_bytes(kept.read_bytes() + b', "tail of an earlier one"}')
    assert died_setup_failure(tmp_path / "phase", "t.py::test_a") is None
    mark.close()
    assert not kept.exists()
