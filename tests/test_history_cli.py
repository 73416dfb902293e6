"""The history commands on synthetic run stores: JSON shapes, text, run references, errors
(issue 5). Real pytest runs are in test_history_runs.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_data import index_reports
from history_data import report
from history_data import result
from history_data import write_run
from postgres_server import HistoryDB

from pytest_qbench.cli import main
from pytest_qbench.evaluation.schema_check import validate
from pytest_qbench.history.dburl import ENV_VAR
from pytest_qbench.report import store


pytestmark = pytest.mark.engine


RUN_KEYS = {
    "run_id",
    "tool",
    "started_at",
    "completed_at",
    "exit_code",
    "interrupted",
    "cwd",
    "command",
    "summary",
    "branch",
    "commit",
    "ci_provider",
    "build_url",
    "python",
    "platform",
    "qbench_version",
    "shard",
    "recording_errors",
    "other",
}
SUMMARY_KEYS = {
    "totalRuns",
    "passedRuns",
    "failedRuns",
    "skippedRuns",
    "lastRunDate",
    "lastRunId",
    "lastOutcome",
    "averageExecutionTime",
    "flakyIndicator",
    "flips",
    "executionTrend",
}


@pytest.fixture
def qdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, history_db: HistoryDB) -> Path:
    """A working directory holding a .qbench with three indexed runs (the history of a small
    project), run directories included; on PostgreSQL, QBENCH_DB names the database."""
    monkeypatch.chdir(tmp_path)
    if history_db.url is not None:
        monkeypatch.setenv(ENV_VAR, history_db.url)
    qbench_dir = tmp_path / ".qbench"
    records = [
        report(
            "20260102T030405Z-aaa111",
            0,
            [
                result("test_a"),
                result("test_b", "failed", line=7),
                result("test_gone"),
                result("test_agent", metrics={"relevance": 0.9, "f1": 0.7}),
            ],
        ),
        report(
            "20260102T031405Z-bbb222",
            10,
            [
                result("test_a", duration=0.02),
                result("test_b", "failed", line=7, message="assert 5 == 6"),
                result("test_gone"),
                result("test_agent", metrics={"relevance": 0.9, "f1": 0.7}),
            ],
        ),
        report(
            "20260102T032405Z-bbb333",
            20,
            [
                result(
                    "test_a",
                    "failed",
                    message="ZeroDivisionError: boom",
                    error_type="ZeroDivisionError",
                ),
                result("test_b", "failed", line=9, message="other"),
                result("test_new", duration=2.0),
                result("test_agent", duration=1.0, metrics={"relevance": 0.3, "f1": 0.72}),
            ],
            branch="feature",
        ),
    ]
    for record in records:
        write_run(qbench_dir, record)
    index_reports(qbench_dir, *records, db=history_db.url)
    return qbench_dir


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``qbench ARGS --json``: exit status and the parsed output."""
    capsys.readouterr()
    status = main([*args, "--json"])
    return status, json.loads(capsys.readouterr().out)


def run_text(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``qbench ARGS``: exit status, stdout, stderr."""
    capsys.readouterr()
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_runs_lists_newest_first(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line per run: id, start, counts, duration, exit code, branch; -n limits."""
    status, out, _ = run_text(capsys, "runs")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "STARTED", "(UTC)", "TESTS", "DURATION", "EXIT", "BRANCH"]
    assert lines[1].split() == [
        "20260102T032405Z-bbb333",
        "2026-01-02",
        "03:24:05",
        "4",
        "tests:",
        "2",
        "failed,",
        "2",
        "passed",
        "2.00s",
        "1",
        "feature",
    ]
    assert len(lines) == 6
    assert lines[4] == ""
    assert lines[5].startswith(f"{qdir}: ") and " in 3 run directories; 'qbench gc" in lines[5]
    _, data = run_json(capsys, "runs", "-n", "2")
    assert [r["run_id"] for r in data["runs"]] == [
        "20260102T032405Z-bbb333",
        "20260102T031405Z-bbb222",
    ]
    assert set(data["runs"][0]) == RUN_KEYS
    assert data["store"]["path"] == str(qdir) and data["store"]["run_dirs"] == 3
    assert data["runs"][0]["summary"]["failed"] == 2
    assert data["runs"][0]["started_at"] == "2026-01-02T03:24:05Z"


@pytest.mark.parametrize(
    ("ref", "run_id"),
    [
        ("last", "20260102T032405Z-bbb333"),
        ("last~2", "20260102T030405Z-aaa111"),
        ("20260102T031405Z-bbb222", "20260102T031405Z-bbb222"),
        ("20260102T0304", "20260102T030405Z-aaa111"),
    ],
)
def test_show_finds_a_run_by_reference(
    qdir: Path, capsys: pytest.CaptureFixture[str], ref: str, run_id: str
) -> None:
    """An id, a unique prefix, last and last~N all name a run."""
    status, data = run_json(capsys, "show", ref)
    assert (status, data["run_id"]) == (0, run_id)
    assert set(data) == RUN_KEYS | {"report", "failures"}
    assert data["report"] is None  # write_run writes report.json only


def test_show_lists_the_failures(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Failed tests with error type, location and this run's message."""
    status, out, _ = run_text(capsys, "show", "last")
    assert status == 0
    assert "tests     4: 2 failed, 2 passed" in out
    assert "ci        github-actions, branch feature, commit abc123-20260102T032405Z-bbb333" in out
    assert "  t.py::test_a  ZeroDivisionError at t.py:3: ZeroDivisionError: boom" in out
    assert "  t.py::test_b  AssertionError at t.py:9: other" in out


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("20260102T03", "run '20260102T03' is ambiguous: it begins several run ids"),
        ("zzz", "no run 'zzz' in "),
        ("last~3", "last~3 needs 4 runs, and "),
    ],
)
def test_show_explains_a_bad_reference(
    qdir: Path, capsys: pytest.CaptureFixture[str], ref: str, message: str
) -> None:
    """Ambiguous, unknown, or too far back: one error line with the fix."""
    status, out, err = run_text(capsys, "show", ref)
    assert (status, out) == (1, "")
    assert err.startswith(f"qbench: error: {message}")


def test_diff_reports_every_kind_of_change(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """last~1 against last: a new failure, a test failing differently, a new and a removed test,
    a slower test, metric changes; exit status 1."""
    status, diff = run_json(capsys, "diff")
    assert status == 1
    assert set(diff) == {
        "base",
        "head",
        "thresholds",
        "new_failures",
        "known_flaky",
        "undecided",
        "head_incomplete",
        "fixed",
        "passed_after_reruns",
        "still_failing",
        "new_tests",
        "removed_tests",
        "selection",
        "not_selected_in_head",
        "not_selected_in_base",
        "slower",
        "metric_changes",
        "diagnostics",
    }
    assert diff["head_incomplete"] is None
    (new,) = diff["new_failures"]
    assert new == {
        "nodeid": "t.py::test_a",
        "before": "passed",
        "after": "failed",
        "failure": {
            "error_type": "ZeroDivisionError",
            "location": "t.py:3",
            "message": "ZeroDivisionError: boom",
        },
        "history": "new failure: passed in the previous run 20260102T031405Z-bbb222",
    }
    (still,) = diff["still_failing"]
    assert (still["nodeid"], still["same_failure"]) == ("t.py::test_b", False)
    assert (diff["new_tests"], diff["removed_tests"]) == (["t.py::test_new"], ["t.py::test_gone"])
    assert diff["slower"] == [{"nodeid": "t.py::test_agent", "before": 0.01, "after": 1.0}]
    assert diff["metric_changes"] == [
        {
            "nodeid": "t.py::test_agent",
            "metric": "relevance",
            "before": 0.9,
            "after": 0.3,
            "passed_before": True,
            "passed_after": False,
        }
    ]
    assert diff["thresholds"] == {"slower_pct": 50.0, "slower_secs": 0.1, "metric_delta": 0.05}


def test_diff_in_text(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text names each section and ends with the counts."""
    status, out, _ = run_text(capsys, "diff", "--metric-delta", "0.01")
    assert status == 1
    assert "New failures (1):\n  t.py::test_a  ZeroDivisionError at t.py:3:" in out
    assert (
        "Still failing (1):\n  t.py::test_b  (fails differently now) AssertionError at t.py:9: other"
        in out
    )
    assert "  t.py::test_agent  relevance  0.9 -> 0.3  (now failing)" in out
    assert "  t.py::test_agent  f1  0.7 -> 0.72" in out
    assert out.rstrip().endswith(
        "1 new failure, 0 fixed, 1 still failing, 1 new test, 1 removed test, 1 slower, "
        "2 metric changes"
    )


def test_diff_without_new_failures_exits_0(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same failure again is not new; one RUN is compared with the last."""
    status, diff = run_json(capsys, "diff", "last~2", "last~1")
    assert status == 0
    assert diff["new_failures"] == [] and diff["still_failing"][0]["same_failure"] is True
    status, one = run_json(capsys, "diff", "last~1")
    assert (status, one["head"]["run_id"]) == (1, "20260102T032405Z-bbb333")


def test_history_text_says_flaky_only_in_its_verdict(
    qdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test failing in consecutive runs flips but is not flaky: the text calls its flips a
    count and a rate, and only the verdict line says "flaky" (it said "flaky 0.02 (1 flips)"
    above "verdict not flaky")."""
    status, out, _ = run_text(capsys, "history", "t.py::test_b")
    assert status == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == [
        "runs",
        "last",
        "average",
        "flips",
        "outcomes",
        "verdict",
    ]
    assert "flaky" not in "\n".join(lines[1:-1])
    assert lines[-1].startswith("  verdict   not flaky: ")


def test_flaky_and_history_shapes(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """flaky and history share the execution summary (Azure DevOps' names); a test failing
    after passes flipped once but is no flaky test."""
    status, flaky = run_json(capsys, "flaky", "--min-flips", "1")
    assert status == 0
    assert (flaky["runs"], flaky["min_flips"], flaky["tests"]) == (50, 1, [])
    status, history = run_json(capsys, "history", "t.py::test_b")
    assert status == 0
    assert set(history) == SUMMARY_KEYS | {"nodeid", "results", "flaky", "verdict"}
    assert (history["flaky"], history["verdict"]) == (
        False,
        "not flaky: failing in 3 consecutive runs (20260102T030405Z-aaa111, "
        "20260102T031405Z-bbb222, 20260102T032405Z-bbb333), not the same way each time",
    )
    assert (history["totalRuns"], history["failedRuns"], history["flakyIndicator"]) == (3, 3, 0.0)
    assert history["lastRunDate"] == "2026-01-02T03:24:05Z"
    assert set(history["results"][0]) == {
        "run_id",
        "started_at",
        "outcome",
        "duration",
        "rerun_passed",
        "fingerprint",
        "message",
    }
    # the same failure twice (numbers aside), then another line: two fingerprints
    prints = [r["fingerprint"] for r in history["results"]]
    assert prints[0] == prints[1] != prints[2]


def test_flaky_text_when_nothing_flips(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No flaky test: one sentence saying so, over the runs there were (3 of the 50 asked),
    and what the rule asks."""
    assert run_text(capsys, "flaky")[1] == (
        "no flaky or broken test in the 3 runs indexed (50 asked) (flaky on evidence in several "
        "runs: a pass "
        "after rerun, a pass and a fail on one commit, or single-run failures between passes; "
        "runs where most tests failed set aside)\n"
    )


def test_history_of_an_unknown_test_suggests_names(
    qdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A partial node id gets the matching ones."""
    status, _, err = run_text(capsys, "history", "test_b")
    assert status == 1
    assert "no test 'test_b' in" in err and "did you mean t.py::test_b?" in err
    assert "did you mean t.py::test_b?" in run_text(capsys, "history", "TEST_B")[2]


def test_history_of_a_misspelt_test_suggests_close_names(
    qdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 11.8) A misspelt node id, or test name, gets the node ids a few edits away."""
    status, _, err = run_text(capsys, "history", "t.py::test_gonne")
    assert status == 1
    assert err.rstrip().endswith("did you mean t.py::test_gone?")
    assert "did you mean t.py::test_agent?" in run_text(capsys, "history", "tst_agnt")[2]
    far = run_text(capsys, "history", "t.py::test_nothing_like_it")[2]
    assert "give a full pytest node id" in far


def test_index_is_idempotent_and_reads_every_run(
    qdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without arguments: every run directory, indexed again, the same runs as before."""
    status, data = run_json(capsys, "index")
    assert status == 0
    assert [(i["run_id"], i["replaced"], i["results"]) for i in data["indexed"]] == [
        ("20260102T030405Z-aaa111", True, 4),
        ("20260102T031405Z-bbb222", True, 4),
        ("20260102T032405Z-bbb333", True, 4),
    ]
    assert len(run_json(capsys, "runs")[1]["runs"]) == 3


def test_index_keep_runs_deletes_the_oldest(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--keep-runs 1 removes two runs from the index and deletes their directories."""
    status, data = run_json(capsys, "index", "--keep-runs", "1")
    assert status == 0
    assert data["removed"] == ["20260102T030405Z-aaa111", "20260102T031405Z-bbb222"]
    assert [p.name for p in (qdir / "runs").iterdir()] == ["20260102T032405Z-bbb333"]


def test_gc_on_every_backend(qdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """(issue 11.12) qbench gc --keep / --older-than on SQLite and PostgreSQL: runs leave the
    index with their directories, tests no run refers to any more too."""
    status, data = run_json(capsys, "gc", "--keep", "2")
    assert (status, data["removed"]) == (0, ["20260102T030405Z-aaa111"])
    assert [r["run_id"] for r in run_json(capsys, "runs")[1]["runs"]] == [
        "20260102T032405Z-bbb333",
        "20260102T031405Z-bbb222",
    ]
    status, data = run_json(capsys, "gc", "--keep", "5", "--older-than", "1d")
    assert data["removed"] == ["20260102T031405Z-bbb222", "20260102T032405Z-bbb333"]
    assert not list((qdir / "runs").iterdir())
    assert "no test 't.py::test_gone'" in run_text(capsys, "history", "t.py::test_gone")[2]


def test_index_a_report_file_from_elsewhere(
    qdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report.json outside the store (a merged report, say) can be indexed too."""
    path = tmp_path / "merged.json"
    store.write_report_json(path, report("merged-1", 30, [result("test_a")]), None)
    status, out, _ = run_text(capsys, "index", str(path))
    assert status == 0
    assert out == f"qbench: indexed merged-1: 1 results from {path}\n"
    assert run_json(capsys, "show", "last")[1]["run_id"] == "merged-1"


def test_index_refuses_what_is_not_a_report(
    qdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A named source that is not a report is an error; in a bulk run it is skipped (status 1)
    and the other runs are indexed."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"meta": {"schema_version": 1}, "run": {}}')
    status, _, err = run_text(capsys, "index", str(bad))
    assert (status, err) == (
        1,
        f"qbench: error: {bad} is not a qbench report: run.run_id: Field required\n",
    )
    newer = tmp_path / "newer.json"
    newer.write_text('{"meta": {"schema_version": 99}}')
    assert "has schema_version 99; this qbench reads 1" in run_text(capsys, "index", str(newer))[2]
    (qdir / "runs" / "zz-broken").mkdir()
    (qdir / "runs" / "zz-broken" / "report.json").write_text("not json")
    status, out, err = run_text(capsys, "index")
    assert status == 1
    assert "qbench: skipped " in err and "zz-broken" in err
    assert out.count("qbench: indexed") == 3


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"run": {"started_at": "yesterday"}}, "run.started_at: Input should be a valid datetime"),
        ({"run": {"exit_code": "1"}}, "run.exit_code: Input should be a valid integer"),
        ({"summary": {"passed": True}}, "summary.passed: Input should be a valid integer"),
        ({"summary": {"other": {"rerun": -1}}}, "summary: Value error, rerun must be 0 or more"),
        ({"results": [{"nodeid": "t.py::a", "outcome": "won"}]}, "results.0.outcome: Input "),
    ],
    ids=["date", "exit-code", "bool-count", "negative-other", "outcome"],
)
def test_index_checks_a_report_with_the_models(
    qdir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, dict[str, Any] | list[Any]],
    detail: str,
) -> None:
    """The fields of report.json the index stores are checked as the models check them; the
    error names the file and the field, and nothing is indexed."""
    data: Any = json.loads(json.dumps(report("bad-1", 30, [result("test_a")])))
    for key, value in change.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    status, out, err = run_text(capsys, "index", str(bad))
    assert (status, out) == (1, "")
    assert err.startswith(f"qbench: error: {bad} is not a qbench report: {detail}"), err
    assert len(err.splitlines()) == 1
    assert "bad-1" not in run_text(capsys, "runs")[1]


SCHEMAS = Path(__file__).parent.parent / "docs" / "schemas"


@pytest.mark.parametrize(
    "args",
    [
        ["runs"],
        ["show", "last"],
        ["diff"],
        ["history", "t.py::test_b"],
        ["mcp-log"],
        ["index"],
        ["gc", "--keep", "1", "--dry-run"],
    ],
    ids=lambda args: args[0],
)
def test_json_output_follows_its_published_schema(
    qdir: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """Each history command's --json output conforms to the schema of its model, as checked
    into docs/schemas/ (``qbench schema --model NAME``), unknown keys refused."""
    schema = json.loads((SCHEMAS / f"{args[0]}.json").read_text(encoding="utf-8"))
    assert schema["additionalProperties"] is False
    _, data = run_json(capsys, *args)
    assert validate(data, schema) is None


def test_commands_need_a_qbench_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without .qbench here or above, and without --dir: an error saying what to do; a
    .qbench without an index: the same for the index."""
    monkeypatch.chdir(tmp_path)
    status, _, err = run_text(capsys, "runs")
    assert status == 1
    assert "no .qbench directory in" in err and "give --dir DIR" in err
    (tmp_path / ".qbench").write_text("x\n", encoding="utf-8")  # a file in its place: named
    status, _, err = run_text(capsys, "runs")
    assert status == 1
    assert f"{tmp_path / '.qbench'} is a file, not a qbench directory; move it away" in err
    (tmp_path / ".qbench").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / ".qbench").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found in a parent
    status, _, err = run_text(capsys, "runs")
    assert status == 1
    assert f"no history index at {tmp_path / '.qbench' / 'index.sqlite'}" in err
    status, _, err = run_text(capsys, "runs", "--dir", "nowhere")
    assert "--dir nowhere is not a directory" in err


@pytest.mark.parametrize(
    "args",
    [["runs", "-n", "0"], ["flaky", "--runs", "x"], ["diff", "--slower-pct", "-1"]],
)
def test_bad_option_values_are_usage_errors(
    qdir: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse refuses them with status 2 and the value."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert "given:" in capsys.readouterr().err


def test_help_lists_the_history_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """qbench --help names every history command."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("index", "runs", "mcp-log", "show", "diff", "flaky", "history"):
        assert f"    {command} " in out


def test_mcp_log_on_every_backend(
    qdir: Path, history_db: HistoryDB, capsys: pytest.CaptureFixture[str]
) -> None:
    """(issue 13.8) qbench mcp-log: no calls yet says so; then the recent calls newest first and
    the totals per tool (calls, success rate, median duration, bytes saved), in text and JSON."""
    from datetime import datetime
    from datetime import timezone

    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.toollog import ToolCall
    from pytest_qbench.history.toollog import record_call

    assert main(["mcp-log"]) == 0
    assert capsys.readouterr().out == "no MCP tool calls logged\n"
    index = open_index(qdir, history_db.url)
    try:
        for tool, ok, duration in (("run_test_workflow", True, 2.0), ("list_runs", False, 0.5)):
            call = ToolCall(
                tool=tool,
                arguments={"limit": 5},
                success=ok,
                error_type=None if ok else "ToolFailure",
                duration=duration,
                response_bytes=1000,
                replaced_bytes=5096 if ok else 0,
                called_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
            )
            record_call(index, call)
    finally:
        index.close()
    assert main(["mcp-log", "--limit", "1", "--json"]) == 0
    logged = json.loads(capsys.readouterr().out)
    assert logged["calls"] == [
        {
            "called_at": "2026-01-02T03:04:05.000000Z",
            "tool": "list_runs",
            "arguments": {"limit": 5},
            "success": False,
            "error_type": "ToolFailure",
            "duration": 0.5,
            "response_bytes": 1000,
            "replaced_bytes": 0,
            "saved_bytes": 0,
        }
    ]
    assert [
        (t["tool"], t["calls"], t["success_rate"], t["saved_bytes"]) for t in logged["totals"]
    ] == [
        ("list_runs", 1, 0.0, 0),
        ("run_test_workflow", 1, 1.0, 4096),
    ]
    assert main(["mcp-log"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Recent calls (2 of 2):"
    assert lines[2].split()[:5] == ["2026-01-02", "03:04:05", "list_runs", "FAILED", "ToolFailure"]
    assert lines[-2:] == [
        "list_runs          1      0%       0.50s   0 B",
        "run_test_workflow  1      100%     2.00s   4.0 KiB",
    ]
    status, dry = run_json(capsys, "gc", "--older-than", "30d", "--dry-run")
    assert (status, dry["tool_calls_removed"]) == (0, 2)
    assert (
        "qbench: dropped 2 MCP tool calls from the log"
        in run_text(capsys, "gc", "--older-than", "30d")[1]
    )
    assert main(["mcp-log"]) == 0
    assert capsys.readouterr().out == "no MCP tool calls logged\n"
