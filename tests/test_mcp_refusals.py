"""Arguments the MCP tools cannot honour, refused by name through ``qbench-mcp`` over stdio (the
SDK's own client): a value of another JSON type, an empty list, a blank text, a filter outside
the project, two arguments that contradict each other. Each was answered on main as if it had
been left out, or read as another value (``"yes"`` as true, ``true`` as one second)."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest


pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp import StdioServerParameters


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")

REFUSED: list[tuple[str, dict[str, Any], str]] = [
    # a value of another JSON type: the SDK's lax validation read "yes" as true, true as 1.0
    ("run_test_workflow", {"fail_fast": "yes"}, "fail_fast must be true or false, given: 'yes'"),
    ("run_test_workflow", {"timeout_seconds": True}, "timeout_seconds must be a number, given"),
    ("run_test_workflow", {"max_failures": "3"}, "max_failures must be a whole number"),
    ("run_test_workflow", {"coverage": 1}, "coverage must be true or false, given: 1"),
    ("run_test_workflow", {"test_path": ["tests", 3]}, "test_path must be a list of strings"),
    ("search_tests", {"expand": "no"}, "expand must be true or false, given: 'no'"),
    # an empty list read as the argument left out (the whole suite, every checker, no filter)
    ("run_test_workflow", {"test_path": []}, "test_path is an empty list; leave it out"),
    ("run_test_workflow", {"coverage_source": []}, "coverage_source is an empty list"),
    ("run_build_workflow", {"paths": []}, "paths is an empty list; leave it out"),
    ("search_tests", {"tags": []}, "tags is an empty list; leave it out"),
    ("search_tests", {"platforms": [" "]}, "platforms holds an empty value"),
    # contradictions: coverage false, yet a threshold or a source measured it
    (
        "run_test_workflow",
        {"coverage": False, "coverage_threshold": 80},
        "coverage is false, and coverage_threshold measures coverage",
    ),
    (
        "run_test_workflow",
        {"coverage": False, "coverage_source": ["tests"]},
        "coverage is false, and coverage_source measures coverage",
    ),
    (
        "find_similar_tests",
        {"text": "login", "include_siblings": True},
        "include_siblings keeps a reference test's own parametrized cases",
    ),
    # blank texts and filters outside the project
    ("search_tests", {"path": ""}, "path is empty; leave it out"),
    ("search_tests", {"path": "../other"}, "path '../other' holds '..'"),
    ("search_tests", {"path": "/etc"}, "path '/etc' is outside the project root"),
    ("search_tests", {"cursor": ""}, "cursor is empty; leave it out"),
    ("find_similar_tests", {"text": "   "}, "text is empty"),
    ("find_similar_tests", {}, "give either test (a key or a node id) or text to compare"),
    ("ingest_tests", {"source": ""}, "source is empty; leave it out"),
    (  # a budget for a strategy that asks no model (its default was indistinguishable)
        "generate_tests_workflow",
        {"target_path": "mod.py", "generation_strategy": "template", "max_llm_budget": 500},
        "max_llm_budget bounds the tokens of sampling, and generation_strategy 'template'",
    ),
]


def test_arguments_it_cannot_honour_are_refused_by_name(tmp_path: Path) -> None:
    """Each call of ``REFUSED`` is a tool error naming the argument and the fix, not an answer
    as if the argument were absent or another value (audit3)."""
    script = shutil.which("qbench-mcp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("qbench-mcp is not installed next to this Python")
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_a.py").write_text(textwrap.dedent("def test_a():\n    pass\n"))
    params = StdioServerParameters(
        command=script,
        args=["--root", str(project)],
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=str(project),
    )

    async def main() -> list[tuple[str, dict[str, Any], bool, str]]:
        answers = []
        with anyio.fail_after(600):
            async with Client(params) as client:
                for name, arguments, _ in REFUSED:
                    result = await client.call_tool(name, arguments)
                    text = " ".join(c.text for c in result.content if c.type == "text")
                    answers.append((name, arguments, result.is_error, text))
        return answers

    answers = anyio.run(main)
    wrong = [
        (name, arguments, text[:300])
        for (name, arguments, error, text), (_, _, expected) in zip(answers, REFUSED, strict=True)
        if not (error and expected in text)
    ]
    assert wrong == []
