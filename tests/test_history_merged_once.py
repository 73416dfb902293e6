"""One CI pipeline counts once in the history (session 41): its shards indexed themselves and
its merged report was indexed too (``qbench index merged/report.json``, as docs/how-to/shards.md
says), in either order. Real pytest shards (``--qbench-shard``) and the ``qbench`` command, run
in this process (what is counted is the index's, not a process's: a child Python a command cost
0.5 s of CPU, 16 to 22 of them a test), a real SQLite index. Before schema 11 every result of such a pipeline
was in the index twice (the shard's and the merge's copy), and one failure read as "failed in
2 consecutive runs"."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any
from typing import cast

import pytest
from history_data import index_args
from history_data import index_reports
from history_data import make_index_of_schema
from history_data import report
from history_data import result
from postgres_server import HistoryDB

from pytest_qbench.cli import main
from pytest_qbench.history import sql
from pytest_qbench.history.ctrf_insights import ctrf_history
from pytest_qbench.history.database import open_index
from pytest_qbench.history.indexer import delete_run
from pytest_qbench.history.indexer import index_run
from pytest_qbench.history.merges import run_before
from pytest_qbench.history.merges import unrecorded_merges
from pytest_qbench.history.merges import unrecorded_note
from pytest_qbench.history.queries import flaky_candidates
from pytest_qbench.history.queries import list_runs
from pytest_qbench.history.queries import recent_results
from pytest_qbench.history.queries import results_of_test


TESTS = {
    "test_a": """
        import os

        def test_a():
            assert not os.environ.get("QBENCH_TEST_FAIL")
    """,
    "test_b": """
        def test_b():
            pass
    """,
}
A = "test_a.py::test_a"
ARGS = ("-p", "qbench", "-p", "no:randomly")


def qbench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``qbench ARGS --json --dir .qbench`` in this process: its status and parsed output."""
    capsys.readouterr()
    status = main([*args, "--json", "--dir", ".qbench"])
    return status, json.loads(capsys.readouterr().out)


def run_pipeline(
    pytester: pytest.Pytester,
    name: str,
    fail: bool,
    merge_first: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Shards ``NAME-s1`` and ``NAME-s2`` (``--qbench-shard`` 1/2 and 2/2) and their merge
    ``NAME``, all indexed in ``.qbench``: the shards at their session ends and the merge after
    them; or (``merge_first``) the merge first and the shards after it (``qbench index`` of
    the shards' run directories, kept apart until then). The merged run's id."""
    if fail:
        monkeypatch.setenv("QBENCH_TEST_FAIL", "1")
    shard_dir = f"{name}-shards" if merge_first else ".qbench"
    for i in (1, 2):
        ran = pytester.runpytest(
            *ARGS, f"--qbench-shard={i}/2", f"--qbench-run-id={name}-s{i}",
            f"--qbench-dir={shard_dir}",
        )  # fmt: skip
        assert ran.ret in (0, 1, 5)
    monkeypatch.delenv("QBENCH_TEST_FAIL", raising=False)
    runs = pytester.path / shard_dir / "runs"
    out = pytester.path / name / "report.json"
    merged = main(["merge", str(runs / f"{name}-s1"), str(runs / f"{name}-s2"), "-o", str(out)])
    assert merged in (0, 1)
    indexed = [str(out)]
    if merge_first:
        indexed += [str(runs / f"{name}-s1"), str(runs / f"{name}-s2")]
    for path in indexed:
        assert main(["index", path, "--dir", ".qbench"]) == 0
    return str(json.loads(out.read_text())["run"]["run_id"])


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # one CI commit: every shard the same plan
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    pytester.makepyfile(**TESTS)
    return pytester


@pytest.mark.parametrize("merge_first", [False, True], ids=["shards-first", "merge-first"])
def test_one_failure_in_a_merged_pipeline_is_one_failing_run(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    merge_first: bool,
) -> None:
    """A passing pipeline, then one where test_a fails in its shard: `qbench flaky` and
    `qbench history test_a` see one failing run, not two, and the next run's failure of
    test_a counts 2 earlier runs, 1 failed (TestHistory), broken since the merged run p2.
    Before, each pipeline counted twice: "broken: failed in 2 consecutive runs (p2-s1, p2)"
    in `qbench flaky` and `qbench history`, 4 earlier runs with 2 failed at the session end."""
    p1 = run_pipeline(project, "p1", False, merge_first, monkeypatch)
    p2 = run_pipeline(project, "p2", True, merge_first, monkeypatch)
    with sqlite3.connect(project.path / ".qbench/index.sqlite") as db:
        assert len(db.execute("SELECT 1 FROM runs").fetchall()) == 6  # every run indexed
    _status, history = qbench(capsys, "history", A)
    outcomes = [(r["run_id"], r["outcome"]) for r in history["results"]]
    assert outcomes == [(p1, "passed"), (p2, "failed")]
    assert history["failedRuns"] == 1 and "broken" not in history["verdict"]
    _status, flaky = qbench(capsys, "flaky")
    assert [t for t in flaky["tests"] if t["nodeid"] == A] == []  # one failure: not broken
    monkeypatch.setenv("QBENCH_TEST_FAIL", "1")
    assert project.runpytest(*ARGS, "--qbench-run-id=next").ret == 1
    report = json.loads((project.path / ".qbench/runs/next/report.json").read_text())
    (result,) = [r for r in report["results"] if r["nodeid"] == A]
    assert (result["history"]["runs"], result["history"]["failed"]) == (2, 1), result["history"]
    assert p2 in result["history"]["summary"] and "-s1" not in result["history"]["summary"]


@pytest.mark.parametrize("merge_first", [False, True], ids=["shards-first", "merge-first"])
def test_a_regression_back_after_a_merged_pipeline_is_named_so(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, merge_first: bool
) -> None:
    """Pipelines p1 and p2 fail test_a in its shard (a regression, two pipelines long), p3
    passes, the next run fails test_a the same way: a new failure, "a regression that came
    back", failed the same way in the merged run p2, over 3 earlier runs (2 failed). Before,
    the shards counted beside their merges (6 earlier runs, 4 failed), and with the merges
    indexed first the earlier failure named was the shard's (p2-s1), a run the pipeline's
    merge already holds. (One failing pipeline, a pass, then a failure is flaky on the
    failure-rate monitor now: a failure alone between passes; before, the shard and its merge
    made it two runs long, a regression.)"""
    run_pipeline(project, "p1", True, merge_first, monkeypatch)
    p2 = run_pipeline(project, "p2", True, merge_first, monkeypatch)
    p3 = run_pipeline(project, "p3", False, merge_first, monkeypatch)
    monkeypatch.setenv("QBENCH_TEST_FAIL", "1")
    assert project.runpytest(*ARGS, "--qbench-run-id=next").ret == 1
    report = json.loads((project.path / ".qbench/runs/next/report.json").read_text())
    (result,) = [r for r in report["results"] if r["nodeid"] == A]
    history = result["history"]
    assert history["status"] == "new failure", history
    assert (
        f"failed the same way in run {p2} before: a regression that came back"
        in (history["summary"])
    )
    assert (history["runs"], history["failed"], history["last_passed_run"]) == (3, 2, p3)


OLD = Path(__file__).parent / "data" / "history"


def test_an_index_of_schema_10_learns_a_merge_s_members_when_its_report_is_indexed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``index-schema-10.sql``: shards s1 (test_a failed) and s2 and their merge, indexed by
    main's qbench at schema 10. Opened by this qbench, the index is migrated in place (schema
    11, its runs kept); the merge's members are not known yet (the schema-10 index never
    recorded them, and holds neither the merged report nor its shards to fill them in from), so
    its verdict still counts s1 and the merge, and `qbench history`, `qbench flaky` and
    `qbench index` say so, naming the merge and the fix (before, they said nothing); indexing
    the merged report again (``index-schema-10-merged.json``) records them, test_a failed in
    one run, and nothing is said."""
    (tmp_path / ".qbench").mkdir()
    with sqlite3.connect(tmp_path / ".qbench/index.sqlite") as db:
        db.executescript((OLD / "index-schema-10.sql").read_text())
    said: list[str] = []

    monkeypatch.chdir(tmp_path)

    def qbench(*args: str) -> str:
        capsys.readouterr()
        assert main([*args, "--dir", ".qbench"]) == 0
        done = capsys.readouterr()
        said.append(done.err)
        return done.out

    def history() -> dict[str, Any]:
        return cast("dict[str, Any]", json.loads(qbench("history", A, "--json")))

    assert history()["failedRuns"] == 2
    qbench("flaky")
    qbench("index")
    merge_id = "20261127T084453Z-c40a42"
    for stderr in said:
        assert (
            f"qbench: 1 merged run indexed before index schema 11 ({merge_id}): the index does "
            "not know which runs each merged, so the results of those it holds count twice"
        ) in stderr
        assert "index the report.json that 'qbench merge' wrote again" in stderr
    said.clear()
    with sqlite3.connect(tmp_path / ".qbench/index.sqlite") as db:
        assert db.execute(sql.GET_VERSION).fetchall() == [(str(sql.SCHEMA_VERSION),)]
        assert len(db.execute("SELECT 1 FROM runs").fetchall()) == 3
    merged = tmp_path / "report.json"
    shutil.copy(OLD / "index-schema-10-merged.json", merged)
    qbench("index", str(merged))
    found = history()
    assert (found["totalRuns"], found["failedRuns"]) == (1, 1)
    assert "broken" not in found["verdict"]
    assert len(said) == 2 and "schema 11" not in "".join(said)


def test_each_backend_migrates_to_11_and_counts_a_merged_pipeline_once(
    history_db: HistoryDB,
) -> None:
    """On SQLite and PostgreSQL: an index of schema 10 holding shard s1 gains
    ``merge_members`` when opened; the merge indexed after it, and a shard s2 indexed after
    the merge, are one run in `qbench history`'s and the session end's windows; the merge
    deleted (`qbench gc`, retention), its shards count again."""
    s1 = report("s1", 0, [result("a", "failed")])
    index_reports(history_db.qbench_dir, s1, db=history_db.url)
    make_index_of_schema(history_db, 10)
    merged = report("m", 1, [result("a", "failed"), result("b")])
    shards = [{"run": {"run_id": "s1"}}, {"run": {"run_id": "s2"}}]  # what indexing reads
    cast("dict[str, Any]", merged)["shards"] = shards
    s2 = report("s2", 2, [result("b")])
    index = history_db.open()
    try:
        assert history_db.query(sql.GET_VERSION) == [(str(sql.SCHEMA_VERSION),)]
        for record in (merged, s2):
            index_run(index, *index_args(record))
        [nodeid] = [r["nodeid"] for r in s1["results"]]
        assert [r.run_id for r in results_of_test(index, nodeid, 10)] == ["m"]
        recent = recent_results(index, [nodeid], "next", 10)[nodeid]
        assert [r.run_id for r in recent.window] == ["m"]
        assert list(flaky_candidates(index, 10)) == [nodeid]
        assert [r.run_id for r in flaky_candidates(index, 10)[nodeid]] == ["m"]
        assert index.write(lambda cursor: delete_run(cursor, "m"))  # its members' rows with it
        assert [r.run_id for r in results_of_test(index, nodeid, 10)] == ["s1"]
    finally:
        index.close()


def test_ctrf_insights_count_a_merged_pipeline_once(tmp_path: Path) -> None:
    """The CTRF insights of a run over the runs before it (`qbench ctrf`): shard s1 (a
    failed), its merge m (a failed, b passed; s1 and s2), then s2 and a run r where both pass.
    Test a ran in 2 runs (m and r), failed in half; r's baseline is m. Before, s1 and m counted
    both: 3 runs, 2 of them failed."""
    merged = report("m", 1, [result("a", "failed"), result("b")])
    cast("dict[str, Any]", merged)["shards"] = [{"run": {"run_id": s}} for s in ("s1", "s2")]
    index_reports(
        tmp_path,
        report("s1", 0, [result("a", "failed")]),
        merged,
        report("s2", 2, [result("b")]),
        report("r", 3, [result("a"), result("b")]),
    )
    index = open_index(tmp_path, None, create=False)
    try:
        found = ctrf_history(index, "r", ["t.py::a"])
    finally:
        index.close()
    assert found is not None and found.baseline is not None
    assert found.baseline["extra"] == {"runId": "m"}
    insight = found.tests["t.py::a"]
    assert (insight["executedInRuns"], insight["failRate"]["current"]) == (2, 0.5)
    insights = found.insights
    assert insights is not None and insights["runsAnalyzed"] == 2


def merged_report(run_id: str, minutes: float, shards: list[str]) -> Any:
    """A merged report record ``run_id`` of test a (failed) and b, holding ``shards``."""
    record = cast("dict[str, Any]", report(run_id, minutes, [result("a", "failed"), result("b")]))
    record["shards"] = [{"run": {"run_id": shard}} for shard in shards]
    return record


@pytest.mark.parametrize("outer_first", [False, True])
def test_a_merge_of_merged_reports_counts_once_with_the_merge_it_holds(
    tmp_path: Path, outer_first: bool
) -> None:
    """m1 merged s1 and s2; m2 merged m1's report and s3 (its ``shards``: s1, s2, s3, not m1).
    Indexed in either order, with a later merge m3 of the same shards as m2: test a has one
    result, m3's (the last indexed of the merges of the same shards). Before, m1, m2 and m3
    each counted (and s1 with them)."""
    m1 = merged_report("m1", 2, ["s1", "s2"])
    m2 = merged_report("m2", 3, ["s1", "s2", "s3"])
    merges = [m2, m1] if outer_first else [m1, m2]
    index_reports(
        tmp_path,
        report("s1", 0, [result("a", "failed")]),
        report("s2", 1, [result("b")]),
        *merges,
        merged_report("m3", 4, ["s1", "s2", "s3"]),
    )
    index = open_index(tmp_path, None)
    try:
        assert [r.run_id for r in results_of_test(index, "t.py::a", 10)] == ["m3"]
    finally:
        index.close()


def test_the_run_before_a_merge_whose_sources_are_gone_is_read_from_the_index(
    tmp_path: Path,
) -> None:
    """Run p0, then a CI pipeline: shard s1 and a job rr that is no shard (a rerun of the
    failures), merged into m on a machine whose reports are gone. The run to compare m with
    is p0: the index recorded m's members (s1, rr) when m was indexed. Before, m's members
    were only read from its sources' files, and with them gone, whether rr (its times inside
    m's) was one of them was not known: `qbench diff` refused."""
    rr = report("rr", 1, [result("a")])
    merged: Any = report("m", 1, [result("a"), result("b")])
    merged["run"]["command"] = ["qbench", "merge", "gone/s1", "gone/rr"]
    merged["run"]["cwd"] = str(tmp_path / "elsewhere")
    merged["run"]["completed_at"] = rr["run"]["completed_at"]
    merged["shards"] = [{"run": {"run_id": shard}} for shard in ("s1", "rr")]
    s1: Any = report("s1", 1, [result("b")])
    s1["run"]["shard"] = {"index": 1, "count": 1}
    index_reports(tmp_path, report("p0", 0, [result("a")]), s1, rr, merged)
    index = open_index(tmp_path, None)
    try:
        [head] = [run for run in list_runs(index, 5) if run.run_id == "m"]
        base = run_before(index, head, "qbench diff {run} m")
    finally:
        index.close()
    assert base is not None and base.run_id == "p0"


def test_each_backend_names_the_merges_that_record_no_members(history_db: HistoryDB) -> None:
    """On SQLite and PostgreSQL: a merged run whose members the index does not record (as one
    indexed before schema 11: its rows taken out here) is named, with the fix; indexed again,
    it records them and is not (``merges.unrecorded_merges``)."""
    merged = report("m", 1, [result("a", "failed")])
    cast("dict[str, Any]", merged)["shards"] = [{"run": {"run_id": s}} for s in ("s1", "s2")]
    merged["run"]["command"] = ["qbench", "merge", "s1", "s2"]
    index_reports(history_db.qbench_dir, report("s1", 0, [result("a", "failed")]), merged,
                  db=history_db.url)  # fmt: skip
    index = history_db.open()
    try:
        assert unrecorded_merges(index) == []
        index.write(lambda cursor: cursor.execute("DELETE FROM merge_members"))
        assert [run.run_id for run in unrecorded_merges(index)] == ["m"]
        note = unrecorded_note(index)
        assert note is not None and note.startswith(
            "1 merged run indexed before index schema 11 (m)"
        )
        index_run(index, *index_args(merged))
        assert unrecorded_note(index) is None
    finally:
        index.close()
