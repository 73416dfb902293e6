"""An exception's notes (PEP 678, ``add_note``) are part of its message, as pytest shows them:
``E   ValueError: no such user`` then ``E   while loading fixtures/users.json``. They were left
out of the report's message, its trace, the digest and MCP's answers (found comparing pytest's
failures with qbench's, fourteenth round)."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import RunQBench


pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="add_note is 3.11+")

NOTES = """
    def test_noted():
        error = ValueError("no such user")
        error.add_note("while loading fixtures/users.json")
        error.add_note("entry 3")
        raise error


    def test_noted_without_message():
        error = KeyError()
        error.add_note("the key was empty")
        raise error
"""


def test_notes_follow_the_message(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    pytester.makepyfile(test_notes=NOTES)
    run = run_qbench("--qbench-digest=digest.json")
    failure = run.by_name("test_noted").failure
    assert failure is not None
    assert failure.error_type == "ValueError"
    assert failure.error_message == "no such user\nwhile loading fixtures/users.json\nentry 3"
    assert failure.stack_trace.endswith(
        "E   ValueError: no such user\nE   while loading fixtures/users.json\nE   entry 3"
    )
    bare = run.by_name("test_noted_without_message").failure
    assert bare is not None
    assert bare.error_message == "the key was empty"
    assert bare.stack_trace.endswith("E   KeyError\nE   the key was empty")
    run.result.stdout.fnmatch_lines(
        ["E       while loading fixtures/users.json", "E       entry 3"]
    )
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    shown = {f["test_name"]: f["error_message"] for f in digest["failures"]}
    assert "entry 3" in shown["test_notes.py::test_noted"]
