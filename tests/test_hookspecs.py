"""The pytest_qbench_* hooks, implemented in a conftest.py as another plugin would."""

from __future__ import annotations

import pytest

from conftest import RunQBench


def test_hooks_change_what_is_written(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """modify_result, modify_report and markdown_sections all reach report.json and report.md."""
    pytester.makeconftest(
        """
        from pytest_qbench import ReportSection

        def pytest_qbench_modify_result(result, config):
            print("HOOK: result", result.nodeid)
            result.user_properties.append(("owner", "team-a"))

        def pytest_qbench_modify_report(report, config):
            print("HOOK: report", report.summary.total)
            report.environment.extra["build"] = "1234"

        def pytest_qbench_markdown_sections(report, config):
            return [ReportSection(title="Deploy", body="Deployed **build 1234**.")]
        """
    )
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass")
    run = run_qbench("-s")
    run.result.stdout.fnmatch_lines(
        ["*HOOK: result test_hooks_change_what_is_written.py::test_a*", "*HOOK: report 2*"]
    )
    assert all(("owner", "team-a") in r.user_properties for r in run.report.results)
    assert run.report.environment.extra == {"build": "1234"}
    assert [s.title for s in run.report.sections] == ["Deploy"]
    assert "## Deploy\n\nDeployed **build 1234**." in run.markdown


def test_failing_hook_is_contained(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A broken modify_result implementation is noted; results and exit status are kept."""
    pytester.makeconftest(
        """
        def pytest_qbench_modify_result(result, config):
            raise ZeroDivisionError("plugin bug")
        """
    )
    pytester.makepyfile("def test_a(): pass")
    run = run_qbench()
    assert run.result.ret == 0
    assert [r.outcome for r in run.report.results] == ["passed"]
    run.result.stdout.fnmatch_lines(
        ["qbench: internal error in pytest_qbench_modify_result*plugin bug"]
    )


def test_render_rebuild_keeps_hook_data(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """`qbench render RUN_DIR` of a finished run keeps what the hooks added."""
    from pytest_qbench.cli import main
    from pytest_qbench.report.models import TestReport

    pytester.makeconftest(
        """
        from pytest_qbench import ReportSection

        def pytest_qbench_modify_report(report, config):
            report.environment.extra["build"] = "77"

        def pytest_qbench_markdown_sections(report, config):
            return [ReportSection(title="Owners", body="team-a")]
        """
    )
    pytester.makepyfile("def test_a(): pass")
    run = run_qbench()
    (run.run_dir / "report.json").unlink()
    assert main(["render", str(run.run_dir)]) == 0
    rebuilt = TestReport.model_validate_json((run.run_dir / "report.json").read_text())
    assert rebuilt.environment.extra == {"build": "77"}
    assert [s.title for s in rebuilt.sections] == ["Owners"]
    assert rebuilt.summary.model_dump(exclude={"duration"}) == run.report.summary.model_dump(
        exclude={"duration"}
    )


def test_invalid_values_from_hooks_are_contained(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A hook leaving a value of the wrong type: noted, the report and the result still written."""
    pytester.makeconftest(
        """
        def pytest_qbench_modify_result(result, config):
            result.duration = "slow"  # not a number

        def pytest_qbench_modify_report(report, config):
            report.environment.extra["thing"] = object()  # not text
        """
    )
    pytester.makepyfile("def test_a(): pass")
    run = run_qbench(subprocess=True)
    assert run.result.ret == 0
    assert [r.outcome for r in run.report.results] == ["passed"]
    assert isinstance(run.report.results[0].duration, float)
    assert run.report.environment.extra == {}
    run.result.stdout.fnmatch_lines(
        [
            "qbench: internal error in pytest_qbench_modify_result*duration*",
            "qbench: internal error in the report as the hooks left it*",
        ]
    )


def test_hook_sees_the_result_kept_after_an_internal_error(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When building a result fails inside qbench, the result kept with what is certain still
    goes through modify_result, as every other result does."""
    from pytest_qbench.plugin.collectors import TestAccumulator

    def broken(self: TestAccumulator, *args: object, **kwargs: object) -> None:
        raise RuntimeError("qbench bug")

    monkeypatch.setattr(TestAccumulator, "result", broken)
    # a plain pass's result is made without an accumulator: broken there too, it falls back
    monkeypatch.setattr("pytest_qbench.plugin.session.plain_pass_result", broken)
    pytester.makeconftest(
        """
        def pytest_qbench_modify_result(result, config):
            result.reason = "seen by the hook"
        """
    )
    pytester.makepyfile("def test_a(): pass")
    run = run_qbench()
    run.result.stdout.fnmatch_lines(["qbench: internal error in building the result*qbench bug"])
    assert [(r.outcome, r.reason) for r in run.report.results] == [("passed", "seen by the hook")]
