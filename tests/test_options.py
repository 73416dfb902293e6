"""Options: listed in --help; every bad value stops pytest before any test runs."""

from __future__ import annotations

import json

import pytest


def test_help_lists_the_group(pytester: pytest.Pytester) -> None:
    """`pytest --help` shows the qbench group with every option and the ini twins."""
    result = pytester.runpytest("-p", "qbench", "--help")
    result.stdout.fnmatch_lines(
        [
            "pytest-qbench reporting:",
            "*--qbench-dir=DIR*",
            "*--qbench-json=PATH*",
            "*--qbench-md=PATH*",
            "*--qbench-digest=PATH*",
            "*--qbench-template=TEMPLATE=OUTPUT*",
            "*--qbench-template-dir=DIR*",
            "*--qbench-capture=OUTCOMES*",
            "*--qbench-max-output=CHARS*",
            "*--qbench-max-trace=CHARS*",
            "*--qbench-md-max-items=N*",
            "*--qbench-run-id=ID*",
            "*--qbench-keep-runs=N*",
            "*--qbench-db=URL*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*qbench (bool)*", "*qbench_json (string)*", "*qbench_templates (linelist)*"]
    )


def assert_usage_error(result: pytest.RunResult, *patterns: str) -> None:
    """pytest stopped with a usage error naming the problem, before running any test."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(list(patterns))
    assert "passed" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qbench-capture=fail"], "*--qbench-capture: has unknown outcome 'fail'*use all, none*"),
        (["--qbench-max-output=-1"], "*--qbench-max-output: must not be negative, given: -1*"),
        (["--qbench-max-trace=lots"], "*--qbench-max-trace: must be a whole number*'lots'*"),
        (["--qbench-md-max-items=-3"], "*--qbench-md-max-items: must not be negative*"),
        (["--qbench-md-max-items=x"], "*--qbench-md-max-items: must be a whole number, given*"),
        (["--qbench-run-id=../escape"], "*--qbench-run-id: must be 1-128 letters*'../escape'*"),
        (  # "ci-$BUILD_NUMBER" with the variable empty (issue 19.13)
            ["--qbench-run-id=ci-"],
            "*--qbench-run-id: must not end with '-', given: 'ci-' (an empty variable, as in "
            '"ci-$BUILD_NUMBER"?); set the variable, or drop the *',
        ),
        (["--qbench-template=nofile"], "*--qbench-template: must be TEMPLATE=OUTPUT*"),
    ],
)
def test_bad_command_line_values(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    """A malformed value is refused by the option parser, naming option, value and fix."""
    pytester.makepyfile("def test_a(): pass")
    assert_usage_error(pytester.runpytest("-p", "qbench", *args), message)


def test_output_path_is_a_directory(pytester: pytest.Pytester) -> None:
    """--qbench-json pointing at a directory is refused."""
    pytester.mkdir("out")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-json=out")
    assert_usage_error(result, "*--qbench-json must be a file path, given: *out (a directory)*")


def test_output_path_under_a_file(pytester: pytest.Pytester) -> None:
    """An output path whose parent is a file cannot be created, and is refused."""
    pytester.makefile(".txt", blocker="x")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-md=blocker.txt/report.md")
    assert_usage_error(result, "*--qbench-md cannot be created*blocker.txt is a file*")


def test_qbench_dir_is_a_file(pytester: pytest.Pytester) -> None:
    """--qbench-dir must be a directory."""
    pytester.makefile(".txt", store="x")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-dir=store.txt")
    assert_usage_error(result, "*--qbench-dir must be a directory*store.txt (a file)*")


def test_missing_template(pytester: pytest.Pytester) -> None:
    """A template that does not exist is refused, listing the built-ins."""
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-template=nope.j2=out.txt")
    assert_usage_error(result, "*--qbench-template template 'nope.j2' not found*report.md.j2*")


def test_template_syntax_error(pytester: pytest.Pytester) -> None:
    """A template that does not parse is refused before the run."""
    pytester.makefile(".j2", bad="{% for x in %}")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-template=bad.j2=out.txt")
    assert_usage_error(result, "*--qbench-template template*syntax error at line 1*")


def test_missing_template_dir(pytester: pytest.Pytester) -> None:
    """--qbench-template-dir must exist."""
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--qbench-template-dir=nowhere")
    assert_usage_error(result, "*--qbench-template-dir is not a directory*nowhere*")


def test_reused_run_id(pytester: pytest.Pytester) -> None:
    """A run id that already exists is refused, so no run is overwritten."""
    pytester.makepyfile("def test_a(): pass")
    pytester.runpytest("-p", "qbench", "--qbench-run-id=ci-1").assert_outcomes(passed=1)
    result = pytester.runpytest("-p", "qbench", "--qbench-run-id=ci-1")
    assert_usage_error(result, "*--qbench-run-id 'ci-1' already exists*choose a new id*")


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        ("qbench = maybe", "*ini qbench must be true or false*'maybe'*e.g. qbench = true*"),
        ("qbench = true\nqbench_capture = everything", "*ini qbench_capture has unknown outcome*"),
        ("qbench = true\nqbench_max_output = -5", "*ini qbench_max_output must not be negative*"),
        (
            "qbench = true\nqbench_templates = broken",
            "*ini qbench_templates must be TEMPLATE=OUTPUT*",
        ),
    ],
)
def test_bad_ini_values(pytester: pytest.Pytester, ini: str, message: str) -> None:
    """Malformed ini values stop pytest with the ini name, the value and the fix."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_a(): pass")
    assert_usage_error(pytester.runpytest("-p", "pytest_qbench.plugin"), message)


def test_command_line_wins_over_ini(pytester: pytest.Pytester) -> None:
    """An option given on the command line overrides its ini twin."""
    pytester.makeini("[pytest]\nqbench_json = from_ini.json\n")
    pytester.makepyfile("def test_a(): pass")
    pytester.runpytest("-p", "qbench", "--qbench-json=from_cli.json").assert_outcomes(passed=1)
    assert (pytester.path / "from_cli.json").is_file()
    assert not (pytester.path / "from_ini.json").exists()


def test_ini_paths_resolve_from_the_ini_file(pytester: pytest.Pytester) -> None:
    """Paths in the ini file are relative to the ini file's directory, not the cwd."""
    pytester.makeini("[pytest]\nqbench_md = reports/r.md\nqbench_dir = store\n")
    pytester.makepyfile("def test_a(): pass")
    sub = pytester.mkdir("sub")
    result = pytester.runpytest("-p", "qbench", str(pytester.path), "--rootdir", str(pytester.path))
    result.assert_outcomes(passed=1)
    assert (pytester.path / "reports" / "r.md").is_file()
    assert (pytester.path / "store" / "runs").is_dir()
    assert not (sub / "reports").exists()


def test_disable_plugin_autoload_with_p(pytester: pytest.Pytester) -> None:
    """With PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 (set by our pytester fixture), -p qbench works."""
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest_subprocess("-p", "qbench")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["qbench: wrote *report.json*"])


TOML_VALUES = """
qbench = true
qbench_capture = ["passed", "failed"]
qbench_max_output = 40
qbench_md_max_items = 10
qbench_keep_runs = 5
qbench_cov = ["src"]
qbench_cov_fail_under = 99.9
qbench_cov_contexts = false
"""


@pytest.mark.parametrize(
    "table",
    [
        "tool.pytest.ini_options",
        pytest.param(
            "tool.pytest",
            marks=pytest.mark.skipif(
                pytest.version_tuple[:2] < (9, 2),
                reason="numbers in pytest's native [tool.pytest] table need pytest 9.2",
            ),
        ),
    ],
)
def test_toml_numbers_booleans_and_lists(pytester: pytest.Pytester, table: str) -> None:
    """(issue 11.6) Numbers, booleans and lists work in [tool.pytest] and its ini_options."""
    pytester.makepyprojecttoml(f"[{table}]\n{TOML_VALUES}")
    pytester.mkdir("src")
    pytester.makepyfile(src__init__="")  # not imported; only the directory is measured
    pytester.makepyfile("def test_a():\n    print('x' * 500)\n")
    result = pytester.runpytest_subprocess("-p", "qbench")
    result.assert_outcomes(passed=1)
    assert "expects a" not in result.stderr.str()
    runs = list((pytester.path / ".qbench" / "runs").iterdir())
    report = json.loads((runs[0] / "report.json").read_text(encoding="utf-8"))
    stdout = report["results"][0]["captured"]["stdout"]
    assert stdout.startswith("x" * 10) and len(stdout) < 200  # kept (passed) and bounded (40)


@pytest.mark.skipif(pytest.version_tuple[:2] < (9, 2), reason="union ini types need pytest 9.2")
def test_native_toml_new_tests_numbers(pytester: pytest.Pytester) -> None:
    """``qbench_new_tests_repeat = 2`` and ``qbench_new_tests_budget = 30`` are numbers in
    [tool.pytest] as every other count and duration: they stopped pytest with 'expects a
    string, got int: 2' (trial9, on bidict's pytest 9 table)."""
    pytester.makepyprojecttoml(
        "[tool.pytest]\nqbench = true\nqbench_new_tests_repeat = 2\nqbench_new_tests_budget = 30\n"
    )
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest_subprocess("-p", "qbench")
    result.assert_outcomes(passed=1)
    assert "expects a" not in result.stderr.str()
    pytester.makepyfile(test_b="def test_b(): pass")  # new to the history: run twice
    again = pytester.runpytest_subprocess("-p", "qbench")
    again.assert_outcomes(passed=2)
    again.stdout.fnmatch_lines(["qbench: new tests: 1 new test run up to 2 times: 0 flaky"])


@pytest.mark.skipif(pytest.version_tuple[:2] < (9, 2), reason="union ini types need pytest 9.2")
def test_native_toml_wrong_type(pytester: pytest.Pytester) -> None:
    """(issue 11.6) A value of the wrong type in [tool.pytest] is a usage error naming it."""
    pytester.makepyprojecttoml("[tool.pytest]\nqbench = true\nqbench_max_output = [1]\n")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench")
    assert_usage_error(result, "*qbench_max_output*")


@pytest.mark.skipif(pytest.version_tuple[:1] < (9,), reason="the native [tool.pytest] table")
def test_native_toml_string_for_a_list_says_how_to_write_it(pytester: pytest.Pytester) -> None:
    """``qbench_capture = "failed,skipped"`` in [tool.pytest] (a string where pytest wants a
    list) is refused with the TOML list to write instead (found on humanize)."""
    pytester.makepyprojecttoml('[tool.pytest]\nqbench = true\nqbench_capture = "failed,skipped"\n')
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench")
    assert_usage_error(result, "*qbench_capture*")
    assert 'write a TOML list of strings: qbench_capture = ["...", "..."]' in result.stderr.str()


def test_no_qbench_switches_it_off(pytester: pytest.Pytester) -> None:
    """(issue 11.7) --no-qbench switches qbench off for one run, even under --strict-config."""
    pytester.makeini("[pytest]\nqbench = true\nqbench_json = out.json\n")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest("-p", "qbench", "--strict-config", "--no-qbench")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".qbench").exists()
    assert not (pytester.path / "out.json").exists()


def test_override_qbench_false(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """(issue 11.7) -o qbench=false switches off a qbench switched on by the ini file."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # installed, as users have it
    pytester.makeini("[pytest]\nqbench = true\n")
    pytester.makepyfile("def test_a(): pass")
    result = pytester.runpytest_subprocess("--strict-config", "-o", "qbench=false")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".qbench").exists()
    pytester.runpytest_subprocess("--strict-config").assert_outcomes(passed=1)
    assert (pytester.path / ".qbench").is_dir()  # and on without the override
