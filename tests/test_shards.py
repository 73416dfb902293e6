"""``--qbench-shard=I/N``: shards planned from the history, deselected through pytest's hook,
the plan on the terminal and in the run (issue 25)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from pytest_qbench.cli import main
from pytest_qbench.history.database import open_index
from pytest_qbench.history.queries import list_runs
from pytest_qbench.history.queries import phase_timings
from pytest_qbench.history.shardplan import Timing
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.tools import QBenchTools

from conftest import RunQBench


MODULE = """
import time
import pytest

@pytest.fixture(scope="module")
def fixture():
    time.sleep({setup})
    yield
    time.sleep({setup} / 4)

def test_one(fixture):
    time.sleep({call})

def test_two(fixture):
    pass

class TestGroup:
    def test_three(self, fixture):
        pass
"""


# each module's fixture setup (its teardown a quarter of it) and test_one's call, in seconds
SLEEPS = {"test_a": (0.12, 0.0), "test_b": (0.0, 0.05), "test_c": (0.04, 0.0), "test_d": (0.0, 0.0)}


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Four modules with module fixtures of different sizes, one of them slow; a CI commit
    per pipeline (the shards of a pipeline plan from the runs of other commits)."""
    for name, (setup, call) in SLEEPS.items():
        pytester.makepyfile(**{name: MODULE.format(setup=setup, call=call)})
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_SHA", "base")
    return pytester


def set_nominal_times(suite: pytest.Pytester, nodeids: list[str]) -> None:
    """Give every indexed result of ``nodeids`` the phase seconds its module's sleeps take."""
    with sqlite3.connect(suite.path / ".qbench" / "index.sqlite") as db:
        for nodeid in nodeids:
            setup, call = SLEEPS[nodeid.split(".py::", 1)[0]]
            first, last = nodeid.endswith("::test_one"), nodeid.endswith("::test_three")
            before, after = (setup if first else 0.0), (setup / 4 if last else 0.0)
            seconds = before + (call if first else 0.0) + after
            db.execute(
                "UPDATE results SET duration = ?, setup = ?, teardown = ? WHERE test_ref = "
                "(SELECT id FROM tests WHERE nodeid = ?)",
                (seconds, before, after, nodeid),
            )
    db.close()


def nodeids(run_qbench: RunQBench, *args: str, run_id: str) -> list[str]:
    run = run_qbench(*args, f"--qbench-run-id={run_id}", run_dir=run_id)
    return [result.nodeid for result in run.report.results]


def test_shards_run_each_test_once_whole_modules_with_the_plan_recorded(
    suite: pytest.Pytester,
    run_qbench: RunQBench,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    everything = nodeids(run_qbench, run_id="base")
    index = open_index(suite.path / ".qbench", None)
    try:
        timings = phase_timings(index, everything, 5)
    finally:
        index.close()
    assert timings["test_a.py::test_one"][0].setup >= 0.1  # the module fixture's setup
    assert timings["test_a.py::TestGroup::test_three"][0].teardown >= 0.02  # and teardown
    # The plan is read from these times: the sleeps' own, so that it does not depend on how
    # long the machine took to run the rest of each test (a loaded machine adds to every one).
    set_nominal_times(suite, everything)
    index = open_index(suite.path / ".qbench", None)
    try:
        nominal = phase_timings(index, everything, 5)
    finally:
        index.close()
    assert nominal["test_b.py::test_one"] == [Timing(0.0, 0.05, 0.0)]
    monkeypatch.setenv("GITHUB_SHA", "next")
    shards = []
    for index_ in (1, 2):
        run = run_qbench(
            f"--qbench-shard={index_}/2", f"--qbench-run-id=s{index_}", run_dir=f"s{index_}"
        )
        kept = [result.nodeid for result in run.report.results]
        run.result.assert_outcomes(passed=len(kept), deselected=len(everything) - len(kept))
        run.result.stdout.fnmatch_lines(
            [
                f"qbench: shard {index_}/2: * of 4 units, {len(kept)} tests, expected *s; shards (s): * *"
            ]
        )
        shard = run.report.run.shard
        assert shard is not None and (shard.index, shard.count, shard.by_count) == (
            index_,
            2,
            False,
        )
        assert shard.expected == shard.plan[index_ - 1] and len(shard.plan) == 2
        shards.append(kept)
    assert sorted(shards[0] + shards[1]) == sorted(everything)
    for module in "abcd":  # every module whole in one shard
        assert (
            len(
                {i for i, kept in enumerate(shards) for n in kept if n.startswith(f"test_{module}")}
            )
            == 1
        )
    # test_a (fixture 0.15 s) and test_b (0.05 s call) are the big ones: not on one shard
    with_a = next(kept for kept in shards if "test_a.py::test_one" in kept)
    assert "test_b.py::test_one" not in with_a
    # qbench shards: from the index (expected times from the run store), and the merged report
    qbench_dir = str(suite.path / ".qbench")
    capsys.readouterr()
    assert main(["shards", "--dir", qbench_dir]) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines()[0].split() == ["SHARD", "RUN", "TESTS", "EXPECTED", "ACTUAL"]
    assert [line.split()[:2] for line in shown.splitlines()[1:3]] == [["1/2", "s1"], ["2/2", "s2"]]
    assert "x the mean, " in shown and "x the ideal" in shown and "(the plan / 2)" in shown
    merged = suite.path / "merged.json"
    runs = suite.path / ".qbench" / "runs"
    assert (
        main(
            [
                "merge",
                str(runs / "s1"),
                str(runs / "s2"),
                "-o",
                str(merged),
                "--md",
                str(suite.path / "merged.md"),
            ]
        )
        == 0
    )
    markdown = (suite.path / "merged.md").read_text()
    assert "## Shards" in markdown and "| 1/2 | `s1` | " in markdown and "× the ideal" in markdown
    page = suite.path / "merged.html"
    assert main(["render", str(merged), "--html", str(page)]) == 0
    table = page.read_text().split('id="shards"', 1)[1].split("</section>", 1)[0]
    assert "<th>Expected</th>" in table and "–" not in table  # both shards have their plan
    capsys.readouterr()
    assert main(["shards", str(merged), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [row["label"] for row in data["shards"]] == ["1/2", "2/2"] and data["over_ideal"] > 0


def test_without_history_the_shards_split_by_test_count(
    suite: pytest.Pytester, run_qbench: RunQBench
) -> None:
    run = run_qbench("--qbench-shard=2/3", "-q")
    run.result.stdout.fnmatch_lines(
        ["qbench: shard 2/3: 1 of 4 units, 3 tests; no history: split by test count"]
    )
    run.result.assert_outcomes(passed=3, deselected=9)
    assert run.report.run.shard is not None and run.report.run.shard.by_count


def test_the_shard_comes_from_the_ci_parallel_job_variables(
    suite: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI_NODE_INDEX", "3")
    monkeypatch.setenv("CI_NODE_TOTAL", "4")
    run = run_qbench("--qbench-shard=auto")
    assert run.report.run.shard is not None
    assert (run.report.run.shard.index, run.report.run.shard.count) == (3, 4)


def test_qbench_runs_shows_the_shard(
    suite: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    run_qbench("--qbench-shard=1/2")
    index = open_index(suite.path / ".qbench", None)
    try:
        assert [run.shard for run in list_runs(index, 5)] == ["1/2"]
    finally:
        index.close()
    tools = QBenchTools(ServerConfig(root=suite.path, qbench_dir=suite.path / ".qbench"))
    assert [run.shard for run in tools.list_runs().runs] == ["1/2"]  # the MCP tool
    capsys.readouterr()
    assert main(["runs", "--dir", str(suite.path / ".qbench")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "SHARD" in lines[0].split() and " 1/2 " in lines[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--qbench-shard=3/2"],
            "--qbench-shard must be I/N with 1 <= I <= N *given: '3/2'; e.g. --qbench-shard=1/4*",
        ),
        (["--qbench-shard=0/2"], "--qbench-shard must be I/N *given: '0/2'*"),
        (["--qbench-shard=half"], "--qbench-shard must be I/N *given: 'half'*"),
        (["--qbench-shard=auto"], "--qbench-shard=auto found no CI parallel job variables*"),
        (
            ["--qbench-shard=1/2", "--qbench-queue=q"],
            "--qbench-shard and --qbench-queue exclude each other*",
        ),
        (["--qbench-queue=-bad"], "--qbench-queue must be 1-128 letters*given: '-bad'*"),
        (
            ["--qbench-shard=1/2", "-p", "xdist", "-n", "2"],
            "--qbench-shard * pytest-xdist, given: -n 2; use -n 0*",
        ),
    ],
)
def test_bad_values_are_refused_before_any_test_runs(
    suite: pytest.Pytester, args: list[str], message: str
) -> None:
    result = suite.runpytest("-p", "qbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_the_ini_value_is_read(suite: pytest.Pytester, run_qbench: RunQBench) -> None:
    suite.makeini("[pytest]\nqbench_shard = 1/3\n")
    run = run_qbench()
    assert run.report.run.shard is not None and run.report.run.shard.count == 3
