"""A merged run (``qbench merge``) and the runs it merged: ``qbench diff`` with no run named,
right after ``qbench index merged/report.json``, compares the merged run with the run before its
shards, never with one of them; ``qbench pr-comment`` finds the merged run of the last shard in
every order of indexing. Which runs a merge holds is read from the reports its command names
(``history/merges.py``). Real pytest runs, real files, a real SQLite index."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_pr_comment_shards import SUITE
from test_pr_comment_shards import run_ci

from pytest_qbench.cli import main


def pipeline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *selections: list[str]
) -> Path:
    """A green whole run ``whole0``, then runs ``s1``, ``s2`` with ``selections`` (test_a
    failing in the first) merged into ``merged/report.json`` from their run directories; the
    merged report's path."""
    pytester.makepyfile(test_suite=SUITE)
    run_ci(pytester, monkeypatch, "c0", "--qbench-run-id=whole0")
    monkeypatch.setenv("BROKEN", "a")
    for number, selection in enumerate(selections, start=1):
        run_ci(pytester, monkeypatch, "c1", f"--qbench-run-id=s{number}", *selection)
    monkeypatch.delenv("GITHUB_ACTIONS")
    runs = pytester.path / ".qbench" / "runs"
    merged = pytester.path / "merged" / "report.json"
    assert main(["merge", str(runs / "s1"), str(runs / "s2"), "-o", str(merged)]) == 0
    return merged


def diff_json(capsys: pytest.CaptureFixture[str], qbench_dir: Path) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["diff", "--json", "--dir", str(qbench_dir)])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "selections",
    [
        pytest.param([["--qbench-shard=1/2"], ["--qbench-shard=2/2"]], id="planned-shards"),
        pytest.param([["-k", "a or b"], ["-k", "c or d"]], id="runs-split-by-hand"),
    ],
)
def test_diff_after_indexing_a_merge_compares_with_the_run_before_its_shards(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    selections: list[list[str]],
) -> None:
    """``qbench diff`` right after ``qbench index merged/report.json`` compared the merged run
    with its own last shard (``s2``): test_a's failure was in both, and ``s1``'s tests were
    "not selected". It compares with ``whole0``, the run before the shards: 1 new failure."""
    merged = pipeline(pytester, monkeypatch, *selections)
    qbench_dir = pytester.path / ".qbench"
    assert main(["index", str(merged), "--dir", str(qbench_dir)]) == 0
    code, diff = diff_json(capsys, qbench_dir)
    assert diff["head"]["run_id"] == json.loads(merged.read_text())["run"]["run_id"]
    assert diff["base"]["run_id"] == "whole0"
    assert [change["nodeid"] for change in diff["new_failures"]] == ["test_suite.py::test_a"]
    assert code == 1


def test_diff_refuses_when_the_merged_reports_are_gone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runs merged were split by hand (no shard label) and their reports are gone. The
    index recorded the merge's members when it was indexed (schema 11): ``qbench diff``
    compares the merge with whole0, the run before its members. For a merge whose members the
    index did not record (indexed before schema 11: its rows taken out here), whether ``s2``
    is one of the merged runs cannot be told, so ``qbench diff`` refuses, naming the choice,
    rather than compare the merge with what may be its own part."""
    merged = pipeline(pytester, monkeypatch, ["-k", "a or b"], ["-k", "c or d"])
    qbench_dir = pytester.path / ".qbench"
    assert main(["index", str(merged), "--dir", str(qbench_dir)]) == 0
    for name in ("s1", "s2"):
        shutil.rmtree(qbench_dir / "runs" / name)
    _code, diff = diff_json(capsys, qbench_dir)
    assert diff["base"]["run_id"] == "whole0"
    with sqlite3.connect(qbench_dir / "index.sqlite") as db:
        db.execute("DELETE FROM merge_members")
    capsys.readouterr()
    assert main(["diff", "--dir", str(qbench_dir)]) == 1
    err = capsys.readouterr().err
    assert "whether run s2, indexed before it, is one of them is not known" in err
    merged_id = json.loads(merged.read_text())["run"]["run_id"]
    assert f"'qbench diff s2 {merged_id}' if it is not one of them" in err


def forget_sources(qbench_dir: Path, *names: str) -> None:
    """The merged runs' source directories gone (CI artifacts expire); the index keeps them."""
    for name in names:
        shutil.rmtree(qbench_dir / "runs" / name)


ORDERS = {
    "shards-then-merge": ["whole0", "s1", "s2", "merged"],
    "merge-between-shards": ["whole0", "s1", "merged", "s2"],
    "merge-then-shards": ["whole0", "merged", "s1", "s2"],
}


@pytest.mark.parametrize("gone", [False, True], ids=["files-kept", "files-gone"])
@pytest.mark.parametrize("order", ORDERS.values(), ids=ORDERS.keys())
def test_pr_comment_finds_the_merge_of_its_shards_in_every_order_of_indexing(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    order: list[str],
    gone: bool,
) -> None:
    """Shards' reports indexed into another history in any order (CI artifacts): the comment is
    about the merged run, against ``whole0``. Before, a finished shard indexed after its merge
    was refused ("no merged run of its shards is indexed"), and ``qbench diff`` compared the
    merge with a shard. With the shards' files gone since (``gone``), the index recorded the
    merge's members; before, the pick read them only from the files and refused where the merge
    was indexed before the last shard, though the index knew them."""
    merged = pipeline(pytester, monkeypatch, ["--qbench-shard=1/2"], ["--qbench-shard=2/2"])
    runs = pytester.path / ".qbench" / "runs"
    history = pytester.path / "ci-history"
    for name in order:
        source = merged if name == "merged" else runs / name
        assert main(["index", str(source), "--dir", str(history)]) == 0
    if gone:
        forget_sources(pytester.path / ".qbench", "s1", "s2")
    capsys.readouterr()
    assert main(["pr-comment", "--dir", str(history)]) == 0
    counts = capsys.readouterr().out.splitlines()[3]
    merged_id = json.loads(merged.read_text())["run"]["run_id"]
    assert f"run `{merged_id}` (merged CI shards) · against run `whole0`" in counts


@pytest.mark.parametrize("gone", [False, True], ids=["files-kept", "files-gone"])
def test_a_branch_base_is_never_a_run_the_merge_holds(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    gone: bool,
) -> None:
    """``qbench pr-comment --base feature`` about a merged run of runs split by hand (no shard
    label), all on the branch: the newest other run on the branch was ``s2``, one of the runs
    merged; it is now ``whole0``. With their files gone since (``gone``), the index recorded
    them; before, ``--base BRANCH`` read the members only from the files and refused ("whether
    run s2 ... is one of them is not known")."""
    merged = pipeline(pytester, monkeypatch, ["-k", "a or b"], ["-k", "c or d"])
    qbench_dir = pytester.path / ".qbench"
    assert main(["index", str(merged), "--dir", str(qbench_dir)]) == 0
    if gone:
        forget_sources(qbench_dir, "s1", "s2")
    capsys.readouterr()
    assert main(["pr-comment", "--dir", str(qbench_dir), "--base", "feature"]) == 0
    counts = capsys.readouterr().out.splitlines()[3]
    assert "(merged CI shards) · against run `whole0`" in counts


def test_a_branch_of_shards_only_gives_a_base_the_merge_does_not_hold(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only shards on the branch: an earlier pipeline's ``old1`` and the merged ``s1``, ``s2``,
    whose files are gone. The base is the newest shard the merge does not hold, ``old1``;
    before, the members were read only from the files, none were known, and the merge was
    compared with its own shard ``s2``."""
    pytester.makepyfile(test_suite=SUITE)
    run_ci(pytester, monkeypatch, "c0", "--qbench-shard=1/2", "--qbench-run-id=old1")
    monkeypatch.setenv("BROKEN", "a")
    for number in (1, 2):
        run_ci(
            pytester, monkeypatch, "c1", f"--qbench-shard={number}/2", f"--qbench-run-id=s{number}"
        )
    monkeypatch.delenv("GITHUB_ACTIONS")
    qbench_dir = pytester.path / ".qbench"
    merged = pytester.path / "merged" / "report.json"
    runs = qbench_dir / "runs"
    assert main(["merge", str(runs / "s1"), str(runs / "s2"), "-o", str(merged)]) == 0
    assert main(["index", str(merged), "--dir", str(qbench_dir)]) == 0
    forget_sources(qbench_dir, "s1", "s2")
    merged_id = json.loads(merged.read_text())["run"]["run_id"]
    capsys.readouterr()
    assert main(["pr-comment", merged_id, "--dir", str(qbench_dir), "--base", "feature"]) == 0
    counts = capsys.readouterr().out.splitlines()[3]
    assert "(merged CI shards) · against run `old1` (CI shard 1/2" in counts
