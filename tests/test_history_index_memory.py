"""Indexing a run at the session end holds the same memory whatever the run's size: the stream
is read a block at a time, its lines matched a part at a time, and the results written in
batches (issue 28: the test run's extra peak memory must not grow with its tests)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from history_data import report
from history_data import result

from pytest_qbench.history.session_end import record_run
from pytest_qbench.report import store


PEAK_KIB = 320
"""The most Python memory indexing may hold at once (tracemalloc): 209 to 213 KiB measured at
2 000 and 20 000 results (a 64 KiB block of the stream's text, a part's matches, a batch of
results); 473 to 476 KiB before (the block copied twice more, one list of matches for the
whole block)."""


def _stream(path: Path, count: int) -> Path:
    """A run's stream of ``count`` passing results, each line the size of a generated suite's
    (its node id, test name, file, line, outcome and three phases' seconds)."""
    writer = store.StreamWriter(path)
    writer.write_start({"kind": "start"})  # type: ignore[typeddict-item]
    for n in range(count):
        record = result(f"test_case_{n:05d}", duration=1.25e-04 + n * 1e-09)
        record["nodeid"] = f"tests/test_module_{n // 100:04d}.py::test_case_{n:05d}"
        record["durations"] = {"setup": 3.5e-05 + n * 1e-10, "call": 1e-04, "teardown": 2e-05}
        writer.write_result(record)
    writer.close()
    return path


def _peak_kib(tmp_path: Path, count: int) -> float:
    """Python's peak memory (tracemalloc) while ``record_run`` indexes ``count`` results, less
    what it holds before and after."""
    stream = _stream(tmp_path / f"results-{count}.jsonl", count)
    head = report(f"run-{count}", 0, [])
    qbench_dir = tmp_path / f"store-{count}"
    qbench_dir.mkdir()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        record_run(qbench_dir, head, stream, [], keep_runs=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - before) / 1024


def test_indexing_holds_a_bounded_memory_whatever_the_run_s_size(tmp_path: Path) -> None:
    """The same bound at 2 000 and 20 000 results, and within a few KiB of each other: nothing
    indexing holds grows with the results."""
    _peak_kib(tmp_path, 1_000)  # imports, and the statements of a batch cached
    small, large = _peak_kib(tmp_path, 2_000), _peak_kib(tmp_path, 20_000)
    assert small < PEAK_KIB, f"{small:.0f} KiB at 2 000 results"
    assert large < PEAK_KIB, f"{large:.0f} KiB at 20 000 results"
    assert abs(large - small) < 32, f"{small:.0f} KiB at 2 000 results, {large:.0f} at 20 000"
