"""results.jsonl is written in batches: every STREAM_BATCH results, at each failure, when
STREAM_BATCH_SECONDS passed, and at the end; a killed run loses at most the batch it gathered."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from pytest_qbench.plugin import session
from pytest_qbench.report import store
from pytest_qbench.report.shapes import new

from conftest import RunQBench
from conftest import find_run_dir


# batches of 10, no time bound: what is written does not depend on the machine's speed
SMALL_BATCHES = (
    "import pytest_qbench.plugin.session as s\ns.STREAM_BATCH = 10\ns.STREAM_BATCH_SECONDS = 1e9\n"
)


def passing_tests(count: int, start: int = 0) -> str:
    return "".join(f"def test_{i}(): pass\n" for i in range(start, start + count))


class CountWrites:
    """Counts the stream's writes that carry results, and the results in each."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[int] = []
        real = store.StreamWriter._write

        def write(writer: store.StreamWriter, line: bytes) -> None:
            if line.startswith(store.RESULT_PREFIX.encode()):
                self.batches.append(line.count(b"\n") + 1)
            real(writer, line)

        monkeypatch.setattr(store.StreamWriter, "_write", write)


def streamed_names(run_dir: Path) -> list[str]:
    lines = (run_dir / store.STREAM_NAME).read_text().split("\n")
    records = [json.loads(line) for line in lines if line]
    return [r["result"]["test_name"] for r in records if r["kind"] == "result"]


def test_results_are_written_a_batch_at_a_time(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """25 passing tests, batches of 10: three writes (10, 10, 5 at the end), not 25; every
    result is in the stream, in order, and in report.json."""
    monkeypatch.setattr(session, "STREAM_BATCH", 10)
    monkeypatch.setattr(session, "STREAM_BATCH_SECONDS", 1e9)
    writes = CountWrites(monkeypatch)
    pytester.makepyfile(passing_tests(25))
    run = run_qbench()
    assert writes.batches == [10, 10, 5]
    names = [f"test_{i}" for i in range(25)]
    assert streamed_names(run.run_dir) == names
    assert [r.test_name for r in run.report.results] == names


def test_the_time_bound_writes_what_waited_too_long(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch whose first result waited STREAM_BATCH_SECONDS is written when the next test
    finishes (0 s: each result on its own)."""
    monkeypatch.setattr(session, "STREAM_BATCH_SECONDS", 0.0)
    writes = CountWrites(monkeypatch)
    pytester.makepyfile(passing_tests(5))
    run = run_qbench()
    assert writes.batches == [1, 1, 1, 1, 1]
    assert len(run.report.results) == 5


def test_a_killed_run_loses_at_most_the_batch_it_gathered(pytester: pytest.Pytester) -> None:
    """Batches of 10; os._exit after 15 passing tests, a failing one and 3 passing: the stream
    has the first batch of 10 and the 6 written with the failure; the 3 gathered since are
    lost."""
    pytester.makeconftest(SMALL_BATCHES)
    body = passing_tests(15) + "def test_fail(): assert 0\n" + passing_tests(3, start=15)
    pytester.makepyfile(body + "def test_zdie():\n    import os; os._exit(9)\n")
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly")
    assert result.ret == 9
    names = streamed_names(find_run_dir(pytester.path))
    assert names == [f"test_{i}" for i in range(15)] + ["test_fail"]


def test_a_batch_torn_by_a_full_disk_is_never_written_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk takes half of a batch of three and cannot cut it back: the whole record it took
    is counted as written, the rest is written again whole, and no record is there twice."""
    path = tmp_path / store.STREAM_NAME
    writer = store.StreamWriter(path)
    results = [
        new("TestResult", nodeid=f"t.py::{n}", test_name=n, file="t.py", outcome="passed")
        for n in ("a", "b", "c")
    ]
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        monkeypatch.setattr(os, "write", refuse)
        return real_write(fd, data[: len(data) // 2])

    def refuse(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_truncate(fd: int, length: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    monkeypatch.setattr(os, "ftruncate", no_truncate)
    with pytest.raises(store.StreamWriteError) as failed:
        writer.write_results(results)
    monkeypatch.undo()
    assert failed.value.written == 1
    writer.write_results(results[failed.value.written :])
    writer.close()
    assert writer.damaged
    kept = [json.loads(raw)["test_name"] for raw in store.iter_result_json(path, check=True)]
    assert kept == ["a", "b", "c"]
