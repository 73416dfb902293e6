"""report.json's byte copy of the stream (``store._copy_results``, issue 28's fast path) has the
line by line text loop behind it: a bug in the copy loses nothing. A real pytest run, with the
copy broken half way through its writing."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.report import store


SUITE = """
import pytest

@pytest.mark.parametrize("n", range(40))
def test_many(n):
    assert n != 7, "seven fails"

def test_error(broken):
    pass

@pytest.fixture
def broken():
    raise RuntimeError("setup broke")

def test_skipped():
    pytest.skip("not here")
"""


def test_a_bug_in_the_byte_copy_falls_back_to_the_text_loop(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte copy writes half of its results, then raises. Before, report.json was lost
    (report.md said the run was incomplete); now what the copy wrote is taken back and the text
    loop writes the results: report.json is whole, byte for byte what the text loop writes from
    the same report, stream and patches, and report.md says nothing is missing."""
    copy_results, write_report = store._copy_results, store._write_report
    broken: list[Path] = []
    seen: list[tuple[Any, ...]] = []

    def copy_half_then_fail(write: Any, stream: Path, patches: Any) -> bool:
        copied = bytearray()
        copy_results(copied.extend, stream, patches)
        write(bytes(copied[: len(copied) // 2]))
        broken.append(stream)
        raise RuntimeError("a bug in the byte copy")

    def recorded(
        handle: Any, report: Any, stream: Any, patches: Any, check: Any, *rest: Any, **named: Any
    ) -> None:
        results_json = list(rest[0]) if rest and rest[0] is not None else None
        seen.append((json.loads(json.dumps(report)), stream, patches, check, results_json))
        write_report(handle, report, stream, patches, check, results_json, **named)

    monkeypatch.setattr(store, "_copy_results", copy_half_then_fail)
    monkeypatch.setattr(store, "_write_report", recorded)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "-p", "qbench", "--qbench-json=report.json", "--qbench-md=report.md"
    )
    result.assert_outcomes(passed=39, failed=1, errors=1, skipped=1)
    assert broken, "the byte copy was not used"
    written = (pytester.path / "report.json").read_bytes()
    report = json.loads(written)
    assert len(report["results"]) == 42
    assert "incomplete" not in (pytester.path / "report.md").read_text()
    assert not report["run"].get("recording_errors")
    (expected_report, stream, patches, check, results_json), *_ = seen
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace", newline="\n") as handle:
        write_report(handle, expected_report, stream, patches, check, results_json)
        handle.flush()
        handle.seek(0)
        assert written == handle.buffer.read()
