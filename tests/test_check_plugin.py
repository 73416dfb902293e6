"""Static checkers beside the tests (issue 13.4): ``--qbench-check`` runs real ruff and mypy
while the tests run and puts their diagnostics into report.json, report.md, the digest and the
GitHub annotations; ``--qbench-max-errors`` gates; missing, crashing and hanging checkers."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tools_plugins import replace_planner

from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools.names import TOOLS
from pytest_qbench.tools.python import ruff
from pytest_qbench.tools.registry import load_registry
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Plan

from conftest import RunQBench


MODULE = """\
import os


def add(a: int, b: int) -> int:
    return "x"
"""
TESTS = """\
def test_one():
    assert 1 + 1 == 2
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with one lint error (F401), one type error (return-value) and a passing test."""
    pytester.makefile(".py", mod=MODULE)
    pytester.makefile(".py", test_one=TESTS)
    return pytester


def fake_plan(command: list[str]) -> Callable[[Path, list[str], Path], Plan[Diagnostic]]:
    """A ruff planner running ``command`` instead (its output read as ruff's)."""
    plan = Plan(ruff.TOOL, command, ruff.OK_CODES, ruff.parse_ruff)
    return lambda cwd, paths, scratch: plan


def test_tool_names_match_the_runner() -> None:
    """issue 13.4: every name --qbench-check takes is a registered built-in checker's."""
    found = load_registry(entry_points=False)
    assert [found.checker(name).tool.name for name in TOOLS] == [
        "ruff",
        "mypy",
        "pyright",
        "python.build",
    ]


def test_diagnostics_in_report_json_md_digest_annotations(
    project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """issue 13.4: ruff's and mypy's errors, with file:line:column and code, in every output."""
    run = run_qbench(
        "--qbench-check=ruff,mypy",
        "--qbench-digest=digest.json",
        "--qbench-annotations",
    )
    assert run.result.ret == 0  # no gate: the checkers never fail the run by themselves
    rows = [(d.tool, d.file, d.line, d.column, d.code) for d in run.report.diagnostics]
    assert rows == [
        ("ruff.lint", "mod.py", 1, 8, "F401"),
        ("mypy.typecheck", "mod.py", 5, 12, "return-value"),
    ]
    assert run.report.summary.diagnostics == {
        "ruff.lint": {"error": 1},
        "mypy.typecheck": {"error": 1},
    }
    assert [(c.run.tool, c.status, c.log) for c in run.report.checks] == [
        ("ruff.lint", "failed", "ruff.lint.log"),
        ("mypy.typecheck", "failed", "mypy.typecheck.log"),
    ]
    assert b"F401" in (run.run_dir / "ruff.lint.log").read_bytes()  # the raw logs, stored
    assert b"return-value" in (run.run_dir / "mypy.typecheck.log").read_bytes()
    md = run.markdown
    assert "## Static checks" in md
    assert "| ruff.lint | ❌ errors | 1 | 0 | 0 |" in md
    assert "| mod.py:1:8 | error | ruff.lint F401 | \\`os\\` imported but unused |" in md
    assert "| mod.py:5:12 | error | mypy.typecheck return-value |" in md
    digest = json.loads((project.path / "digest.json").read_text(encoding="utf-8"))
    assert "Fix lint error in mod.py:1 (F401): `os` imported but unused" in digest["next_steps"]
    assert any(
        s.startswith("Fix type error in mod.py:5 (return-value)") for s in digest["next_steps"]
    )
    run.result.stdout.fnmatch_lines(
        [
            "qbench: ruff.lint: 1 error",
            "qbench: mypy.typecheck: 1 error",
            "::error file=mod.py,line=1,col=8,title=ruff.lint F401::`os` imported but unused",
            "::error file=mod.py,line=5,col=12,title=mypy.typecheck return-value::Incompatible*",
        ]
    )


@pytest.mark.parametrize(("maximum", "status"), [(2, 0), (1, 1)])
def test_max_errors_gate(
    project: pytest.Pytester, run_qbench: RunQBench, maximum: int, status: int
) -> None:
    """issue 13.4: --qbench-max-errors passes at the limit and fails the run above it, with the
    gate and the numbers on the terminal."""
    run = run_qbench("--qbench-check=ruff,mypy", f"--qbench-max-errors={maximum}")
    assert run.result.ret == status
    (gate,) = run.report.gates
    assert (gate.kind, gate.passed, gate.value, gate.threshold) == (
        "max_errors",
        status == 0,
        2.0,
        float(maximum),
    )
    word = "at most" if status == 0 else "more than"
    run.result.stdout.fnmatch_lines(
        [
            "qbench: error gate ruff.lint, mypy.typecheck: 2 checker errors (ruff.lint 1, "
            f"mypy.typecheck 1), {word} the {maximum} allowed"
        ]
    )


def test_max_errors_from_ini(project: pytest.Pytester, run_qbench: RunQBench) -> None:
    """issue 13.4: ini qbench_check (a list) and qbench_max_errors work like the options."""
    project.makeini("[pytest]\nqbench_check =\n    ruff\nqbench_max_errors = 0\n")
    run = run_qbench()
    assert run.result.ret == 1
    assert [c.run.tool for c in run.report.checks] == ["ruff.lint"]


def test_missing_checker_is_not_run_and_not_clean(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: a checker that is not installed is "not run: install X" in the report and
    on the terminal, never clean; without a gate it does not fail the run."""

    def missing(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
        raise NotInstalled("install ruff")

    replace_planner(monkeypatch, "ruff", missing)
    run = run_qbench("--qbench-check=ruff")
    assert run.result.ret == 0
    (check,) = run.report.checks
    assert (check.status, check.note) == ("not_run", "not run: install ruff")
    run.result.stdout.fnmatch_lines(["qbench: ruff.lint: not run: install ruff"])
    assert "➖ not run: install ruff" in run.markdown


def test_missing_checker_fails_the_max_errors_gate(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checker that did not run fails the ``--qbench-max-errors`` gate, which cannot count
    its errors (it passed before: a CI image without the checker went green)."""

    def missing(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
        raise NotInstalled("install ruff")

    replace_planner(monkeypatch, "ruff", missing)
    gated = run_qbench("--qbench-check=ruff", "--qbench-max-errors=0")
    assert gated.result.ret == 1
    (gate,) = gated.report.gates
    assert (gate.kind, gate.passed, gate.value) == ("max_errors", False, 0.0)
    assert "ruff.lint did not run, so its errors are not counted" in gate.detail


def test_crashing_checker_is_an_error_diagnostic(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: a checker that crashes is one error diagnostic naming it; the tests' results
    are all there."""
    command = [sys.executable, "-c", "import sys; print('boom'); sys.exit(7)"]
    replace_planner(monkeypatch, "ruff", fake_plan(command))
    run = run_qbench("--qbench-check=ruff")
    assert run.result.ret == 0 and run.report.summary.passed == 1
    (diagnostic,) = run.report.diagnostics
    assert (diagnostic.tool, diagnostic.severity, diagnostic.code) == (
        "ruff.lint",
        "error",
        "checker-crashed",
    )
    assert diagnostic.message.startswith("ruff.lint crashed: exit code 7 (boom)")
    run.result.stdout.fnmatch_lines(["qbench: ruff.lint: crashed: ruff.lint crashed: exit code 7*"])


def test_hanging_checker_is_stopped_at_the_timeout(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: a checker still running after the tests is stopped at the timeout, with a
    note; pytest does not hang and loses no result."""
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    replace_planner(monkeypatch, "ruff", fake_plan(command))
    monkeypatch.setenv("QBENCH_CHECK_TIMEOUT", "0.5")
    run = run_qbench("--qbench-check=ruff")
    assert run.result.ret == 0 and run.report.summary.passed == 1
    (check,) = run.report.checks
    assert check.status == "crashed" and check.note is not None
    assert check.note.startswith(
        "ruff.lint did not finish in 0.5 s after the tests ended (--qbench-check-timeout) "
        "and was stopped"
    )


def test_checkers_run_while_the_tests_run(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: the checker starts before the first test and runs beside it: the checker
    waits for a file the test writes, and the test for a file the checker writes (run one after
    the other, they could not both finish)."""
    checker = (
        "import pathlib, time\n"
        "pathlib.Path('checker-started').touch()\n"
        "deadline = time.monotonic() + 120\n"  # each waits for the other's file, 120 s at most
        "while time.monotonic() < deadline:\n"
        "    if pathlib.Path('test-ran').exists(): break\n"
        "    time.sleep(0.05)\n"
        "print('[]' if pathlib.Path('test-ran').exists() else 'no test seen')\n"
    )
    replace_planner(monkeypatch, "ruff", fake_plan([sys.executable, "-c", checker]))
    project.makepyfile(
        test_one="""
        import pathlib, time

        def test_handshake():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if pathlib.Path('checker-started').exists():
                    break
                time.sleep(0.05)
            assert pathlib.Path('checker-started').exists()
            pathlib.Path('test-ran').touch()
        """
    )
    run = run_qbench("--qbench-check=ruff")
    assert run.report.summary.passed == 1
    assert [(c.status, c.diagnostics) for c in run.report.checks] == [("clean", [])]


def test_collect_only_runs_no_checker(project: pytest.Pytester, run_qbench: RunQBench) -> None:
    """issue 13.4: --collect-only runs no test, so no checker either."""
    run = run_qbench("--qbench-check=ruff", "--collect-only")
    assert run.report.checks == [] and not (run.run_dir / "ruff.lint.log").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qbench-check=ruff,eslint9"], "*--qbench-check: has unknown checker(s) eslint9*"),
        (
            ["--qbench-check=ruff", "--qbench-max-errors=-1"],
            "*--qbench-max-errors: must not be negative*",
        ),
        (["--qbench-max-errors=3"], "*--qbench-max-errors needs checkers to count errors*"),
        (["--qbench-check=ruff", "--qbench-check-timeout=0"], "*must be a number of seconds*"),
    ],
)
def test_bad_options_are_refused_before_any_test(
    project: pytest.Pytester, args: list[str], message: str
) -> None:
    """issue 13.4: a bad checker option is a usage error before any test runs."""
    result = project.runpytest("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "passed" not in result.stdout.str()


def test_xdist_runs_checkers_on_the_controller_only(
    project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """issue 13.4: under xdist only the controller starts the checkers: one run, one count."""
    pytest.importorskip("xdist")
    run = run_qbench("-p", "xdist", "-n", "2", "--qbench-check=ruff", subprocess=True)
    assert run.report.summary.passed == 1
    assert run.report.summary.diagnostics == {"ruff.lint": {"error": 1}}
    assert [d.code for d in run.report.diagnostics] == ["F401"]


def test_exit_during_the_tests_stops_the_checkers(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: pytest.exit (like Ctrl-C) stops the checkers at once, with a note; the run
    does not wait for them."""
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    replace_planner(monkeypatch, "ruff", fake_plan(command))
    project.makepyfile(test_one="import pytest\n\ndef test_stop():\n    pytest.exit('enough')\n")
    run = run_qbench("--qbench-check=ruff", "--qbench-check-timeout=60")
    assert run.report.checks == []
    run.result.stdout.fnmatch_lines(["qbench: static checkers stopped: the run was interrupted"])


def test_summary_diagnostics_add_up() -> None:
    """issue 13.4: summary.diagnostics adds per tool and severity when summaries are summed."""
    from pytest_qbench.report.models import ReportSummary

    a = ReportSummary(diagnostics={"ruff.lint": {"error": 1}})
    b = ReportSummary(diagnostics={"ruff.lint": {"error": 2, "warning": 1}, "mypy.typecheck": {}})
    assert (a + b).diagnostics == {
        "ruff.lint": {"error": 3, "warning": 1},
        "mypy.typecheck": {},
    }


def test_annotations_and_markdown_escape_checker_text(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: a checker's message is escaped for the annotation and the Markdown table."""
    item = {
        "code": "X1",
        "message": "bad | pipe\nand 100% <b>",
        "filename": "mod.py",
        "location": {"row": 2, "column": 3},
        "end_location": {"row": 2, "column": 4},
        "fix": None,
        "noqa_row": 2,
        "url": None,
    }
    script = f"import json; print(json.dumps([{item!r}])); raise SystemExit(1)"
    replace_planner(monkeypatch, "ruff", fake_plan([sys.executable, "-c", script]))
    run = run_qbench("--qbench-check=ruff", "--qbench-annotations")
    (diagnostic,) = run.report.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("X1", 2, 3)
    run.result.stdout.fnmatch_lines(
        ["::error file=mod.py,line=2,col=3,title=ruff.lint X1::bad | pipe%0Aand 100%25 <b>"]
    )
    assert "bad \\| pipe" in run.markdown


def test_merge_keeps_the_first_shards_checks(
    project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """issue 13.4: qbench merge keeps one shard's checks (the same code in each), not a sum."""
    from pytest_qbench.report.merge import Source
    from pytest_qbench.report.merge import merge_reports

    checked = run_qbench("--qbench-check=ruff", "--qbench-run-id=a", run_dir="a")
    plain = run_qbench("--qbench-run-id=b", run_dir="b")
    merged = merge_reports([Source("b", plain.report), Source("a", checked.report)])
    assert merged.summary.diagnostics == {"ruff.lint": {"error": 1}}
    assert [d.code for d in merged.diagnostics] == ["F401"]
    assert [c.run.tool for c in merged.checks] == ["ruff.lint"]


def test_hanging_checker_on_path_never_hangs_pytest(
    project: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.4: a fake pyright on PATH that sleeps is stopped at QBENCH_CHECK_TIMEOUT in a
    real pytest subprocess; the test results are all there."""
    if (Path(sys.executable).parent / "pyright").exists():
        pytest.skip("a real pyright is installed beside this Python")
    bin_dir = project.path / "fakebin"
    bin_dir.mkdir()
    fake = bin_dir / "pyright"
    fake.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("QBENCH_CHECK_TIMEOUT", "1")
    run = run_qbench("--qbench-check=pyright", subprocess=True)
    assert run.result.ret == 0 and run.report.summary.passed == 1
    (check,) = run.report.checks
    assert check.status == "crashed"
    run.result.stdout.fnmatch_lines(
        ["qbench: pyright.typecheck: crashed: pyright.typecheck did not finish in 1 s after*"]
    )


def test_checkers_read_the_projects_own_file_lists(
    project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """issue 19.3: with ``[tool.mypy] files`` naming a clean module, mypy checks that module
    only (mod.py has a type error mypy is not configured to check)."""
    (project.path / ".git").mkdir()
    project.makefile(".py", clean="def one() -> int:\n    return 1\n")
    project.makepyprojecttoml('[tool.mypy]\nfiles = ["clean.py"]\n')
    run = run_qbench("--qbench-check=mypy")
    assert [(c.run.tool, c.status) for c in run.report.checks] == [("mypy.typecheck", "clean")]
    assert run.report.diagnostics == []
