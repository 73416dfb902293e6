"""``qbench`` on an internal error: one line naming the bug and where its traceback is, never a
traceback on the terminal, never exit 0. A real ``qbench`` process, a command made to fail."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from pytest_qbench.core.exit_codes import OK


BOOM = (
    "import sys, pytest_qbench.cli as cli\n"
    "def boom(args):\n"
    "    raise ZeroDivisionError('boom\\nsecond line')\n"
    "cli.cmd_schema = boom\n"
    "sys.exit(cli.main(['schema']))\n"
)


BOOM_MCP = (
    "import sys, pytest_qbench.mcp.launch as launch\n"
    "def boom():\n"
    "    raise ZeroDivisionError('boom')\n"
    "launch.load_server = boom\n"
    "sys.exit(launch.main([]))\n"
)


def run_broken(tmp_path: Path, code: str = BOOM, **env: str) -> subprocess.CompletedProcess[str]:
    """``qbench schema`` (or ``code``) with its command replaced by one that raises, in a child
    process whose temporary directory is ``tmp_path``."""
    environment = {k: v for k, v in os.environ.items() if k != "QBENCH_DEBUG"}
    environment.update(TMPDIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=False,
    )


def test_internal_error_is_one_line_naming_the_traceback_file(tmp_path: Path) -> None:
    """One stderr line: an internal error, a bug in qbench, the exception, the file holding the
    full traceback; the exit status is not 0."""
    done = run_broken(tmp_path)
    assert done.returncode != OK
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    line = done.stderr
    assert line.startswith("qbench: internal error (a bug in qbench")
    assert "ZeroDivisionError: boom second line" in line
    assert "QBENCH_DEBUG=1" in line
    found = re.search(r"traceback in (\S+\.txt)", line)
    assert found, line
    written = Path(found.group(1))
    assert written.parent == tmp_path
    trace = written.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in trace
    assert "in boom" in trace and "ZeroDivisionError: boom" in trace


def test_qbench_debug_prints_the_traceback(tmp_path: Path) -> None:
    """``QBENCH_DEBUG=1``: the traceback on stderr, then the same closing line."""
    done = run_broken(tmp_path, QBENCH_DEBUG="1")
    assert done.returncode != OK
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("qbench: internal error (a bug in qbench")


def test_qbench_mcp_internal_error_is_one_line_too(tmp_path: Path) -> None:
    """``qbench-mcp`` failing before it serves (outside any tool call): the same one line, named
    for the server, the traceback in a file, exit status not 0."""
    done = run_broken(tmp_path, BOOM_MCP)
    assert done.returncode != OK
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("qbench-mcp: internal error (a bug in qbench")
    assert "ZeroDivisionError: boom" in done.stderr
    found = re.search(r"traceback in (\S+\.txt)", done.stderr)
    assert found, done.stderr
    assert "in boom" in Path(found.group(1)).read_text(encoding="utf-8")


def test_an_output_closed_early_is_never_a_pass(tmp_path: Path) -> None:
    """``qbench ... | head`` under ``set -o pipefail``: the reader closed the pipe before the
    output's end, so it never saw the verdict. The command said 0 (a pass) whatever it found;
    now 1, one line on stderr, and no second error as the interpreter flushes stdout."""
    command = [
        sys.executable,
        "-c",
        "import sys, pytest_qbench.cli as c; sys.exit(c.main(['schema']))",
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10)  # the schema is larger than a pipe's buffer: it blocks
    process.stdout.close()  # as `head -c 10` leaves
    error = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == 1
    assert error.splitlines() == [
        "qbench: error: the output was closed before all of it was written (a pipe to `head`?); "
        "exit status 1 whatever the command found"
    ]
