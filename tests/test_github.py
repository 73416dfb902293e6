"""GitHub Actions: the job summary appended to $GITHUB_STEP_SUMMARY, and ::error annotations."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_qbench.report import github

from conftest import RunQBench


FAILING = """
import pytest


def test_ok():
    pass


def test_bad():
    value = 1
    assert value == 2, "line one\\nline two, 100%"


@pytest.fixture
def broken():
    raise RuntimeError("no db: host=a,b")


def test_setup(broken):
    pass
"""


def test_workflow_command_escapes_data_and_properties() -> None:
    command = github.workflow_command(
        "error", "50% done\r\nnext", file="a,b:c.py", line=3, title="t::x"
    )
    assert command == "::error file=a%2Cb%3Ac.py,line=3,title=t%3A%3Ax::50%25 done%0D%0Anext"
    assert github.workflow_command("warning", "plain") == "::warning::plain"


@given(st.text(max_size=300), st.text(min_size=1, max_size=50))
def test_a_message_cannot_end_the_command_or_start_another(message: str, title: str) -> None:
    command = github.workflow_command("error", message, file="t.py", line=1, title=title)
    assert "\n" not in command and "\r" not in command
    head, sep, _body = command.partition("::error file=t.py,line=1,title=")
    assert head == "" and sep
    properties = command[len("::error ") :].split("::", 1)[0]
    assert properties.count(",") == 2  # file, line, title: a title's comma is escaped


def test_step_summary_appends_and_respects_the_size_limit(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    github.append_step_summary(summary, "# qbench\n")
    assert summary.read_text(encoding="utf-8") == "# earlier step\n\n# qbench\n"
    big = tmp_path / "big.md"
    github.append_step_summary(big, "é" * github.MAX_STEP_SUMMARY)  # 2 bytes a character
    data = big.read_bytes()
    assert len(data) <= github.MAX_STEP_SUMMARY
    assert data.decode("utf-8").endswith("the full report is report.md.\n")  # no torn character


@pytest.mark.parametrize("xdist", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_job_summary_is_appended_once(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    xdist: list[str],
) -> None:
    summary = pytester.path / "step_summary.md"
    summary.write_text("before\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_gh=FAILING)
    run = run_qbench(*xdist, subprocess=True)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("before\n\n# ❌ Test report: 1 failed, 1 passed, 1 error in ")
    assert text.count("# ❌ Test report") == 1  # the controller writes, workers do not
    assert "| `test_gh.py::test_bad` | AssertionError: line one line two, 100% " in text
    assert "| `test_gh.py::test_setup` | RuntimeError: no db: host=a,b | `test_gh.py:" in text
    run.result.stdout.fnmatch_lines(["qbench: wrote *step_summary.md"])


def test_job_summary_can_be_turned_off(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makeini("[pytest]\nqbench_github_summary = false\n")
    pytester.makepyfile(test_gh=FAILING)
    run_qbench()
    assert not summary.exists()


def test_annotations_for_failures_errors_and_the_coverage_gate(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(pytester.path.parent))  # rootdir is a subdirectory
    pytester.makepyfile(test_gh=FAILING)
    pkg = pytester.mkpydir("pkg")
    (pkg / "mod.py").write_text("def f():\n    return 1\n")
    pytester.makefile(".toml", pyproject='[tool.pytest.ini_options]\npythonpath = ["."]\n')
    run = run_qbench(
        "--qbench-annotations", "--qbench-cov=pkg", "--qbench-cov-fail-under=90", subprocess=True
    )
    prefix = pytester.path.name
    lines = [line for line in run.result.outlines if line.startswith("::")]
    assert lines == [
        f"::error file={prefix}/test_gh.py,line=10,title=test_gh.py%3A%3Atest_bad%3A "
        "AssertionError::line one%0A  line two, 100%25%0Aassert 1 == 2",
        f"::error file={prefix}/test_gh.py,line=15,title=test_gh.py%3A%3Atest_setup%3A "
        "RuntimeError::no db: host=a,b",
        "::error title=coverage gate::coverage 0.00%25 is below the required 90%25",
    ]


def test_no_annotations_unless_asked(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    pytester.makepyfile(test_gh=FAILING)
    run = run_qbench()
    assert not [line for line in run.result.outlines if line.startswith("::")]


def test_annotation_for_a_failed_metric_gate(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    pytester.makepyfile(
        test_agent="""
        def test_answer(qbench):
            qbench.record("Paris", ground_truth="Paris")
            qbench.add("accuracy", 0.5)
        """
    )
    run = run_qbench("--qbench-annotations", "--qbench-metric-min=accuracy=0.9")
    assert run.result.ret == 1
    gates = [line for line in run.result.outlines if line.startswith("::error title=metric gate")]
    assert gates == [
        "::error title=metric gate%3A accuracy::mean 0.50 is below the required 0.90 (1 score)"
    ]
