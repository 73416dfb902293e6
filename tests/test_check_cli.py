"""``qbench check`` (issue 13): the stand-alone command, its text and JSON output, its exit
statuses and its run in the run store, on real ruff and mypy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_checks import make_project

from pytest_qbench.cli import main
from pytest_qbench.cli.coverage import find_data_file
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import INCOMPLETE
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.history.files import run_sources
from pytest_qbench.report.models import CheckReport


pytestmark = pytest.mark.engine


def check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """Run ``qbench check ARGS``; its status and stdout lines."""
    status = main(["check", *args])
    return status, capsys.readouterr().out.splitlines()


def test_check_prints_counts_then_errors_and_stores_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: exit 1 on errors; counts per tool, then file:line:column code message."""
    monkeypatch.chdir(make_project(tmp_path))
    status, lines = check(["pkg", "--tools", "ruff,mypy"], capsys)
    assert status == ERR
    assert lines[:2] == ["ruff.lint: 3 errors", "mypy.typecheck: 2 errors"]
    assert lines[2] == "pkg/mod.py:2:8: error ruff.lint F401: `os` imported but unused"
    assert "pkg/mod.py:7:12: error mypy.typecheck return-value: Incompatible return" in lines[5]
    assert len(lines) == 8 and lines[-1].startswith("qbench: check run ")
    run_dir = Path(lines[-1].rsplit(" ", 1)[1])
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "check.json",
        "mypy.typecheck.log",
        "ruff.lint.log",
    ]
    report = CheckReport.model_validate_json((run_dir / "check.json").read_text("utf-8"))
    assert report.run.exit_code == ERR and report.paths == ["pkg"]


def test_check_is_bounded_and_json_is_the_stored_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: --max-items bounds the list; --json prints check.json."""
    monkeypatch.chdir(make_project(tmp_path))
    status, lines = check(["--tools", "ruff", "--max-items", "1"], capsys)
    assert status == ERR
    assert lines[2] == "... 2 more (--max-items, or --json for all)"
    status, lines = check(["--tools", "ruff", "--json"], capsys)
    report = CheckReport.model_validate_json("\n".join(lines))
    stored = tmp_path / ".qbench" / "runs" / report.run.run_id / "check.json"
    assert CheckReport.model_validate_json(stored.read_text("utf-8")) == report
    assert [d.code for d in report.checks[0].diagnostics] == ["F401", "F401", "F821"]


def test_check_clean_project_exits_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: no errors from any checker is exit 0."""
    (tmp_path / "ok.py").write_text("def f(x: int) -> int:\n    return x\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status, lines = check(["ok.py", "--tools", "ruff,mypy,build"], capsys)
    assert status == OK
    assert lines[:3] == ["ruff.lint: clean", "mypy.typecheck: clean", "python.compile: clean"]


def test_check_missing_tool_has_its_own_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: a checker not installed is a clear line and status 3, never clean."""
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    if (Path(sys.executable).parent / "pyright").exists():
        pytest.skip("pyright is installed beside this Python")
    status, lines = check(["--tools", "ruff,pyright"], capsys)
    assert status == INCOMPLETE
    assert lines[:2] == ["ruff.lint: clean", "pyright.typecheck: not run: install pyright"]


def test_check_unknown_tool_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: an unknown checker is refused before anything runs."""
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--tools", "flake9"]) == ERR
    err = capsys.readouterr().err
    assert err.startswith(
        "qbench: error: --checker: unknown checker 'flake9'; registered checkers: ruff, mypy, "
    )
    assert not (tmp_path / ".qbench").exists()


def test_check_runs_stay_out_of_history_and_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 13: a check run is neither indexed nor taken for the last test run."""
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert check(["--tools", "ruff"], capsys)[0] == OK
    qdir = tmp_path / ".qbench"
    assert run_sources(qdir, []) == []
    assert main(["index", "--dir", str(qdir)]) == OK
    assert main(["runs", "--dir", str(qdir)]) == OK
    with pytest.raises(QBenchError, match="no runs in"):
        find_data_file("last", qdir)


def test_schema_of_check_json(capsys: pytest.CaptureFixture[str]) -> None:
    """issue 13: ``qbench schema --model check`` is CheckReport's schema."""
    assert main(["schema", "--model", "check"]) == OK
    schema = json.loads(capsys.readouterr().out)
    assert schema == CheckReport.model_json_schema(mode="serialization")
    diagnostic = schema["$defs"]["Diagnostic"]["properties"]
    assert {"log_range", "byte_offsets", "end_line", "end_column", "code_snippet"} <= set(
        diagnostic
    )


CONFIGURED = """\
[tool.ruff]
extend-exclude = ["scripts"]

[tool.ruff.lint]
select = ["F"]

[tool.mypy]
files = ["src"]
"""


def configured_project(root: Path, pyproject: str = CONFIGURED) -> Path:
    """A clean ``src/`` the project's own configuration checks, a broken ``scripts/`` it does
    not (a repository root, so mypy looks no further up for its configuration)."""
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "ok.py").write_text("def one() -> int:\n    return 1\n", encoding="utf-8")
    (root / "scripts").mkdir()
    (root / "scripts" / "bad.py").write_text('import os\n\nx: int = "s"\n', encoding="utf-8")
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return root


def test_check_without_paths_runs_each_checker_as_the_project_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 19.3: no path given, mypy reads its own ``files`` and ruff its excludes (clean, as
    the project's own mypy says); a path given narrows it to that path."""
    import subprocess

    project = configured_project(tmp_path)
    monkeypatch.chdir(project)
    own = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=project, capture_output=True, text=True, check=False
    )
    assert own.returncode == 0 and own.stdout.startswith("Success: no issues found in 1 source")
    status, lines = check(["--tools", "ruff,mypy"], capsys)
    assert (status, lines[:2]) == (OK, ["ruff.lint: clean", "mypy.typecheck: clean"])
    report = CheckReport.model_validate_json(
        (Path(lines[-1].rsplit(" ", 1)[1]) / "check.json").read_text("utf-8")
    )
    assert [check.run.command[-1] for check in report.checks] == ["--no-fix", "--no-pretty"]
    status, lines = check(["--tools", "mypy", "scripts"], capsys)
    assert status == ERR and lines[0] == "mypy.typecheck: 1 error"
    assert lines[1].startswith("scripts/bad.py:3:10: error mypy.typecheck assignment:")


def test_check_without_paths_or_mypy_files_checks_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 19.3: a project whose mypy configuration names no files gets ``.`` (mypy alone
    would refuse to run), so every file is checked."""
    project = configured_project(tmp_path, "[tool.mypy]\nstrict = false\n")
    monkeypatch.chdir(project)
    status, lines = check(["--tools", "mypy"], capsys)
    assert status == ERR and lines[0] == "mypy.typecheck: 1 error"
    assert lines[1].startswith("scripts/bad.py:3:10: error")


def test_pyright_without_paths_reads_its_own_include(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 19.3: pyright is given no path when none is asked for (its ``include`` applies),
    and the paths asked for otherwise. The started command is checked here with a harmless
    executable in pyright's place; the real pyright runs in test_checks.py when installed."""
    import shutil

    from pytest_qbench.tools import runner
    from pytest_qbench.tools.python import plans

    harmless = shutil.which("true")
    assert harmless is not None
    monkeypatch.setattr(plans, "find_executable", lambda name: harmless)
    commands = []
    for paths in ([], ["src"]):
        started = runner.start_one("pyright", tmp_path, paths, tmp_path)
        runner.stop_all([started])
        commands.append(started.meta.command)
    assert commands == [[harmless, "--outputjson"], [harmless, "--outputjson", "src"]]


def test_mypy_config_note_beside_its_json_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """mypy writes its configuration notes (``warn_unused_configs``: ``setup.cfg: note: unused
    section(s): [mypy-tests.*]``) as text even with ``-O json``: the note is an info item and
    the errors are read, not a crashed checker (found on more-itertools' setup.cfg)."""
    project = configured_project(
        tmp_path,
        "[tool.mypy]\nwarn_unused_configs = true\n\n"
        '[[tool.mypy.overrides]]\nmodule = "tests.*"\nignore_errors = true\n',
    )
    monkeypatch.chdir(project)
    status, lines = check(["--tools", "mypy", "scripts"], capsys)
    assert status == ERR and lines[0] == "mypy.typecheck: 1 error, 1 info", lines
    assert lines[1].startswith("scripts/bad.py:3:10: error mypy.typecheck assignment:")
    assert lines[2] == (
        "pyproject.toml: info mypy.typecheck: unused section(s): module = ['tests.*']"
    ), lines
