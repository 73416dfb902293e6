"""examples/agent_eval: every command of its README works as written, with the exit status the
README gives (issue 4)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from child_pytest import child_env


pytestmark = pytest.mark.runs_pytest  # the example's pytest commands, with qbench


EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_eval"
README_PLUGINS = {"PYTEST_ADDOPTS": "-p qbench -p xdist" if find_spec("xdist") else "-p qbench"}
"""The plugins the README's install line gives (pytest-qbench and pytest-xdist), and no other
installed one (this environment has a dozen more: loading them cost each command 2 to 4 s of CPU)."""
COMMAND = re.compile(r"^\$ (?P<command>.+?)(?:\s+# exit (?P<status>\d+).*)?$")


def readme_commands() -> list[tuple[str, int]]:
    """The ``$ ...`` lines of the README's console block, with their expected exit status."""
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    found = []
    for line in text.splitlines():
        match = COMMAND.match(line)
        if match:
            found.append((match["command"], int(match["status"] or 0)))
    return found


def test_readme_lists_the_commands() -> None:
    """The README has its commands, and one shows a failing gate."""
    commands = readme_commands()
    assert len(commands) >= 6
    assert any(status == 1 for _, status in commands)


@pytest.mark.parametrize(("command", "status"), readme_commands(), ids=lambda v: str(v)[:40])
def test_readme_command(
    command: str, status: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run one README command in a copy of the example: the exit status is the README's."""
    if "-n " in command:
        pytest.importorskip("xdist")
    work = tmp_path / "agent_eval"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns(".qbench", "__pycache__"))
    env = child_env(README_PLUGINS)
    words = shlex.split(command)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "pytest", command
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *words[1:]],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == status, result.stdout + result.stderr
    assert "qbench: wrote" in result.stdout


def test_readme_says_what_to_install() -> None:
    """(issue 11.11) The README's install line gives every package its commands need, qbench
    as the checkout it is in (no package index has pytest-qbench)."""
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    install = next(line for line in text.splitlines() if line.startswith("pip install "))
    assert (EXAMPLE / "../../pyproject.toml").read_text("utf-8").count('name = "pytest-qbench"')
    needed = {"../..", "PyYAML"}
    if any("-n " in command for command, _ in readme_commands()):
        needed.add("pytest-xdist")
    assert needed <= set(install.split()[2:]), install
