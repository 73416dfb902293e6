"""``qbench merge``: shard reports merged equal the report of the whole run (issue 5)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from pytest_qbench.cli import main
from pytest_qbench.core.errors import MergeError
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.report import junit
from pytest_qbench.report.merge import Source
from pytest_qbench.report.merge import merge_reports
from pytest_qbench.report.merge import merged_exit_code
from pytest_qbench.report.models import CoverageReport
from pytest_qbench.report.models import GateResult
from pytest_qbench.report.models import ReportSummary
from pytest_qbench.report.models import TestReport
from pytest_qbench.report.verdict import run_green

from conftest import QBenchRun
from conftest import RunQBench
from conftest import compact_report


DATA = Path(__file__).parent / "data" / "junit"

SUITE = {
    "test_one": """
        import pytest

        def test_a():
            pass

        def test_b():
            assert 1 == 2

        @pytest.mark.skip(reason="not today")
        def test_c():
            pass

        @pytest.mark.xfail(reason="known bug")
        def test_d():
            assert 0

        @pytest.mark.slow
        def test_slow():
            pass
    """,
    "test_two": """
        import warnings
        import pytest

        warnings.warn(DeprecationWarning("old module api"))

        @pytest.fixture
        def broken():
            raise RuntimeError("setup broke")

        def test_e(broken):
            pass

        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_f(n):
            assert n != 3

        def test_g():
            warnings.warn(UserWarning("careful"))
    """,
    "test_three": """
        import pytest

        pytest.importorskip("no_such_module_anywhere")

        def test_h():
            pass
    """,
    "test_broken": """
        import no_such_module_either
    """,
}
INI = "[pytest]\nmarkers =\n    slow: slow tests\n"
COMMON = ("--continue-on-collection-errors", "-p", "no:cacheprovider", "-W", "default")
SUMMARY_FIELDS = [f for f in ReportSummary.model_fields if f != "duration"]


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """Four modules: every outcome, a setup error, warnings at import and in a test, a module
    skipped at collection and one that fails to collect."""
    pytester.makeini(INI)
    for name, source in SUITE.items():
        pytester.makepyfile(**{name: source})
    return pytester


def shard(run_qbench: RunQBench, name: str, *args: str) -> QBenchRun:
    """One pytest run with its own run id."""
    return run_qbench(*COMMON, f"--qbench-run-id={name}", *args, run_dir=name)


def merged(*runs: QBenchRun) -> TestReport:
    return merge_reports([Source(str(r.run_dir), r.report) for r in runs])


def assert_same_run(merged_report: TestReport, whole: TestReport) -> None:
    """Summary (but the duration), every test's outcome and counts, and the diagnostics equal."""
    for field in SUMMARY_FIELDS:
        assert getattr(merged_report.summary, field) == getattr(whole.summary, field), field
    assert merged_report.summary.pass_rate == whole.summary.pass_rate

    def tests(report: TestReport) -> dict[str, tuple[object, ...]]:
        return {
            r.nodeid: (r.outcome, r.counted_as, r.reruns, r.flaky, r.reason) for r in report.results
        }

    assert tests(merged_report) == tests(whole)
    assert len(merged_report.results) == len(whole.results)
    pytest_warnings = [w.message for w in merged_report.warnings if w.tool == "pytest"]
    assert sorted(pytest_warnings) == sorted(
        w.message for w in whole.warnings if w.tool == "pytest"
    )
    assert sorted(e.message for e in merged_report.collection_errors) == sorted(
        e.message for e in whole.collection_errors
    )
    assert merged_report.run.exit_code == whole.run.exit_code


def test_shards_by_keyword_equal_the_whole_run(
    suite: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Shards cut with -k merge into the whole run's report: counts, outcomes, the collection
    error and import-time warning every shard saw counted once, no test deselected."""
    whole = shard(run_qbench, "whole")
    assert whole.report.summary.errors == 2 and whole.report.summary.warnings == 2
    first = shard(run_qbench, "k1", "-k", "test_a or test_b or test_c or test_e")
    second = shard(run_qbench, "k2", "-k", "not (test_a or test_b or test_c or test_e)")
    assert first.report.summary.deselected and second.report.summary.deselected
    report = merged(first, second)
    assert_same_run(report, whole.report)
    assert report.summary.deselected == 0
    assert [s.source for s in report.shards] == [str(first.run_dir), str(second.run_dir)]
    assert [s.run.run_id for s in report.shards] == ["k1", "k2"]
    assert report.shards[0].summary == first.report.summary
    assert report.shards[1].environment == second.report.environment


def test_shards_by_file_with_their_own_deselection(
    suite: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Three shards by file, each deselecting slow tests, merge into the whole run with -m."""
    whole = shard(run_qbench, "whole", "-m", "not slow")
    runs = [
        shard(run_qbench, f"f{i}", "-m", "not slow", f"{name}.py")
        for i, name in enumerate(("test_one", "test_two", "test_three"))
    ]
    report = merged(*runs)
    # every shard's file-level collection misses test_broken: the whole run has it
    assert report.summary.errors == whole.report.summary.errors - 1
    for field in ("total", "passed", "failed", "skipped", "xfailed", "deselected", "warnings"):
        assert getattr(report.summary, field) == getattr(whole.report.summary, field), field
    assert report.summary.deselected == 1


def test_keyword_slices_of_a_run_that_deselects(
    suite: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """-k slices of a run that itself deselects: only what no slice ran is deselected."""
    whole = shard(run_qbench, "whole", "-m", "not slow")
    first = shard(run_qbench, "k1", "-m", "not slow", "-k", "test_a or test_f")
    second = shard(run_qbench, "k2", "-m", "not slow", "-k", "not (test_a or test_f)")
    assert_same_run(merged(first, second), whole.report)


FLAKY = """
    import pathlib

    def test_ok():
        pass

    def test_flaky():
        marker = pathlib.Path(__file__).with_name("attempts.txt")
        n = int(marker.read_text()) if marker.exists() else 0
        marker.write_text(str(n + 1))
        assert n >= 1, f"attempt {n}"

    def test_always_fails():
        raise KeyError("nope")
"""


def test_rerun_shard_equals_pytest_rerunfailures(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A shard rerunning the failures of another merges into what pytest-rerunfailures reports
    for one run with --reruns 1: the last attempt wins, earlier failures become attempts."""
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(test_rr=FLAKY)
    attempts = pytester.path / "attempts.txt"
    whole = shard(run_qbench, "whole", "-p", "pytest_rerunfailures", "--reruns", "1")
    assert (whole.report.summary.reruns, whole.report.summary.flaky) == (2, 1)
    attempts.unlink()
    first = shard(run_qbench, "first")
    failed = [r.nodeid for r in first.report.results if r.outcome in ("failed", "error")]
    assert len(failed) == 2
    rerun = shard(run_qbench, "rerun", *failed)
    report = merged(first, rerun)
    assert_same_run(report, whole.report)
    flaky = next(r for r in report.results if r.nodeid.endswith("test_flaky"))
    assert flaky.flaky and flaky.attempts[0].failure is not None
    assert flaky.attempts[0].failure.error_message.startswith("attempt 0")
    assert [r.nodeid.split("::")[1] for r in report.results] == [
        "test_ok",
        "test_flaky",
        "test_always_fails",
    ]
    [note] = [w for w in report.warnings if w.code == "merge-resolved"]
    assert note.tool == "qbench" and note.message.startswith("2 test(s) ran in more than one")
    # given in the other order, the later attempt still wins: it started later
    assert merged(rerun, first).summary == report.summary


def test_merging_is_associative(suite: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A merged report merges again like its shards; its shards are listed, not itself."""
    runs = [
        shard(run_qbench, "k1", "-k", "test_a or test_b"),
        shard(run_qbench, "k2", "-k", "test_c or test_d or test_e"),
        shard(run_qbench, "k3", "-k", "not (test_a or test_b or test_c or test_d or test_e)"),
    ]
    all_at_once = merged(*runs)
    in_steps = merge_reports([Source("ab", merged(runs[0], runs[1])), Source("c", runs[2].report)])
    for field in SUMMARY_FIELDS:
        assert getattr(in_steps.summary, field) == getattr(all_at_once.summary, field), field
    assert [s.run.run_id for s in in_steps.shards] == ["k1", "k2", "k3"]
    with pytest.raises(MergeError, match="hold the same run \\(k1\\)"):
        merge_reports([Source("ab", in_steps), Source("again", runs[0].report)])


# --- polyglot, coverage, exit codes ---------------------------------------------------------


def test_pytest_and_vitest_in_one_report(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """An ingested JUnit report merges with a pytest report: counts add, both runners named."""
    pytester.makepyfile(test_py="def test_py(): pass\ndef test_bad(): assert 0\n")
    python = run_qbench()
    vitest = junit.read_junit([DATA / "vitest.xml"])
    report = merge_reports([Source("report.json", python.report), Source("vitest.json", vitest)])
    s = report.summary
    assert (s.total, s.passed, s.failed, s.skipped) == (9, 5, 3, 1)
    assert report.run.tool == "pytest+vitest"
    assert report.run.exit_code == 1
    assert report.run.started_at == vitest.run.started_at  # vitest's run came first
    assert report.environment == python.report.environment
    assert [s.run.tool for s in report.shards] == ["pytest", "vitest"]


def test_coverage_is_left_out_with_a_note(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Shard coverage is not merged: the merged report has none, and a note says how to get it."""
    pytester.makepyfile("def test_x(): pass\n")
    report = run_qbench().report
    covered = report.model_copy(
        update={"coverage": CoverageReport(percentage=50.0, lines_covered=1, lines_total=2)}
    )
    other = report.model_copy(update={"run": report.run.model_copy(update={"run_id": "other"})})
    result = merge_reports([Source("a.json", covered), Source("b.json", other)])
    assert result.coverage is None
    [note] = [w for w in result.warnings if w.code == "merge-coverage"]
    assert "a.json" in note.message and "coverage combine" in note.message


@pytest.mark.parametrize(
    ("codes", "failed", "expected"),
    [
        ([0, 0], 0, 0),
        ([1, 0], 1, 1),
        ([1, 0], 0, 0),  # the failure passed in a rerun shard
        ([2, 1], 1, 2),  # interrupted beats failed
        ([3, 2], 0, 3),  # internal error beats everything
        ([4, 1], 1, 4),
        ([5, 0], 0, 0),  # a shard that got no tests is no failure
        ([5, 5], 0, 5),
        ([None, 1], 1, 1),  # an ingested report has no exit code
        ([None, None], 0, None),
        ([137, 1], 1, 137),
    ],
)
def test_merged_exit_code(codes: list[int | None], failed: int, expected: int | None) -> None:
    """The worst meaningful exit code; 1 follows the merged tests."""
    reports = []
    for code in codes:
        shard_failed = 1 if code == 1 else 0
        report = junit.read_junit([DATA / "jest-junit.xml"])
        summary = report.summary.model_copy(update={"failed": shard_failed, "errors": 0})
        run = report.run.model_copy(update={"exit_code": code})
        reports.append(report.model_copy(update={"summary": summary, "run": run}))
    assert merged_exit_code(reports, ReportSummary(failed=failed)) == expected


def test_gate_failure_without_failing_tests_is_kept() -> None:
    """A shard's 1 without failing tests (a coverage gate) stays 1."""
    report = junit.read_junit([DATA / "go-junit-report.xml"])
    passing = report.model_copy(
        update={
            "summary": report.summary.model_copy(update={"failed": 0}),
            "run": report.run.model_copy(update={"exit_code": 1}),
        }
    )
    assert merged_exit_code([passing], ReportSummary()) == 1


# --- errors and the command -----------------------------------------------------------------


@pytest.fixture
def two_reports(pytester: pytest.Pytester, run_qbench: RunQBench) -> tuple[Path, Path]:
    """Two shards' report.json files."""
    pytester.makepyfile(test_m="def test_a(): pass\ndef test_b(): assert 0\n")
    first = shard(run_qbench, "s1", "-k", "test_a")
    second = shard(run_qbench, "s2", "-k", "test_b")
    return first.run_dir / "report.json", second.run_dir / "report.json"


def test_cli_merge_and_render(
    two_reports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``qbench merge A B -o OUT --md MD`` writes both; ``qbench render OUT`` renders the same."""
    out, md = tmp_path / "merged" / "report.json", tmp_path / "merged" / "report.md"
    argv = ["merge", *map(str, two_reports), "-o", str(out), "--md", str(md)]
    assert main(argv) == OK
    assert capsys.readouterr().out == "qbench: merged 2 reports: 2 tests: 1 failed, 1 passed\n"
    report = TestReport.model_validate_json(out.read_text(encoding="utf-8"))
    assert report.run.command == ["qbench", *argv[:3]]
    markdown = md.read_text(encoding="utf-8")
    assert markdown.startswith("# ❌ Test report: 1 failed, 1 passed")
    assert main(["render", str(out)]) == OK
    assert capsys.readouterr().out == markdown
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]


def test_cli_merge_run_directories_to_stdout(
    two_reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Run directories are accepted; ``-o -`` prints the JSON (as a report.json: each result
    without its fields at their default) and the note goes to stderr."""
    assert main(["merge", *(str(p.parent) for p in two_reports), "-o", "-"]) == OK
    captured = capsys.readouterr()
    assert captured.out.endswith("}\n")
    assert json.loads(captured.out)["summary"]["total"] == 2
    assert json.loads(captured.out) == compact_report(TestReport.model_validate_json(captured.out))
    assert captured.err.startswith("qbench: merged 2 reports")


def test_cli_merge_refuses_bad_inputs(
    two_reports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another schema version, a file that is no report, JUnit XML and the same run twice are
    each one error line naming the file, and nothing is written."""
    good = str(two_reports[0])
    old = tmp_path / "old.json"
    data = json.loads(two_reports[1].read_text(encoding="utf-8"))
    data["meta"]["schema_version"] = 99
    old.write_text(json.dumps(data))
    (tmp_path / "package.json").write_text('{"name": "x"}')
    out = tmp_path / "out.json"
    cases = [
        (old, "old.json has schema_version 99"),
        (tmp_path / "package.json", "package.json is not a qbench report"),
        (DATA / "vitest.xml", f"run 'qbench ingest-junit {DATA / 'vitest.xml'} -o "),
        (Path(good), "hold the same run (s1); give each shard's report once"),
    ]
    for bad, fragment in cases:
        assert main(["merge", good, str(bad), "-o", str(out)]) == ERR
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith("qbench: error: ") and fragment in captured.err
    assert not out.exists()


def test_console_script_exit_codes(
    pytester: pytest.Pytester, two_reports: tuple[Path, Path], tmp_path: Path
) -> None:
    """The installed ``qbench merge``: 0 when merged, 1 on a bad input, 2 on a usage error."""
    script = Path(sys.executable).with_name("qbench")
    found = str(script) if script.is_file() else shutil.which("qbench")
    if found is None:
        pytest.skip("the qbench console script is not installed next to python or on PATH")
    out = tmp_path / "merged.json"
    ok = pytester.run(found, "merge", *map(str, two_reports), "-o", str(out))
    assert ok.ret == OK and out.is_file()
    bad = pytester.run(found, "merge", str(two_reports[0]), str(tmp_path / "nope.json"), "-o", "x")
    assert bad.ret == ERR
    bad.stderr.fnmatch_lines(["qbench: error: cannot read report *nope.json*"])
    usage = pytester.run(found, "merge", str(two_reports[0]))
    assert usage.ret == 2
    usage.stderr.fnmatch_lines(["*the following arguments are required: -o/--output*"])


def test_a_shard_killed_mid_run_deselects_nothing_it_did_not_reach(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Two -k slices of one collection, the first killed (SIGKILL) mid-test: merged from their
    run directories, no test is deselected (each slice ran what the other deselected), and the
    test the killed shard never reached is not counted deselected. Before, the killed shard's
    results + deselected fell short of the collection, so it was not taken for a slice and
    every shard's deselected count was added up (5 deselected of 5 tests)."""
    pytester.makepyfile(
        test_x="""
        import os, signal

        def test_a():
            pass

        def test_b():
            if os.environ.get("QBENCH_TEST_DIE"):
                __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

        def test_c():
            pass

        def test_d():
            pass

        def test_e():
            pass
        """
    )
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    died = pytester.runpytest_subprocess(
        "-p",
        "qbench",
        "--qbench-run-id=k1",
        "-p",
        "no:randomly",
        "-k",
        "test_a or test_b or test_c",
    )
    assert died.ret < 0 or died.ret > 1  # killed by SIGKILL
    monkeypatch.delenv("QBENCH_TEST_DIE")
    second = run_qbench(
        "--qbench-run-id=k2", "-p", "no:randomly", "-k", "test_d or test_e", run_dir="k2"
    )
    out = tmp_path / "merged.json"
    runs = pytester.path / ".qbench" / "runs"
    assert main(["merge", str(runs / "k1"), str(second.run_dir), "-o", str(out)]) == OK
    report = TestReport.model_validate_json(out.read_text(encoding="utf-8"))
    assert report.run.interrupted is True
    assert (report.summary.total, report.summary.passed, report.summary.failed) == (4, 3, 1)
    assert report.summary.deselected == 0


def test_a_planned_shard_missing_from_the_merge_is_not_green(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards 1/3 and 3/3 merged without 2/3 (its job died before uploading, its artifact
    missing): the merged run did not finish and a note names the missing shard, so no verdict
    is green. Before, the merged report was `✅ 2 passed` with exit code 0. All three merge
    whole, and a merged report given again with the missing shard is whole too."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # one CI commit: every shard the same plan
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    for n in range(3):
        pytester.makepyfile(**{f"test_m{n}": "def test_ok():\n    pass\n"})
    runs = [
        run_qbench(f"--qbench-shard={i}/3", f"--qbench-run-id=s{i}", run_dir=f"s{i}")
        for i in (1, 2, 3)
    ]
    assert [r.report.summary.total for r in runs] == [1, 1, 1]
    partial = merged(runs[0], runs[2])
    assert partial.run.interrupted is True
    assert not run_green(partial.model_dump(mode="json"))
    notes = [w.message for w in partial.warnings if w.code == "merge-missing-shards"]
    assert len(notes) == 1 and notes[0].startswith("shard 2/3 of the plan")
    whole = merged(*runs)
    assert whole.run.interrupted is False and run_green(whole.model_dump(mode="json"))
    again = merge_reports([Source("partial", partial), Source("s2", runs[1].report)])
    assert again.run.interrupted is False and again.summary.passed == 3
    assert again.run.exit_code == 0 and run_green(again.model_dump(mode="json"))


def test_a_merged_run_missing_a_planned_shard_has_an_interrupted_exit_code(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merged run of shards 2/3 and 3/3 (1/3's report lost) did not finish: its
    `run.exit_code` is 2 (interrupted), as for a shard that was killed, so a CI step that reads
    the exit code (`jq -e '.run.exit_code == 0'`), `qbench runs` and report.md's "exit code"
    agree with its red headline. Before, a red `❌ 2 passed, 1 deselected` said `exit code 0`
    (found on cachetools, sixth round). A shard failing its tests still gives 2, not 1."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # one CI commit: every shard the same plan
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    for n in range(3):
        pytester.makepyfile(**{f"test_m{n}": "def test_ok():\n    pass\n"})
    pytester.makepyfile(test_m2="def test_ok():\n    assert 0\n")
    runs = [
        run_qbench(f"--qbench-shard={i}/3", f"--qbench-run-id=s{i}", run_dir=f"s{i}")
        for i in (1, 2, 3)
    ]
    assert [r.report.run.exit_code for r in runs] == [0, 0, 1]
    partial = merged(runs[1], runs[2])
    assert partial.run.interrupted is True and partial.run.exit_code == 2
    passing = merged(runs[0], runs[1])
    assert passing.run.interrupted is True and passing.run.exit_code == 2
    out = pytester.path / "merged" / "report.json"
    assert main(["merge", str(runs[0].run_dir), str(runs[1].run_dir), "-o", str(out)]) == OK
    assert json.loads(out.read_text(encoding="utf-8"))["run"]["exit_code"] == 2
    assert main(["render", str(out), "-o", str(out.with_suffix(".md"))]) == OK
    assert "exit code 2" in out.with_suffix(".md").read_text(encoding="utf-8")
    whole = merge_reports([Source("passing", passing), Source("s3", runs[2].report)])
    assert whole.run.interrupted is False and whole.run.exit_code == 1


def test_cli_merge_warns_of_a_missing_planned_shard(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`qbench merge` of shard 1/2 alone says on stderr that shard 2/2 is missing."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    pytester.makepyfile(test_a="def test_ok():\n    pass\n", test_b="def test_ok():\n    pass\n")
    first = run_qbench("--qbench-shard=1/2", "--qbench-run-id=s1", run_dir="s1")
    capsys.readouterr()
    assert main(["merge", str(first.run_dir), "-o", str(pytester.path / "m.json")]) == OK
    assert "qbench: warning: shard 2/2 of the plan is not among" in capsys.readouterr().err


def test_a_shard_failing_its_gate_says_why_in_the_merged_report(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Every test passed, but one shard was below its coverage threshold (exit status 1): the
    merged run fails (exit code 1), and its gates say why, naming the shard. Before, the merged
    report was `❌ 2 passed ... exit code 1` with no gate nor reason anywhere."""
    pytester.makepyfile(test_a="def test_ok():\n    pass\n", test_b="def test_ok():\n    pass\n")
    first = run_qbench("--qbench-run-id=s1", "test_a.py", run_dir="s1")
    second = run_qbench("--qbench-run-id=s2", "test_b.py", run_dir="s2")
    gate = GateResult(
        kind="coverage",
        name="coverage",
        passed=False,
        detail="coverage 56.25% is below the required 60%",
        value=56.25,
        threshold=60.0,
    )
    below = first.report.model_copy(
        update={"gates": [gate], "run": first.report.run.model_copy(update={"exit_code": 1})}
    )
    report = merge_reports([Source("s1", below), Source("s2", second.report)])
    assert report.run.exit_code == 1 and report.summary.passed == 2
    assert [(g.passed, g.detail) for g in report.gates] == [
        (False, "shard s1: coverage 56.25% is below the required 60%")
    ]
    again = merge_reports([Source("merged", report)])
    assert [g.detail for g in again.gates] == [g.detail for g in report.gates]


def test_a_queue_machine_that_ran_every_unit_is_a_slice(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three machines of one queue, the first pulling every unit (the others found it empty and
    deselected everything): merged, nothing is deselected. Before, the first machine (0
    deselected) was not taken for a slice of the others' collection: `2 passed, 2 deselected`."""
    pytester.makepyfile(test_a="def test_ok():\n    pass\n", test_b="def test_ok():\n    pass\n")
    runs = []
    for i in (1, 2, 3):
        monkeypatch.setenv("QBENCH_QUEUE_WORKER", f"job-{i}")
        runs.append(run_qbench("--qbench-queue=q", f"--qbench-run-id=j{i}", run_dir=f"j{i}"))
    assert [len(r.report.results) for r in runs] == [2, 0, 0]
    report = merged(*runs)
    assert (report.summary.passed, report.summary.deselected) == (2, 0)
