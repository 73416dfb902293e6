"""run_test_workflow's counts with pytest 9 subtests: its first line is pytest's own closing
line, and its failure list says how it agrees with them (a failed subtest counts in ``failed``
beside its test, as pytest counts it). A real run through an in-process client."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import quiet_children


pytest.importorskip("mcp")

import anyio
from mcp import Client

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.server import build_server


SUITE = """
    import pytest

    def test_pass():
        pass

    def test_fail():
        assert 1 == 2

    def test_subs(subtests):
        for i in range(4):
            with subtests.test(i=i):
                assert i % 2 == 0

    def test_subs_ok(subtests):
        with subtests.test("a"):
            pass

    def test_sub_skip(subtests):
        with subtests.test("s"):
            pytest.skip("no")
"""
DURATION = re.compile(r" in [0-9.]+s")


Answer = tuple[str, dict[str, Any], str]
"""A run's text, its structured content, and pytest's own closing line."""


pytestmark = pytest.mark.xdist_group("test_mcp_subtest_counts")  # one worker makes `answers`


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Answer]:
    """The answers of a run, quiet and verbose."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        quiet_children(monkeypatch)
        monkeypatch.delenv("QBENCH_DB", raising=False)
        root = tmp_path_factory.mktemp("subtests").resolve()
        (root / "test_subs.py").write_text(textwrap.dedent(SUITE))
        config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)

        async def main() -> dict[bool, Answer]:
            found = {}
            async with Client(build_server(config), raise_exceptions=True) as client:
                for verbose in (False, True):
                    result = await client.call_tool("run_test_workflow", {"verbose": verbose})
                    [content] = result.content
                    structured = result.structured_content
                    assert content.type == "text" and isinstance(structured, dict)
                    line = pytest_line(config.qbench_dir / "runs" / structured["run_id"])
                    found[verbose] = (content.text, structured, line)
            return found

        return anyio.run(main)


def pytest_line(run_dir: Path) -> str:
    """pytest's own closing line of the run, without its duration and ``=`` padding."""
    last = (run_dir / "stdout.txt").read_text().splitlines()[-1]
    return DURATION.sub("", last.strip("= "))


@pytest.mark.parametrize("verbose", [False, True])
def test_first_line_is_pytests_closing_line(answers: dict[bool, Answer], verbose: bool) -> None:
    """The answer's counts are pytest's (``3 subtests passed`` too, when pytest says it)."""
    text, _content, line = answers[verbose]
    first = text.splitlines()[0]
    assert DURATION.split(first.split(": ", 1)[1], maxsplit=1)[0] == line, (first, line)
    assert "failed" in line and ("subtests passed" in line) == verbose


@pytest.mark.parametrize("verbose", [False, True])
def test_failures_agree_with_the_failed_count(answers: dict[bool, Answer], verbose: bool) -> None:
    """``4 failed`` is 2 failing tests and their 2 failed subtests: the structured summary
    counts the subtests apart, and the failure list's header says so."""
    text, content, _line = answers[verbose]
    summary = content["summary"]
    assert summary["failed"] == 4 and summary["subtests_failed"] == 2
    listed = len(content["failures"]) + content["truncated"]["failures"]
    assert listed == summary["failed"] - summary["subtests_failed"] == 2
    assert "Failures (2 of 2 listed; pytest's 4 failed count their 2 failed subtests too):" in text
