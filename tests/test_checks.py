"""Static checkers' output into diagnostics (issue 13): each parser on the real tool's output for
a small project with deliberate errors, compared with what the tool prints itself."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tools_plugins import replace_planner

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.errors import QBenchError
from pytest_qbench.report.models import CheckReport
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.tools import runner
from pytest_qbench.tools.executables import find_executable
from pytest_qbench.tools.python import build
from pytest_qbench.tools.python import mypy
from pytest_qbench.tools.python import pyright
from pytest_qbench.tools.python import ruff
from pytest_qbench.tools.runner import parse_tools
from pytest_qbench.tools.runner import run_checks
from pytest_qbench.tools.spec import Plan


pytestmark = pytest.mark.engine


MODULE = '''\
"""Deliberate errors: é in a docstring, so byte offsets and characters differ."""
import os
import sys


def greet(name: str) -> int:
    return "héllo " + name


value: int = undefined_name
'''
PYPROJECT = """\
[tool.ruff]
line-length = 100

[tool.ruff.lint]
select = ["F"]

[tool.mypy]
strict = false
"""
Row = tuple[str, int | None, int | None, str | None]


def make_project(root: Path) -> Path:
    """A project with lint and type errors, configured by its own pyproject.toml."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "mod.py").write_text(MODULE, encoding="utf-8")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """A tool run as qbench runs it: argument list, output captured."""
    return subprocess.run(command, cwd=cwd, capture_output=True, check=False)


def rows(found: list[Diagnostic]) -> list[Row]:
    """What the comparison looks at: file, line, column, code."""
    return [(d.file or "", d.line, d.column, d.code) for d in found]


def printed_rows(text: str, pattern: str) -> list[Row]:
    """The tool's own text lines as rows (``pattern`` names file, line, column, code)."""
    found = [re.match(pattern, line) for line in text.splitlines()]
    return [(m["file"], int(m["line"]), int(m["column"]), m["code"]) for m in found if m]


def ruff_executable() -> str:
    """The installed ruff (these tests need the real tool)."""
    found = find_executable("ruff")
    assert found is not None, "ruff is a development dependency"
    return found


def test_ruff_json_equals_what_ruff_prints(tmp_path: Path) -> None:
    """issue 13: ruff's JSON gives the diagnostics ruff prints itself, with log spans."""
    project = make_project(tmp_path)
    done = run(ruff.ruff_command(ruff_executable(), ["."]), project)
    assert done.returncode == 1
    found = ruff.parse_ruff(done.stdout, project)
    concise = run([ruff_executable(), "check", "--output-format", "concise", "."], project)
    expected = printed_rows(
        concise.stdout.decode(), r"^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<code>\S+) "
    )
    assert len(found) == 3
    assert sorted(rows(found)) == sorted(expected)
    assert {d.tool for d in found} == {"ruff.lint"}
    unused = next(d for d in found if d.code == "F401")
    assert unused.code_snippet == "import os" and unused.end_column == 10
    for item in found:
        piece = done.stdout[item.byte_offsets.start : item.byte_offsets.end]
        assert json.loads(piece)["code"] == item.code
        lines = done.stdout.decode().splitlines()[item.log_range.start_line - 1]
        assert lines.strip() == "{"


def test_mypy_json_equals_what_mypy_prints(tmp_path: Path) -> None:
    """issue 13: mypy's JSON lines give the diagnostics mypy prints as text (1-based columns)."""
    project = make_project(tmp_path)
    base = [sys.executable, "-m", "mypy"]
    assert mypy.supports_json(run([*base, "--version"], project).stdout.decode())
    done = run(mypy.mypy_command(base, ["pkg"], json_output=True), project)
    assert done.returncode == 1, done.stderr
    found = mypy.parse_mypy_json(done.stdout, project)
    text = run([*base, *mypy.TEXT_FLAGS[::2], "--no-error-summary", "pkg"], project)
    expected = printed_rows(
        text.stdout.decode(),
        r"^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): \w+: .*\[(?P<code>[\w-]+)\]$",
    )
    assert len(found) == 2
    assert rows(found) == expected
    first = found[0]
    assert first.code == "return-value" and first.code_snippet == '    return "héllo " + name'
    lines = done.stdout.splitlines(keepends=True)
    assert first.log_range.start_line == first.log_range.end_line == 1
    assert done.stdout[first.byte_offsets.start : first.byte_offsets.end] == lines[0].rstrip(b"\n")


def test_mypy_text_equals_what_mypy_prints(tmp_path: Path) -> None:
    """issue 13: the fallback parser reads mypy's text format as mypy prints it."""
    project = make_project(tmp_path)
    base = [sys.executable, "-m", "mypy"]
    done = run(mypy.mypy_command(base, ["pkg"], json_output=False), project)
    found = mypy.parse_mypy_text(done.stdout, project)
    json_found = mypy.parse_mypy_json(
        run(mypy.mypy_command(base, ["pkg"], json_output=True), project).stdout, project
    )
    assert rows(found) == rows(json_found)
    assert [d.end_column for d in found] == [d.end_column for d in json_found]
    assert [d.message for d in found] == [d.message for d in json_found]
    assert found[1].log_range.start_line == 2


def test_mypy_text_refuses_a_foreign_line(tmp_path: Path) -> None:
    """issue 13: a line that is not mypy's message format is an error, never skipped."""
    with pytest.raises(CheckOutputError, match="not in its message format"):
        mypy.parse_mypy_text(b"Traceback (most recent call last):\n", tmp_path)


def test_compile_check_equals_py_compile(tmp_path: Path) -> None:
    """issue 13: the byte-compiling fallback finds the syntax error py_compile reports."""
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "bad.py").write_text("x = 1\ndef f(:\n    pass\n", encoding="utf-8")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "skipped.py").write_text("def (\n", encoding="utf-8")
    command = build.compile_command(sys.executable, tmp_path, ["."])
    assert command[3:] == ["bad.py", "ok.py"]
    done = run(command, tmp_path)
    assert done.returncode == 1
    found = build.parse_compile(done.stdout, tmp_path)
    printed = run([sys.executable, "-m", "py_compile", "bad.py"], tmp_path).stderr.decode()
    assert f'File "bad.py", line {found[0].line}' in printed
    assert rows(found) == [("bad.py", 2, 7, "SyntaxError")]
    assert found[0].code_snippet == "def f(:" and found[0].tool == "python.compile"


def test_pyright_json_equals_what_pyright_prints(tmp_path: Path) -> None:
    """issue 13: pyright's --outputjson gives the errors pyright prints (1-based positions)."""
    executable = find_executable("pyright")
    if executable is None:
        pytest.skip("pyright is not installed")
    project = make_project(tmp_path)
    done = run(pyright.pyright_command(executable, ["pkg"]), project)
    found = pyright.parse_pyright(done.stdout, project)
    text = run([executable, "pkg"], project).stdout.decode()
    expected = [
        (m["file"], int(m["line"]), int(m["column"]))
        for m in re.finditer(
            r"(?m)^\s+\S*?(?P<file>pkg/mod\.py):(?P<line>\d+):(?P<column>\d+)", text
        )
    ]
    assert [(d.file, d.line, d.column) for d in found] == expected
    assert found and all(d.tool == "pyright.typecheck" for d in found)
    for item in found:
        piece = json.loads(done.stdout[item.byte_offsets.start : item.byte_offsets.end])
        assert (piece["range"]["start"]["line"] + 1, piece["message"]) == (item.line, item.message)


def test_unknown_tool_is_refused() -> None:
    """issue 13: --tools names only known checkers."""
    with pytest.raises(QBenchError, match=r"unknown checker.*flake9") as info:
        parse_tools("ruff,flake9")
    assert info.value.slug == "check-options"
    assert parse_tools("mypy, ruff,mypy") == ["mypy", "ruff"]


def test_run_checks_stores_the_run_and_raw_logs(tmp_path: Path) -> None:
    """issue 13: a check run is a run directory with check.json and each tool's raw output."""
    project = make_project(tmp_path / "project")
    qdir = project / ".qbench"
    report, directory = run_checks(["ruff", "mypy"], project, ["pkg"], qdir)
    assert directory.parent == qdir / "runs" and directory.name == report.run.run_id
    stored = CheckReport.model_validate_json((directory / "check.json").read_text("utf-8"))
    assert stored == report
    assert [(c.run.tool, c.status) for c in report.checks] == [
        ("ruff.lint", "failed"),
        ("mypy.typecheck", "failed"),
    ]
    for check in report.checks:
        assert check.log is not None and check.run.exit_code == 1 and check.run.command
        raw = (directory / check.log).read_bytes()
        for item in check.diagnostics:
            assert item.file == "pkg/mod.py"
            assert raw[item.byte_offsets.start : item.byte_offsets.end].strip()
    assert report.run.exit_code == 1 and report.run.tool == "qbench.check"


def test_missing_checker_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 13: a checker that is not installed says "not run: install X", never clean."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    report, _ = run_checks(["ruff", "pyright"], tmp_path, [], tmp_path / ".qbench")
    assert [(c.status, c.note) for c in report.checks] == [
        ("not_run", "not run: install ruff"),
        ("not_run", "not run: install pyright"),
    ]
    assert report.run.exit_code == 3


def test_crashing_checker_is_an_error_with_its_exit_code(tmp_path: Path) -> None:
    """issue 13: ruff ending with status 2 (a broken ruff.toml) is a crash, raw output kept."""
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "ruff.toml").write_text("[lint\nselect = 3\n", encoding="utf-8")
    report, directory = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench")
    check = report.checks[0]
    assert check.status == "crashed" and check.run.exit_code == 2
    assert check.note is not None and check.note.startswith("ruff.lint crashed: exit code 2")
    assert [(d.severity, d.code, d.tool) for d in check.diagnostics] == [
        ("error", "checker-crashed", "ruff.lint")
    ]
    assert check.stderr_log is not None and (directory / check.stderr_log).read_bytes()


def test_mypy_blocking_error_is_read_and_a_crash_is_not_clean(tmp_path: Path) -> None:
    """issue 13: mypy's exit 2 with messages (a syntax error) is read; with none, a crash."""
    (tmp_path / "bad.py").write_text("def f(:\n", encoding="utf-8")
    report, _ = run_checks(["mypy"], tmp_path, ["bad.py"], tmp_path / ".qbench")
    check = report.checks[0]
    assert (check.status, check.run.exit_code) == ("failed", 2)
    assert rows(check.diagnostics) == [("bad.py", 1, 8, "syntax"), ("bad.py", 2, 2, "syntax")]
    printed = run([sys.executable, "-m", "mypy", "--show-column-numbers", "bad.py"], tmp_path)
    assert printed.stdout.decode().startswith("bad.py:1:8: error: ")
    report, _ = run_checks(["mypy"], tmp_path, ["missing.py"], tmp_path / ".qbench")
    assert report.checks[0].status == "crashed"
    assert "exit code 2" in (report.checks[0].note or "")


def test_unparsable_output_is_a_crash(tmp_path: Path) -> None:
    """issue 13: output that is not the tool's JSON raises, and the runner calls it a crash."""
    with pytest.raises(CheckOutputError, match="no JSON array"):
        ruff.parse_ruff(b"error: something\n", tmp_path)
    with pytest.raises(CheckOutputError, match="pyright printed no JSON"):
        pyright.parse_pyright(b"{}", tmp_path)


def test_old_diagnostics_still_validate() -> None:
    """issue 13: a diagnostic written before the new fields reads back with zero log spans."""
    old = {"tool": "pytest", "severity": "warning", "message": "m", "code": None, "file": None,
           "line": None, "column": None, "nodeid": None}  # fmt: skip
    item = Diagnostic.model_validate(old)
    assert item.log_range.start_line == 0 and item.byte_offsets.end == 0
    assert item.end_line is None and item.code_snippet is None


def test_build_check_reports_the_backend_error(tmp_path: Path) -> None:
    """issue 13: python -m build on a project whose metadata the backend refuses is one error."""
    if importlib.util.find_spec("build") is None:
        pytest.skip("the build package is not installed")
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "x"\nversion = "not a version"\n',
        encoding="utf-8",
    )
    report, directory = run_checks(["build"], tmp_path, [], tmp_path / ".qbench")
    check = report.checks[0]
    assert (check.run.tool, check.status, check.run.exit_code) == ("python.build", "failed", 1)
    [item] = check.diagnostics
    assert item.message.startswith("ERROR ") and item.code == "build-failed"
    assert check.log is not None
    raw = (directory / check.log).read_bytes()
    assert raw[item.byte_offsets.start : item.byte_offsets.end].startswith(b"ERROR ")


def test_build_check_without_build_byte_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13: with a pyproject.toml but no build package, the sources are byte-compiled."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    (tmp_path / "bad.py").write_text("def f(:\n", encoding="utf-8")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "build" else real_find_spec(name)
    )
    report, _ = run_checks(["build"], tmp_path, [], tmp_path / ".qbench")
    assert report.checks[0].run.tool == "python.compile"
    assert rows(report.checks[0].diagnostics) == [("bad.py", 1, 7, "SyntaxError")]


def fake_planner(plan: Plan[Diagnostic]) -> Callable[[Path, list[str], Path], Plan[Diagnostic]]:
    """A planner that returns ``plan`` whatever the project."""
    return lambda cwd, paths, scratch: plan


def times_out_once(
    monkeypatch: pytest.MonkeyPatch, ready: Callable[[], bool], timeout: float
) -> None:
    """The checkers' wait (``runner.wait_for``), asked to wait ``timeout`` seconds at most,
    gives up as at that timeout once ``ready()`` holds (the checker got where the test needs
    it, however long a loaded machine took to get there), not after the seconds themselves; a
    checker that ended before is seen ended. The timeout's path after (the stop, the note, the
    logs) is the product's."""
    wait_for = runner.wait_for

    def when_ready(
        process: subprocess.Popen[bytes], seconds: float, stop: threading.Event | None
    ) -> bool:
        assert 0 < seconds <= timeout, f"the checker was given {seconds} s, not {timeout} s"
        deadline = time.monotonic() + 600  # a safety net
        while not ready() and process.poll() is None:
            assert time.monotonic() < deadline, "the checker never got ready"
            time.sleep(0.02)
        return wait_for(process, 0.0, stop)

    monkeypatch.setattr(runner, "wait_for", when_ready)


def written(pattern: str, root: Path) -> Callable[[], bool]:
    """Whether a file matching ``pattern`` under ``root`` has some text (a whole line)."""
    return lambda: any(f.read_bytes().endswith(b"\n") for f in root.glob(pattern))


def test_hanging_checker_is_stopped_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13: a checker running past the timeout is stopped, a crash with a clear note."""
    # sh, not a Python, prints the line: it has printed it long before the timeout, however
    # loaded the machine (a Python had 0.5 s to start and print).
    command = ["sh", "-c", "echo '['; exec sleep 60"]
    plan = Plan(ruff.TOOL, command, ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", fake_planner(plan))
    times_out_once(monkeypatch, written(".qbench/**/ruff.lint.log", tmp_path), 2)
    report, directory = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench", timeout=2)
    check = report.checks[0]
    assert check.status == "crashed" and check.note is not None
    assert check.note.startswith("ruff.lint did not finish in 2 s and was stopped")
    assert check.log is not None and (directory / check.log).read_bytes() == b"[\n"


def test_unparsable_output_with_a_good_exit_status_is_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13: exit 0 with output that is not the tool's JSON is a crash, never clean."""
    command = [sys.executable, "-c", "print('all good!')"]
    plan = Plan(ruff.TOOL, command, ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", fake_planner(plan))
    report, _ = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench")
    check = report.checks[0]
    assert (check.status, check.run.exit_code) == ("crashed", 0)
    assert check.note is not None and "unparsable output" in check.note
    assert report.run.exit_code == 1


GRANDCHILD = "sleep 60 & echo $!; exec sleep 60"
"""sh starts a sleep in its process group and prints its pid at once (a Python had 1.5 s to
start, start its child and print, which a loaded machine could take)."""


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie), read from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_stopped_checker_takes_its_process_group_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.7: at the timeout the checker's whole process group is killed, a process it
    started included."""
    plan = Plan(ruff.TOOL, ["sh", "-c", GRANDCHILD], ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", fake_planner(plan))
    times_out_once(monkeypatch, written(".qbench/**/ruff.lint.log", tmp_path), 2)
    report, directory = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench", timeout=2)
    assert report.checks[0].status == "crashed"
    grandchild = int((directory / "ruff.lint.log").read_text().split()[0])
    deadline = time.monotonic() + 60  # ends when it is gone
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_a_stop_event_and_a_total_timeout_stop_the_checkers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 13.7: a set stop event stops the checker running (noted as cancelled), and the
    total timeout bounds all checkers together: the checker, which would write a file after
    600 s, is stopped before (no file), however slow the machine."""
    woke = tmp_path / "woke"
    code = f"import time; time.sleep(600); open({str(woke)!r}, 'w').close()"
    command = [sys.executable, "-c", code]
    plan = Plan(ruff.TOOL, command, ruff.OK_CODES, ruff.parse_ruff)
    replace_planner(monkeypatch, "ruff", fake_planner(plan))
    stop = threading.Event()
    stop.set()
    report, _ = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench", stop=stop)
    assert report.checks[0].note is not None
    assert report.checks[0].note.startswith("ruff.lint was cancelled and stopped")
    report, _ = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench", total_timeout=0.5)
    assert report.checks[0].status == "crashed"
    assert not woke.exists()  # stopped before its natural end


def hostile_ruff(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """``ruff`` replaced by a hostile checker: ``python -c script``, read as ruff's output."""

    def plan(cwd: Path, paths: list[str], scratch: Path) -> Plan[Diagnostic]:
        command = [sys.executable, "-c", script]
        return Plan(ruff.TOOL, command, ruff.OK_CODES, ruff.parse_ruff)

    replace_planner(monkeypatch, "ruff", plan)


def test_a_checker_printing_without_end_is_stored_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 20.11: 100 MiB of output is stored as its head and tail with a note of the cut
    (the log stays under 64 MiB), and the verdict is crashed, never clean."""
    hostile_ruff(
        monkeypatch,
        "import sys\nfor _ in range(1600): sys.stdout.write('x' * 65536)\n"
        "sys.stdout.write('END-OF-FLOOD')\n",
    )
    report, directory = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench", 300)
    [check] = report.checks
    log = directory / "ruff.lint.log"
    assert log.stat().st_size < 64 * 1024 * 1024 + 1000
    data = log.read_bytes()
    assert data.count(b"qbench cut") == 1 and data.endswith(b"END-OF-FLOOD")
    assert check.status == "crashed" and "more than qbench keeps" in (check.note or "")


@pytest.mark.skipif(sys.platform != "linux", reason="the process tree is traced through /proc")
@pytest.mark.parametrize("ends", [True, False], ids=["checker-ends", "checker-times-out"])
def test_a_checkers_daemon_in_a_new_session_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ends: bool
) -> None:
    """issue 20.11: a process the checker started in a session of its own (out of its process
    group) is killed with it, whether the checker ends or is stopped at its timeout."""
    import os
    import signal

    pidfile = tmp_path / "daemon.pid"
    hostile_ruff(
        monkeypatch,
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        f"time.sleep({'2' if ends else '600'})\n"
        "print('[]')\n",
    )
    if not ends:
        times_out_once(monkeypatch, lambda: pidfile.is_file() and bool(pidfile.read_text()), 3)
    try:
        report, _ = run_checks(["ruff"], tmp_path, [], tmp_path / ".qbench", 3 if not ends else 60)
        pid = int(pidfile.read_text())
        deadline = time.monotonic() + 30
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
        assert report.checks[0].status == ("clean" if ends else "crashed")
    finally:
        if pidfile.exists() and pidfile.read_text():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


@pytest.mark.parametrize(
    "files",
    [
        {"mypy.ini": "[mypy]\nfiles = src\n"},
        {"setup.cfg": "[mypy]\nfiles = src\n"},
        {"setup.cfg": "[metadata]\nname = x\n", "pyproject.toml": '[tool.mypy]\nfiles = ["src"]\n'},
        {"pyproject.toml": '[tool.mypy]\npackages = ["src"]\n'},
        {"pyproject.toml": "[tool.mypy]\nstrict = true\n"},
        {"mypy.ini": "[mypy]\n", "pyproject.toml": '[tool.mypy]\nfiles = ["src"]\n'},
        {"pyproject.toml": '[tool.ruff]\nline-length = 99\n'},
        {},
    ],
    ids=["mypy.ini", "setup.cfg", "pyproject-after-setup.cfg", "packages", "no-files",
         "mypy.ini-first", "no-mypy-section", "no-config"],
)  # fmt: skip
def test_mypy_config_names_targets_as_mypy_itself_decides(
    tmp_path: Path, files: dict[str, str]
) -> None:
    """issue 19.3: qbench finds a configuration naming what to check exactly when mypy, run
    with no path, does not stop with "Missing target module, package, files, or ..."."""
    from pytest_qbench.tools.python.mypy_config import names_targets

    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    done = run([sys.executable, "-m", "mypy"], tmp_path)
    missing = b"error: Missing target module" in done.stdout + done.stderr
    assert names_targets(tmp_path) is not missing
