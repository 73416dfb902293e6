"""examples/agent_eval: every command of its README works as written, with the exit status the
README gives (issue 4).

Each command's pytest runs in the test's own process (``pytester.runpytest_inprocess``: the
status ``pytest`` exits with is what ``pytest.main`` returns, and pytester drops the example's
modules and restores the environment after): what the command does and reports is the subject,
not a Python starting. The ``-n 2`` command's pytest-xdist workers are real processes."""

from __future__ import annotations

import re
import shlex
import shutil
from importlib.util import find_spec
from pathlib import Path

import pytest
from child_pytest import child_env
from cli_here import environment


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
    command: str, status: int, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run one README command in a copy of the example: the exit status is the README's."""
    if "-n " in command:
        pytest.importorskip("xdist")
    work = pytester.path / "agent_eval"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns(".qbench", "__pycache__"))
    env = child_env(README_PLUGINS)
    words = shlex.split(command)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "pytest", command
    monkeypatch.chdir(work)
    with environment(env):
        result = pytester.runpytest_inprocess(*words[1:])
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == status, output
    assert "qbench: wrote" in result.stdout.str()


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
