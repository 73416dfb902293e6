"""``--lf`` with ``--qbench-shard``: pytest's ``--lf`` collects only the files of the tests that
failed before, from each machine's own cache, so shards whose caches differ plan from different
collections; the merge says so and is not green. Shards that share the cache plan alike and
run what unsharded ``--lf`` runs. Real pytest runs, real cache files, a real merge."""

from __future__ import annotations

import json

import pytest

from pytest_qbench.report.merge import Source
from pytest_qbench.report.merge import merge_reports
from pytest_qbench.report.verdict import run_green

from conftest import RunQBench


FILES = {
    "test_one": "def test_a():\n    pass\n\ndef test_b():\n    pass\n",
    "test_two": "def test_c():\n    pass\n\ndef test_d():\n    pass\n",
    "test_three": "def test_e():\n    pass\n",
}


def with_failure(pytester: pytest.Pytester, name: str, failed: list[str]) -> None:
    """A pytest cache directory ``name`` whose last-failed tests are ``failed``."""
    cache = pytester.path / name / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text(json.dumps(dict.fromkeys(failed, True)))


@pytest.mark.parametrize("shared", [False, True], ids=["own-caches", "one-cache"])
def test_last_failed_shards_merge_green_only_when_they_planned_alike(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    shared: bool,
) -> None:
    """No history yet (a split by test count). ``own-caches``: machine 1's cache holds no
    failure, so it collects the 5 tests and runs its part; machine 2's holds test_a's, so it
    collects test_one.py's file alone and plans it into the other shard: test_a, the one test
    ``--lf`` asked for, ran in none or by chance. Before, the merge was green (a split by count
    records no expected seconds to compare); now each shard records how many tests it planned,
    and the merge is not whole. ``one-cache``: both plan the same collection (test_a alone),
    one runs it, and the merge is green with test_a its one test, as unsharded ``--lf``."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    pytester.makepyfile(**FILES)
    with_failure(pytester, "cache2", ["test_one.py::test_a"])
    if shared:
        with_failure(pytester, "cache1", ["test_one.py::test_a"])
    runs = [
        run_qbench(
            "-p",
            "no:randomly",
            "--lf",
            "-o",
            f"cache_dir=cache{i}",
            f"--qbench-shard={i}/2",
            f"--qbench-run-id=s{i}",
            run_dir=f"s{i}",
        )
        for i in (1, 2)
    ]
    for run in runs:
        shard = run.report.run.shard
        assert shard is not None and shard.by_count
    merged = merge_reports([Source(f"s{i}", run.report) for i, run in enumerate(runs, 1)])
    notes = [w.message for w in merged.warnings if w.code == "merge-plans-differ"]
    if shared:
        assert [r.nodeid for r in merged.results] == ["test_one.py::test_a"]
        assert run_green(merged.model_dump(mode="json")) and not notes
    else:
        assert [run.report.run.shard.tests for run in runs if run.report.run.shard] == [5, 1]
        assert merged.run.interrupted is True
        assert not run_green(merged.model_dump(mode="json"))
        assert len(notes) == 1 and "--lf with each machine's own cache" in notes[0]
