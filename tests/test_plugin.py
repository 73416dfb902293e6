"""Every outcome kind through a real pytest run, and the report's agreement with pytest."""

from __future__ import annotations

import json

import pytest

from pytest_qbench import plugin
from pytest_qbench.plugin import collect_dump

from conftest import ALL_OUTCOMES
from conftest import RunQBench
from conftest import assert_summary_matches_pytest
from conftest import line_of


def test_every_outcome_matches_pytest(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Counts equal pytest's line, including setup/teardown errors and strict xpass."""
    pytester.makepyfile(ALL_OUTCOMES)
    run = run_qbench()
    run.result.assert_outcomes(passed=2, failed=4, errors=3, skipped=2, xfailed=2, xpassed=1)
    assert_summary_matches_pytest(run)
    outcomes = {r.test_name: r.outcome for r in run.report.results}
    assert outcomes == {
        "test_pass": "passed",
        "test_fail": "failed",
        "test_raise": "failed",
        "test_skip": "skipped",
        "test_skip_inside": "skipped",
        "test_xfail": "xfailed",
        "test_xpass": "xpassed",
        "test_xpass_strict": "failed",
        "test_imperative_xfail": "xfailed",
        "test_setup_error": "error",
        "test_teardown_error": "error",
        "test_fail_and_teardown_error": "failed",
    }
    assert run.report.summary.total == 12
    assert run.report.run.exit_code == 1
    assert run.report.run.interrupted is False


def test_failure_details(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Failures carry the exception type, message, user file and line, trace and frames."""
    pytester.makepyfile(ALL_OUTCOMES)
    run = run_qbench()
    fail = run.by_name("test_fail").failure
    assert fail is not None
    assert fail.error_type == "AssertionError"
    assert "x must be two" in fail.error_message
    assert (fail.file, fail.line) == ("test_failure_details.py", line_of("assert x == 2"))
    assert fail.phase == "call"
    assert "assert x == 2" in fail.stack_trace
    assert fail.frames[-1].function == "test_fail"

    raised = run.by_name("test_raise").failure
    assert raised is not None
    assert (raised.error_type, raised.error_message) == ("ValueError", "bad value")

    setup = run.by_name("test_setup_error").failure
    assert setup is not None
    assert (setup.error_type, setup.phase) == ("RuntimeError", "setup")
    assert setup.line == line_of('raise RuntimeError("setup broke")')

    strict = run.by_name("test_xpass_strict")
    assert strict.failure is not None
    assert strict.failure.error_type == "XPASS(strict)"

    both = run.by_name("test_fail_and_teardown_error")
    assert both.failure is not None and both.failure.error_type == "AssertionError"
    assert both.teardown_failure is not None and both.teardown_failure.error_type == "OSError"


def test_reasons_and_durations(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Skip and xfail reasons are kept as plain text; durations add up."""
    pytester.makepyfile(ALL_OUTCOMES)
    run = run_qbench()
    assert run.by_name("test_skip").reason == "not today"
    assert run.by_name("test_skip_inside").reason == "inside skip"
    assert run.by_name("test_xfail").reason == "known bug"
    assert run.by_name("test_xpass").reason == "fixed?"
    assert run.by_name("test_imperative_xfail").reason == "not ready"
    for result in run.report.results:
        d = result.durations
        assert result.duration == pytest.approx(d.setup + d.call + d.teardown, abs=1e-5)


def test_capture_policy_default_keeps_failures_only(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """By default only failed and errored tests keep their captured output."""
    pytester.makepyfile(
        """
        import logging
        def test_ok():
            print("quiet success")
        def test_bad():
            print("loud failure")
            logging.getLogger("x").warning("a log line")
            assert 0
        """
    )
    run = run_qbench()
    assert run.by_name("test_ok").captured is None
    bad = run.by_name("test_bad").captured
    assert bad is not None
    assert "loud failure" in bad.stdout
    assert "a log line" in bad.log


def test_capture_all_and_cap(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """--qbench-capture=all keeps passing output; --qbench-max-output cuts with a marker."""
    pytester.makepyfile(
        """
        def test_ok():
            print("x" * 5000)
        """
    )
    run = run_qbench("--qbench-capture=all", "--qbench-max-output=100")
    out = run.by_name("test_ok").captured
    assert out is not None
    assert "qbench cut" in out.stdout
    assert "--qbench-max-output" in out.stdout
    assert len(out.stdout) < 300


def test_metadata_markers_properties(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """qbench_case metadata, the docstring, markers, and user_properties (non-JSON as repr)."""
    pytester.makepyfile(
        """
        import pytest

        class Opaque:
            def __repr__(self):
                return "<Opaque>"

        @pytest.mark.slow
        @pytest.mark.qbench_case(
            key="FRAMED-1390", priority="High", tags=["cart"], platforms=["web"],
            steps=["Open cart", {"action": "Pay", "expected": "Receipt"}, ("Close", "Gone")],
        )
        def test_case(record_property):
            '''Checkout works.

            With coupons.
            '''
            record_property("ticket", 42)
            record_property("thing", Opaque())
        """
    )
    pytester.makeini("[pytest]\nmarkers = slow")
    run = run_qbench()
    result = run.by_name("test_case")
    assert sorted(result.markers) == ["qbench_case", "slow"]
    meta = result.metadata
    assert meta is not None
    assert meta.key == "FRAMED-1390"
    assert meta.priority == "High"
    assert meta.tags == ["cart"] and meta.platforms == ["web"]
    assert [(s.index, s.action, s.expected) for s in meta.steps] == [
        (1, "Open cart", None),
        (2, "Pay", "Receipt"),
        (3, "Close", "Gone"),
    ]
    assert meta.description == "Checkout works.\n\nWith coupons."
    assert result.user_properties == [("ticket", 42), ("thing", "<Opaque>")]


def test_bad_case_marker_is_a_warning_not_a_crash(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An unknown qbench_case field is reported, and the test's result is kept."""
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.qbench_case(key="A-1", colour="red")
        def test_x():
            pass
        """
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1)
    notes = [w for w in run.report.warnings if w.tool == "qbench"]
    assert len(notes) == 1 and "colour" in notes[0].message
    assert run.report.summary.warnings == 0  # not a pytest warning: pytest's line has none


def test_collection_errors_and_warnings(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Collection errors and warnings become Diagnostics with file and line, counted as pytest does."""
    pytester.makepyfile(
        test_ok="""
        import warnings
        def test_warns():
            warnings.warn(UserWarning("careful"))
        """,
        test_broken="""
        import nonexistent_module_for_qbench
        """,
    )
    run = run_qbench("--continue-on-collection-errors", "-W", "default")
    assert_summary_matches_pytest(run)
    [error] = run.report.collection_errors
    assert error.file == "test_broken.py"
    assert "nonexistent_module_for_qbench" in error.message
    [warning] = [w for w in run.report.warnings if w.tool == "pytest"]
    assert warning.code == "UserWarning"
    assert warning.message == "careful"
    assert (warning.file, warning.line) == ("test_ok.py", 3)


def test_collection_error_stops_run(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Without --continue-on-collection-errors pytest stops; the report says so, and agrees."""
    pytester.makepyfile(
        test_broken="raise SystemError('boom at import')", test_ok="def test_a(): pass"
    )
    run = run_qbench()
    assert_summary_matches_pytest(run)
    assert run.report.run.exit_code == 2
    assert run.report.summary.errors == 1


def test_collection_error_gives_cause_and_line_and_is_not_interrupted(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A collection error is located at the failing import, its cause is in the digest's next
    step, the run is not "interrupted", and no pass rate is shown for 0 tests (issue 11.2)."""
    pytester.makepyfile(test_broken="import nonexistent_mod\n\n\ndef test_x():\n    pass\n")
    run = run_qbench("--qbench-digest", "digest.json")
    assert_summary_matches_pytest(run)
    [error] = run.report.collection_errors
    assert (error.file, error.line) == ("test_broken.py", 1)
    assert run.report.run.exit_code == 2 and run.report.run.interrupted is False
    assert run.report.summary.pass_rate is None
    assert "pass rate **n/a**" in run.markdown and "Interrupted" not in run.markdown
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["next_steps"] == [
        "Fix the collection error in test_broken.py:1: "
        "ModuleNotFoundError: No module named 'nonexistent_mod'"
    ]


def test_module_skip_counts_as_pytest_does(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A module skipped at import is one `skipped`, as in pytest's line."""
    pytester.makepyfile(
        test_skipmod="import pytest\npytest.skip('no db', allow_module_level=True)",
        test_ok="def test_a(): pass",
    )
    run = run_qbench()
    assert_summary_matches_pytest(run)
    assert run.by_name("test_skipmod.py").reason == "no db"


def test_module_skip_line_is_pytests(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A module skipped at collection is filed at the line pytest's ``-rs`` names: found on
    structlog, whose `tests/test_twisted.py:34: Skipped` read line 35 in report.json, one past
    the `pytest.skip` (pytest's collect report carries that line counted from 1 already)."""
    pytester.makepyfile(
        test_skipmod="import pytest\n\npytest.skip('no db', allow_module_level=True)\n",
        test_importor="import pytest\npytest.importorskip('no_such_module_xyz')\n",
    )
    run = run_qbench("-rs")
    run.result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] test_importor.py:2: *", "SKIPPED [[]1[]] test_skipmod.py:3: no db"]
    )
    assert run.by_name("test_skipmod.py").line == 3
    assert run.by_name("test_importor.py").line == 2


def test_module_skip_under_doctest_modules_counts_as_pytest_does(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Under --doctest-modules a test file is collected twice (Module and DoctestModule, one
    node id), and a module-level skip or importorskip is two `skipped` in pytest's line: found on
    a project whose pytest said `4 skipped` where qbench said `2 skipped`, and report.md's
    skips by reason added `…and 2 more skipped tests with other reasons`."""
    pytester.makepyfile(
        test_skipmod="import pytest\npytest.skip('no db', allow_module_level=True)",
        test_importor="import pytest\npytest.importorskip('no_such_module_xyz')",
        test_ok="def test_a(): pass",
    )
    run = run_qbench("--doctest-modules")
    run.result.assert_outcomes(passed=1, skipped=4)
    assert_summary_matches_pytest(run)
    assert run.by_name("test_skipmod.py").counted_as == ["skipped", "skipped"]
    assert "| no db | 2 |" in run.markdown
    assert "more skipped tests" not in run.markdown


def test_deselected(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """-k deselection is counted as pytest counts it."""
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass")
    run = run_qbench("-k", "test_a")
    assert_summary_matches_pytest(run)
    assert run.report.summary.deselected == 2


def test_hypothesis_falsifying_example(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A Hypothesis failure records the falsifying example."""
    pytester.makepyfile(
        """
        from hypothesis import given, settings, strategies as st

        @settings(database=None, derandomize=True)
        @given(st.integers())
        def test_small(n):
            assert n < 10
        """
    )
    run = run_qbench()
    failure = run.by_name("test_small").failure
    assert failure is not None
    assert failure.falsifying_example is not None
    assert "n=10" in failure.falsifying_example


def test_no_report_without_asking(pytester: pytest.Pytester) -> None:
    """Not asked for (no -p qbench, no option, no ini), qbench writes nothing."""
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest(plugins=[plugin])  # loaded, as an installed plugin is
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".qbench").exists()


def test_not_asked_imports_nothing_heavy(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Autoloaded but not asked for, qbench imports neither its models nor its session."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    pytester.makeconftest(
        """
        import sys
        def pytest_sessionfinish(session):
            loaded = session.config.pluginmanager.has_plugin("qbench")
            heavy = sorted(m for m in ("pytest_qbench.report.models", "pytest_qbench.plugin.session") if m in sys.modules)
            print("QBENCH LOADED:", loaded, "HEAVY:", heavy)
        """
    )
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*QBENCH LOADED: True HEAVY: []*"])
    assert not (pytester.path / ".qbench").exists()


def test_asked_defers_jinja_to_the_end(pytester: pytest.Pytester) -> None:
    """With reports asked for but no ``--qbench-template``, Jinja is not imported while the
    tests run (only when report.md is written): pytest's start-up stays cheap."""
    pytester.makepyfile(
        """
        import sys
        def test_a():
            print("JINJA WHILE TESTING:", "jinja2" in sys.modules)
        """
    )
    flags = ("-s", "-p", "qbench", "-p", "no:cacheprovider", "--qbench-dir=.q")
    result = pytester.runpytest_subprocess(*flags)
    result.stdout.fnmatch_lines(["*JINJA WHILE TESTING: False*"])
    assert list((pytester.path / ".q").glob("runs/*/report.md"))


@pytest.mark.parametrize(
    "ini",
    [
        "[pytest]\nqbench = true\n",
        "[tool:pytest]\nqbench = true\n",
    ],
)
def test_ini_switch(pytester: pytest.Pytester, ini: str) -> None:
    """`qbench = true` in the ini file switches it on."""
    if ini.startswith("[tool:pytest]"):
        pytester.makefile(".cfg", setup=ini)
    else:
        pytester.makeini(ini)
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest(plugins=[plugin])
    result.assert_outcomes(passed=1)
    assert (pytester.path / ".qbench" / "runs").is_dir()


def test_pyproject_ini_switch(pytester: pytest.Pytester) -> None:
    """`qbench = true` under [tool.pytest.ini_options] in pyproject.toml."""
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\nqbench = true\nqbench_md = 'out/r.md'\n")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest(plugins=[plugin])
    result.assert_outcomes(passed=1)
    assert (pytester.path / "out" / "r.md").read_text().startswith("# ✅")


def test_output_option_switches_on(pytester: pytest.Pytester) -> None:
    """Any --qbench-* output option switches it on and writes the copy there."""
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("--qbench-json=ci/report.json", plugins=[plugin])
    result.assert_outcomes(passed=1)
    assert (pytester.path / "ci" / "report.json").is_file()
    result.stdout.fnmatch_lines(
        ["qbench: wrote .qbench/runs/*/report.json, *report.md, ci/report.json"]
    )


def test_markdown_headline(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """report.md opens with the counts in pytest's words and lists failures first."""
    pytester.makepyfile(ALL_OUTCOMES)
    run = run_qbench()
    md = run.markdown
    first = md.splitlines()[0]
    assert first.startswith(
        "# ❌ Test report: 4 failed, 2 passed, 2 skipped, 2 xfailed, 1 xpassed, 3 errors"
    )
    assert md.index("## Failures (4)") < md.index("## Errors (2)") < md.index("## Skipped (2)")
    assert (
        f"`test_markdown_headline.py:{line_of('assert x == 2')}` · **AssertionError** in call" in md
    )


def test_digest_option_writes_failures_only(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """--qbench-digest writes failures only, with next steps."""
    from pytest_qbench.report.models import FailureDigest

    pytester.makepyfile(ALL_OUTCOMES)
    run_qbench("--qbench-digest=digest.json")
    digest = FailureDigest.model_validate_json((pytester.path / "digest.json").read_text())
    assert digest.success is False
    names = [f.test_name.split("::")[-1] for f in digest.failures]
    assert names[:4] == [
        "test_fail",
        "test_raise",
        "test_xpass_strict",
        "test_fail_and_teardown_error",
    ]
    assert "test_pass" not in names
    where = f"test_digest_option_writes_failures_only.py:{line_of('assert x == 2')}"
    assert any(step.startswith(f"Fix the assertion at {where}") for step in digest.next_steps)


def test_secrets_never_reach_the_report(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Values of secret-looking environment variables are redacted everywhere qbench writes."""
    monkeypatch.setenv("SERVICE_API_TOKEN", "tok-1234567890")
    monkeypatch.setenv("DB_PASSWORD", "hunter2hunter2")
    pytester.makepyfile(
        test_uses="""
        import os, pytest
        def test_leaks():
            print("token is", os.environ["SERVICE_API_TOKEN"])
            assert os.environ["DB_PASSWORD"] == "x"
        def test_skip_leak():
            pytest.skip("skipping for " + os.environ["SERVICE_API_TOKEN"])
        """,
        test_collect="""
        import os
        raise RuntimeError("cannot start with " + os.environ["DB_PASSWORD"])
        """,
    )
    run = run_qbench("--continue-on-collection-errors", "--qbench-run-id=hunter2hunter2x")
    written = "".join(p.read_text() for p in run.run_dir.iterdir())
    assert "tok-1234567890" not in written
    assert "hunter2hunter2" not in written.replace("hunter2hunter2x", "")
    assert "[redacted]" in run.by_name("test_leaks").captured.stdout  # type: ignore[union-attr]
    assert "SERVICE_API_TOKEN" not in run.report.environment.model_dump_json()


def test_stop_early_is_not_interrupted(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """-x stops the run as asked: the report agrees with pytest and is not marked interrupted."""
    pytester.makepyfile("def test_a(): assert 0\ndef test_b(): pass")
    run = run_qbench("-x")
    assert_summary_matches_pytest(run)
    assert run.report.run.interrupted is False
    assert run.report.summary.total == 1


def test_bad_case_steps_keep_description(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A wrongly shaped step is a qbench warning on the terminal; the docstring is still kept."""
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.qbench_case(steps=[{"action": "a", "expected": 5}])
        def test_x():
            '''Described.'''
        """
    )
    run = run_qbench()
    result = run.by_name("test_x")
    assert result.metadata is not None and result.metadata.description == "Described."
    run.result.stdout.fnmatch_lines(
        ["qbench: *test_x*qbench_case steps[[]0[]] must be*'expected'*"]
    )
    assert not any(w.code == "internal-error" for w in run.report.warnings)


def test_template_error_is_the_templates(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A user template failing at render time is reported as such, not as a qbench bug."""
    pytester.makefile(".j2", fails="{{ results | length }} {{ 1 / 0 }}")
    pytester.makepyfile("def test_a(): pass")
    run = run_qbench("--qbench-template=fails.j2=out.txt", subprocess=True)
    assert run.result.ret == 0
    run.result.stdout.fnmatch_lines(
        ["qbench: could not write --qbench-template *fails.j2*ZeroDivisionError*"]
    )
    assert not (pytester.path / "out.txt").exists()


def test_user_template_sees_every_result(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """--qbench-template renders the user's template with all results (read from the stream)."""
    pytester.makefile(
        ".j2",
        names="{{ results | length }}{% for r in results %} {{ r.test_name }}={{ r.outcome }}{% endfor %}",
    )
    pytester.makepyfile("def test_a(): pass\ndef test_b(): assert 0")
    run_qbench("--qbench-template=names.j2=out/names.txt")
    assert (pytester.path / "out" / "names.txt").read_text() == "2 test_a=passed test_b=failed"


def test_active_qbench_keeps_pydantic_out(pytester: pytest.Pytester) -> None:
    """A whole run with reports written never imports pydantic into the pytest process."""
    pytester.makeconftest(
        """
        import sys
        def pytest_unconfigure():
            print("PYDANTIC LOADED:", "pydantic" in sys.modules)
        """
    )
    pytester.makepyfile("import pytest\ndef test_a(): pass\ndef test_b(): assert 0")
    result = pytester.runpytest_subprocess("-p", "qbench", "-s", "--qbench-digest=d.json")
    result.stdout.fnmatch_lines(["*PYDANTIC LOADED: False*"])
    assert (pytester.path / "d.json").is_file()


def test_store_is_git_ignored(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """The qbench directory ignores itself in git, as .pytest_cache does."""
    pytester.makepyfile("def test_a(): pass")
    run_qbench()
    assert (pytester.path / ".qbench" / ".gitignore").read_text().endswith("*\n")


@pytest.mark.skipif(not hasattr(pytest, "SubtestReport"), reason="pytest 9 subtests")
def test_more_secrets_are_redacted(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Subtests, module skips, user properties and Hypothesis examples are redacted too."""
    monkeypatch.setenv("MY_SECRET_KEY", "s3cr3t-value-42")
    pytester.makepyfile(
        test_skipmod="""
        import os, pytest
        pytest.skip("no access with " + os.environ["MY_SECRET_KEY"], allow_module_level=True)
        """,
        test_more="""
        import os
        SECRET = os.environ["MY_SECRET_KEY"]
        def test_props(record_property, subtests):
            record_property("token", {"value": SECRET})
            with subtests.test(msg=SECRET, key=SECRET):
                assert SECRET == "x"
        """,
    )
    run = run_qbench()
    written = "".join(p.read_text() for p in run.run_dir.iterdir() if p.is_file())
    assert "s3cr3t-value-42" not in written
    assert run.by_name("test_props").user_properties == [("token", {"value": "[redacted]"})]


def test_chained_exception_in_trace(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """The compact trace names the cause of a chained exception, in Python's words."""
    pytester.makepyfile(
        """
        def test_chain():
            try:
                {}["missing"]
            except KeyError as exc:
                raise ValueError("lookup failed") from exc
        """
    )
    run = run_qbench()
    trace = run.by_name("test_chain").failure.stack_trace  # type: ignore[union-attr]
    assert trace.startswith("E   KeyError: 'missing'")
    assert "The above exception was the direct cause of the following exception:" in trace
    assert trace.endswith("E   ValueError: lookup failed")


def test_failed_markdown_is_not_copied(pytester: pytest.Pytester) -> None:
    """When report.md cannot be rendered, --qbench-md says so instead of a misleading error."""
    pytester.mkdir("templates").joinpath("report.md.j2").write_text("{{ nope }}")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-template-dir=templates", "--qbench-md=out.md"
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "qbench: could not write report.md: template 'report.md.j2' failed*nope*",
            "qbench: --qbench-md not written: report.md could not be rendered",
        ]
    )


def test_unconfigure_unregisters_what_qbench_registered(pytester: pytest.Pytester) -> None:
    """issue 10: no qbench-* plugin stays registered after a run, one under a new name too."""
    pytester.makepyfile(**{"pkg/__init__.py": "def one():\n    return 1\n"})
    pytester.makepyfile(
        "import pkg\ndef test_agent(qbench):\n    qbench.record(str(pkg.one()), input='one')\n"
    )
    pytester.makeconftest(
        """
        import pytest
        from pytest_qbench.plugin import registered

        def pytest_configure(config):
            registered.register(config, object(), "qbench-new")

        def pytest_sessionfinish(session):
            print("REGISTERED:", *sorted(registered.registered_names(session.config)))

        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(config):
            names = [name for name, _ in config.pluginmanager.list_name_plugin()]
            print("LEFT:", *sorted(n for n in names if str(n).startswith("qbench-")), "END")
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "qbench", "-s", "--qbench-cov=pkg", "--qbench-cov-contexts",
        "--qbench-metric-min=token_f1=0.0", "--qbench-json=out.json",
    )  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            "*REGISTERED: qbench-agent qbench-coverage qbench-coverage-contexts qbench-gates "
            "qbench-internal-error qbench-new qbench-session qbench-unstarted qbench-verdicts",
            "LEFT: END",
        ]
    )


def test_collect_dump_keeps_no_state_between_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 10: two in-process collection dumps in one process share nothing."""
    dumps = []
    for name, source in [("test_broken", "raise ImportError('boom')"), ("test_fine", "")]:
        pytester.makepyfile(**{name: source + "\ndef test_a(): pass\n"})
        dump = pytester.path / f"{name}.jsonl"
        monkeypatch.setenv(collect_dump.DUMP_VARIABLE, str(dump))
        recorder = pytester.inline_run("--collect-only", "-p", collect_dump.__name__, name + ".py")
        dumps.append([json.loads(line) for line in dump.read_text().splitlines()])
        config = recorder.getcall("pytest_collection_finish").session.config
        assert config.pluginmanager.get_plugin(collect_dump.PLUGIN_NAME) is None
    assert [next(iter(record)) for record in dumps[0]] == ["error"]
    assert [record.get("nodeid") for record in dumps[1]] == ["test_fine.py::test_a"]


def test_counts_without_a_terminal_reporter(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Under ``-p no:terminal`` (no terminal reporter to read the words from) the counts are
    pytest's, as with one: a test failing in its call and erroring in its teardown (a unittest
    ``tearDownClass`` that raises) is 1 failed and 1 error, where it was only an error, the
    call's failure lost, and a plain pass or failure counted by its outcome alone."""
    pytester.makepyfile(
        ALL_OUTCOMES,
        test_unit="""
        import unittest

        class B(unittest.TestCase):
            @classmethod
            def tearDownClass(cls):
                raise RuntimeError("boom")

            def test_d(self):
                self.fail("x")
        """,
    )
    with_terminal = run_qbench("--qbench-run-id=terminal", run_dir="terminal")
    assert_summary_matches_pytest(with_terminal)
    without = run_qbench("-p", "no:terminal", "--qbench-run-id=none", run_dir="none")
    counts = without.report.summary.model_dump(exclude={"duration"})
    assert counts == with_terminal.report.summary.model_dump(exclude={"duration"})
    unit = {r.nodeid: r.counted_as for r in without.report.results}["test_unit.py::B::test_d"]
    assert unit == ["failed", "error"]
