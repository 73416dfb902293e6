"""``qbench pr-comment`` with no run named, when the history holds CI shards and their merged
run: the comment is about the merged run (one shard's counts are not the pipeline's), compared
with the run before it that is not a shard, and it says which run it is; with shards but no
merged run of them, it refuses and names the choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_qbench.cli import main


SUITE = """
    import os

    def test_a():
        assert os.environ.get("BROKEN") != "a", "a broke"

    def test_b():
        pass

    def test_c():
        pass

    def test_d():
        pass
"""


def run_ci(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    sha: str,
    *args: str,
    branch: str = "feature",
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REF_NAME", branch)
    monkeypatch.setenv("GITHUB_SHA", sha)
    pytester.runpytest("-p", "qbench", *args)


@pytest.fixture
def shards(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A whole green run on c0, then c1's pipeline: two shards (test_a fails in one), indexed
    as they end."""
    pytester.makepyfile(test_suite=SUITE)
    run_ci(pytester, monkeypatch, "c0", "--qbench-run-id=whole0")
    monkeypatch.setenv("BROKEN", "a")
    for index in (1, 2):
        run_ci(
            pytester, monkeypatch, "c1", f"--qbench-shard={index}/2", f"--qbench-run-id=s{index}"
        )
    monkeypatch.delenv("GITHUB_ACTIONS")
    return pytester.path / ".qbench"


def comment(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["pr-comment", *args]) == 0
    return capsys.readouterr().out


def test_the_default_run_is_the_merged_run_of_the_shards(
    shards: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last run indexed by start is a shard (the merged run starts with the first shard):
    the comment was about shard 2/2, green, beside a pipeline with a new failure, and compared
    it with the merged run of its own pipeline."""
    runs = shards / "runs"
    merged = pytester.path / "merged" / "report.json"
    assert main(["merge", str(runs / "s1"), str(runs / "s2"), "-o", str(merged)]) == 0
    assert main(["index", str(merged), "--dir", str(shards)]) == 0
    capsys.readouterr()
    text = comment(capsys, "--dir", str(shards))
    headline, counts = text.splitlines()[1], text.splitlines()[3]
    assert headline.startswith("### :x: qbench: 1 new failure")
    assert counts.startswith("**4 tests**: 1 failed (+1), 3 passed (-1) · run `")
    assert "(merged CI shards) · against run `whole0`" in counts
    # named, a shard is the comment's run, and the comment says it is one shard
    shard = comment(capsys, "--dir", str(shards), "s2").splitlines()[3]
    assert "· run `s2` (CI shard 2/2, not the whole run) ·" in shard


def test_shards_without_their_merged_run_are_refused_by_default(
    shards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No merged run indexed: the default is refused, naming the shard and the choices."""
    assert main(["pr-comment", "--dir", str(shards)]) == 1
    err = capsys.readouterr().err
    assert "the last run, s2, is CI shard 2/2, not the whole run" in err
    assert "'qbench index merged/report.json'" in err
    assert "'qbench pr-comment s2'" in err


def test_a_run_that_did_not_finish_is_not_passing_without_a_base() -> None:
    """No base run: the headline said ``passing`` of an interrupted run whose tests all passed
    (a merged run missing a shard, exit status 0), since only qbench's recording errors counted."""
    from dataclasses import replace

    from test_pr_comment import _run

    from pytest_qbench.history.pr_comment import pr_comment

    head = replace(_run("m", 0, 2), exit_code=0, interrupted=True)
    headline = pr_comment(head, None).splitlines()[1]
    assert headline == (
        "### qbench: failing (no base run to compare with; the run was interrupted, exit status "
        "0: the tests it did not reach have no result)"
    )
    assert pr_comment(replace(head, interrupted=False), None).splitlines()[1] == (
        "### qbench: passing (no base run to compare with)"
    )


def test_a_branch_base_is_its_merged_run_not_its_last_shard(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--base main`` took main's newest run by start: the last shard of main's pipeline, so the
    whole feature run was compared with one shard (the other shard's tests "did not run")."""
    pytester.makepyfile(test_suite=SUITE)
    for index in (1, 2):
        run_ci(
            pytester,
            monkeypatch,
            "m0",
            f"--qbench-shard={index}/2",
            f"--qbench-run-id=m{index}",
            branch="main",
        )
    runs = pytester.path / ".qbench" / "runs"
    merged = pytester.path / "main.json"
    assert main(["merge", str(runs / "m1"), str(runs / "m2"), "-o", str(merged)]) == 0
    assert main(["index", str(merged)]) == 0
    run_ci(pytester, monkeypatch, "c1", "--qbench-run-id=whole1")
    capsys.readouterr()
    counts = comment(capsys, "whole1", "--base", "main").splitlines()[3]
    assert counts.startswith("**4 tests**: 4 passed · run `whole1` · against run `")
    assert "(merged CI shards) (on `main` `m0`)" in counts
