"""Verdicts after a crash: pytest-xdist workers that crash until xdist stops the run, a run
that died and the next pytest run, the MCP server's history tools and a run that died outside
it. The tests that did not run are "did not run", never "removed"; a run that died is seen."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.cli import main

from conftest import RunQBench


if TYPE_CHECKING:
    from pytest_qbench.mcp.config import ServerConfig


def qbench_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``qbench ARGS --json`` in process: exit status and parsed output."""
    capsys.readouterr()
    status = main([*args, "--json", "--dir", ".qbench"])
    return status, json.loads(capsys.readouterr().out)


CRASHING = """
    import os, signal, time

    def test_1():
        pass

    def test_crash():
        if os.environ.get("QBENCH_TEST_DIE"):
            __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

    {rest}
"""


def test_xdist_stopping_after_crashed_workers_is_an_unfinished_run(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker killed mid-test under ``--max-worker-restart=0``: xdist stops the run ("worker
    gw0 crashed and worker restarting disabled"), pytest exits 1 with the tests it reached. The
    run is interrupted (a ``workers-crashed`` warning), its crashed test failed with xdist's
    message, and `qbench diff`/`pr-comment` against the whole run before say its missing tests
    did not run. Before, the run was whole: diff called them "removed tests"."""
    pytest.importorskip("xdist")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test may run in a worker
    # the tests after the crash, which the stopped run never reaches (one worker, dead)
    rest = "\n".join(f"def test_after_{n}():\n    pass\n" for n in range(6))
    pytester.makepyfile(test_x=CRASHING.format(rest=rest.replace("\n", "\n    ")))
    args = ("-p", "xdist", "-n", "1", "--max-worker-restart=0", "-p", "no:randomly")
    whole = run_qbench(*args, "--qbench-run-id=r1", subprocess=True, run_dir="r1")
    assert whole.result.ret == 0 and whole.report.run.interrupted is False
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    run = run_qbench(*args, "--qbench-run-id=r2", subprocess=True, run_dir="r2")
    assert run.result.ret == 1
    run.result.stdout.fnmatch_lines(
        ["*xdist: worker gw0 crashed and worker restarting disabled*", "*1 failed, 1 passed*"]
    )
    assert run.report.run.interrupted is True
    (warning,) = [w for w in run.report.warnings if w.code == "workers-crashed"]
    assert "pytest-xdist stopped the run" in warning.message
    crashed = run.by_name("test_crash")
    assert crashed.outcome == "failed" and crashed.failure is not None
    assert (
        crashed.failure.error_message
        == "worker 'gw0' crashed while running 'test_x.py::test_crash'"
    )
    assert (run.report.summary.failed, run.report.summary.passed) == (1, 1)
    _, shown = qbench_json(capsys, "show", "r2")
    assert shown["interrupted"] is True
    status, diff = qbench_json(capsys, "diff", "r1", "r2")
    assert status == 1
    assert diff["removed_tests"] == []
    capsys.readouterr()
    main(["pr-comment", "r2", "--dir", ".qbench", "--base", "r1"])
    comment = capsys.readouterr().out
    assert "6 tests of run `r1` did not run here (the run did not finish)" in comment
    assert "Tests removed" not in comment


def test_xdist_replacing_a_crashed_worker_runs_on(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed mid-test that xdist replaces (restarts allowed): pytest runs every test,
    the crashed one failed with xdist's message; the run is whole, not interrupted."""
    pytest.importorskip("xdist")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    pytester.makepyfile(test_x=CRASHING.format(rest="def test_2():\n        pass\n"))
    run = run_qbench("-p", "xdist", "-n", "1", "-p", "no:randomly", subprocess=True)
    assert run.result.ret == 1
    run.result.stdout.fnmatch_lines(["*replacing crashed worker gw0*", "*1 failed, 2 passed*"])
    assert run.report.run.interrupted is False
    assert not [w for w in run.report.warnings if w.code == "workers-crashed"]
    crashed = run.by_name("test_crash")
    assert crashed.failure is not None
    assert (
        crashed.failure.error_message
        == "worker 'gw0' crashed while running 'test_x.py::test_crash'"
    )


def test_the_next_run_indexes_a_run_that_died_before_it(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run 1 is killed mid-test (no end record, no report.json, never indexed); run 2, a
    normal run with no history command between, indexes it at its session end before itself,
    so its failing test's history counts run 1 ("broken since run r1"), and the mark run 1
    left is gone. Before, run 2 said "new failure: first run of this test"."""
    pytester.makepyfile(
        test_die="""
        import os, signal

        def test_a():
            assert 0

        def test_b():
            if os.environ.get("QBENCH_TEST_DIE"):
                __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

        def test_c():
            pass
        """
    )
    monkeypatch.setenv("QBENCH_TEST_DIE", "1")
    died = pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=r1", "-p", "no:randomly")
    assert died.ret < 0 or died.ret > 1  # killed by SIGKILL
    assert not (pytester.path / ".qbench/runs/r1/report.json").exists()
    monkeypatch.delenv("QBENCH_TEST_DIE")
    run = run_qbench("--qbench-run-id=r2", "-p", "no:randomly", subprocess=True, run_dir="r2")
    run.result.stdout.fnmatch_lines(
        ["qbench: */r1 has no report.json: indexed from results.jsonl*"]
    )
    history = run.by_name("test_a").history
    assert history is not None
    assert history.summary.startswith("broken since run r1: failed 2 of the last 2 runs")
    assert history.runs == 1
    assert list((pytester.path / ".qbench/unfinished").iterdir()) == []


def test_a_finished_run_leaves_no_mark(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A run that finishes takes its mark away: the next run's session end lists an empty
    directory, not ``runs/``, and indexes nothing but itself."""
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    run_qbench("--qbench-run-id=r1", subprocess=True, run_dir="r1")
    assert list((pytester.path / ".qbench/unfinished").iterdir()) == []
    run = run_qbench("--qbench-run-id=r2", run_dir="r2")
    assert "indexed from results.jsonl" not in run.result.stdout.str()


def test_the_mcp_history_tools_see_a_run_that_died_outside_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed mid-test outside the MCP server (a terminal's pytest) is listed by the
    server's ``list_runs``, interrupted, before the run it followed, and counted by
    ``check_health``, through the SDK's client, as `qbench runs` lists it: the tools index
    such runs first, as the CLI's history commands do. Before, ``list_runs`` said the green run
    before it was the last."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp_helpers import structured

    from pytest_qbench.mcp.server import build_server

    root = tmp_path / "project"
    root.mkdir()
    (root / "test_die.py").write_text(
        "import os, signal\n\ndef test_a():\n    pass\n\n"
        "def test_b():\n    if os.environ.get('QBENCH_TEST_DIE'):\n"
        "        __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)\n",
        encoding="utf-8",
    )
    config = _r1_then_dying_r2(root, {"QBENCH_TEST_DIE": "1"}, monkeypatch)

    async def work(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        listed = structured(await client.call_tool("list_runs", {"limit": 5}))
        health = structured(await client.call_tool("check_health", {}))
        return listed, health

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await work(client)

    listed, health = anyio.run(main)
    assert [(r["run_id"], r["interrupted"]) for r in listed["runs"]] == [
        ("r2", True),
        ("r1", False),
    ]
    assert listed["runs"][0]["summary"]["failed"] == 1  # test_b, which it died in
    assert health["runs_indexed"] == 2


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")
def test_a_killed_run_not_yet_reaped_is_a_run_that_died(tmp_path: Path) -> None:
    """pytest killed mid-test whose parent has not reaped it yet (a zombie: `timeout -s KILL`
    exits before its child is reaped, a container whose first process reaps nothing): the
    pid of its mark still exists, but the process does not run. `qbench pr-comment` and `qbench
    runs` right after the kill take it for a run that died, the comment red (`the run did not
    finish`). Before, its mark read "alive", the run was skipped as one still going, and the
    comment was `:white_check_mark:` about the green run before it (found on python-tabulate,
    sixth round)."""
    import time

    from child_pytest import child_env
    from child_pytest import pytest_command

    (tmp_path / "test_die.py").write_text(
        "import os, signal\n\ndef test_a():\n    pass\n\n"
        "def test_b():\n    if os.environ.get('QBENCH_TEST_DIE'):\n"
        "        __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)\n",
        encoding="utf-8",
    )
    green = subprocess.run(
        pytest_command("-p", "no:randomly", run_id="r1"),
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        check=False,
    )
    assert green.returncode == 0, green.stdout
    killed = subprocess.Popen(
        pytest_command("-p", "no:randomly", run_id="r2"),
        cwd=tmp_path,
        env=child_env({"QBENCH_TEST_DIE": "1"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        stat = Path(f"/proc/{killed.pid}/stat")
        for _ in range(6000):  # dead once its state is Z; not reaped: no wait() before the end
            if stat.read_text(encoding="utf-8").rpartition(")")[2].split()[0] == "Z":
                break
            time.sleep(0.05)
        else:
            pytest.fail("the pytest child was not killed")
        out = tmp_path / "comment.md"
        dir_args = ["--dir", str(tmp_path / ".qbench")]
        assert main(["pr-comment", *dir_args, "-o", str(out)]) == 0
        comment = out.read_text(encoding="utf-8")
        assert "run `r2`" in comment and ":x: qbench: the run did not finish" in comment
    finally:
        killed.wait()


def test_a_run_rebuilt_from_a_damaged_stream_is_not_green(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A finished run's stream with a damaged line in the middle (a result lost: a disk fault,
    another writer) rebuilt by `qbench render RUN_DIR`: the report holds one result fewer than
    the run had, so it is incomplete, not green, and says why. Before, it was `✅ 2 passed` for a
    run of 3 tests (the lost one could have failed; found on cachetools, sixth round). A torn
    last line alone is a run that died, red already."""
    pytester.makepyfile(
        test_three="def test_a():\n    pass\n\n\ndef test_b():\n    pass\n\n\ndef test_c():\n    pass\n"
    )
    run = run_qbench("--qbench-run-id=r1", "-p", "no:randomly", run_dir="r1")
    assert run.report.summary.passed == 3
    stream = run.run_dir / "results.jsonl"
    lines = stream.read_text(encoding="utf-8").splitlines(keepends=True)
    damaged = next(i for i, line in enumerate(lines) if '"test_b' in line)
    lines[damaged] = '{"kind":"result","garbage\n'
    stream.write_text("".join(lines), encoding="utf-8")
    (run.run_dir / "report.json").unlink()
    assert main(["render", str(run.run_dir)]) == 0
    report = json.loads((run.run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["passed"] == 2
    errors = report["run"]["recording_errors"]
    assert errors and "not valid records" in errors[0]
    assert not (run.run_dir / "report.md").read_text(encoding="utf-8").startswith("# ✅")


KILL_AT_END = """
import os, signal
import importlib

POINTS = {{
    "indexing": ("pytest_qbench.history.indexer", "_insert_diagnostics"),
    "report.json": ("pytest_qbench.report.store", "write_report_json"),
}}


def pytest_configure(config):
    point = os.environ.get("QBENCH_TEST_KILL_AT")
    if point:
        module, name = POINTS[point]

        def killed(*args, **kwargs):
            __import__('pytest_qbench.report.store').report.store.wait_written(); os.kill(os.getpid(), signal.SIGKILL)

        setattr(importlib.import_module(module), name, killed)
"""


@pytest.mark.parametrize("point", ["indexing", "report.json"])
def test_a_run_killed_at_its_session_end_is_not_green(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    point: str,
) -> None:
    """A run SIGKILLed during its session's end, after its stream's end record: in the middle
    of indexing itself (the transaction rolled back), or after it was indexed, while writing
    report.json. The history's commands and the next run index it as incomplete (its exit
    status unknown), `qbench pr-comment` is not green, `qbench render` rebuilds it incomplete.
    Before, it had taken its mark away before indexing: killed while indexing, it was never
    indexed nor seen (the history went on from the run before); killed after, the index held
    it as a complete run with exit status 0 and pr-comment said ✅ 0 new failures."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    pytester.makeconftest(KILL_AT_END.format())
    run_qbench("--qbench-run-id=r1", "-p", "no:randomly", subprocess=True, run_dir="r1")
    monkeypatch.setenv("QBENCH_TEST_KILL_AT", point)
    killed = pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-run-id=r2", "-p", "no:randomly"
    )
    assert killed.ret < 0 or killed.ret > 1  # killed by SIGKILL
    run_dir = pytester.path / ".qbench/runs/r2"
    assert not (run_dir / "report.json").exists()
    monkeypatch.delenv("QBENCH_TEST_KILL_AT")
    _, runs = qbench_json(capsys, "runs")
    listed = {r["run_id"]: r for r in runs["runs"]}
    assert listed["r2"]["recording_errors"] and listed["r2"]["exit_code"] is None
    capsys.readouterr()
    main(["pr-comment", "r2", "--dir", ".qbench", "--base", "r1"])
    comment = capsys.readouterr().out
    assert ":white_check_mark:" not in comment and ":x:" in comment
    run_qbench("--qbench-run-id=r3", "-p", "no:randomly", subprocess=True, run_dir="r3")
    assert main(["render", str(run_dir)]) == 0
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["exit_code"] is None
    assert "died during its session's end" in report["run"]["recording_errors"][0]
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert not markdown.startswith("# ✅")
    assert "Fix: find what killed or damaged it in the CI job's log" in markdown
    assert "report it as a bug in qbench" not in markdown


def test_a_torn_report_json_names_the_rebuild(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run directory whose report.json is cut short (a disk fault, a copy that stopped) but
    whose stream is whole: `qbench index` skips it, exits 1, and names the fix, `qbench render
    RUN_DIR`, which rebuilds it from the stream, after which it is indexed. Before, the message
    said only that the file is not a qbench report."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    run = run_qbench("--qbench-run-id=r1", "-p", "no:randomly", run_dir="r1")
    report = run.run_dir / "report.json"
    report.write_bytes(report.read_bytes()[:200])
    (pytester.path / ".qbench/index.sqlite").unlink()
    capsys.readouterr()
    assert main(["index", "--dir", ".qbench"]) == 1
    err = capsys.readouterr().err
    assert "is not a qbench report" in err
    assert "'qbench render .qbench/runs/r1' rebuilds it from its results.jsonl" in err
    assert main(["render", str(run.run_dir)]) == 0
    assert main(["index", "--dir", ".qbench"]) == 0


TORN_END = """
import os, signal
from pytest_qbench.report import store


def torn(self, record):
    self.flush()  # the results that wait before it (issue 28: the stream's writes are batched)
    data = store.dumps(record).encode()
    os.write(self._fd, data[: len(data) // 2])
    os.kill(os.getpid(), signal.SIGKILL)


if os.environ.get("QBENCH_TEST_TEAR_END"):
    store.StreamWriter.write_end = torn
"""


def test_a_run_killed_while_writing_its_end_record_died(
    pytester: pytest.Pytester,
    run_qbench: RunQBench,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run SIGKILLed in the middle of writing its stream's end record, where its unfinished
    mark could not be made (``.qbench/unfinished`` is a file): its stream ends with half an end
    record. `qbench runs` indexes it as a run that died (interrupted, not green). Before, the
    torn line was taken for the end: the run was neither died nor indexed, and the history went
    on from the run before as the last one."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    pytester.makeconftest(TORN_END)
    run_qbench("--qbench-run-id=r1", "-p", "no:randomly", subprocess=True, run_dir="r1")
    unfinished = pytester.path / ".qbench/unfinished"
    unfinished.rmdir()
    unfinished.write_text("not a directory\n", encoding="utf-8")
    monkeypatch.setenv("QBENCH_TEST_TEAR_END", "1")
    killed = pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-run-id=r2", "-p", "no:randomly"
    )
    assert killed.ret < 0 or killed.ret > 1  # killed by SIGKILL
    stream = pytester.path / ".qbench/runs/r2/results.jsonl"
    assert stream.read_bytes().rsplit(b"\n", 1)[1].startswith(b'{"kind":"end"')
    _, runs = qbench_json(capsys, "runs")
    listed = {r["run_id"]: r for r in runs["runs"]}
    assert listed["r2"]["interrupted"] is True


def test_render_refuses_a_run_still_going(
    pytester: pytest.Pytester, run_qbench: RunQBench, capsys: pytest.CaptureFixture[str]
) -> None:
    """`qbench render RUN_DIR` on the directory of a run still going (here, its mark names
    this process, which runs): refused with the fix, nothing written nor indexed; `-o FILE`
    renders what it streamed so far. Before, it wrote an interrupted report.json into the live
    run's directory and indexed the run as interrupted until the run ended."""
    from pytest_qbench.report import store

    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    run = run_qbench("--qbench-run-id=r1", "-p", "no:randomly", run_dir="r1")
    (run.run_dir / "report.json").unlink()
    assert store.mark_unfinished(pytester.path / ".qbench", "r1")
    capsys.readouterr()
    assert main(["render", str(run.run_dir)]) == 1
    err = capsys.readouterr().err
    assert "its run is still going, and writes its reports when it ends" in err
    assert not (run.run_dir / "report.json").exists()
    assert main(["render", str(run.run_dir), "-o", "now.md"]) == 0
    assert (pytester.path / "now.md").is_file()
    store.unmark_unfinished(pytester.path / ".qbench", "r1")
    assert main(["render", str(run.run_dir)]) == 0
    assert (run.run_dir / "report.json").is_file()


def test_a_run_that_cannot_mark_itself_unfinished_says_so(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """`.qbench/unfinished` is a file: the run cannot leave its mark, so a kill at its
    session's end would pass unseen; the terminal says so and names the fix, the exit status is
    pytest's own. Before, nothing was said."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    run_qbench("--qbench-run-id=r1", "-p", "no:randomly", run_dir="r1")
    unfinished = pytester.path / ".qbench/unfinished"
    unfinished.rmdir()
    unfinished.write_text("x\n", encoding="utf-8")
    run = run_qbench("--qbench-run-id=r2", "-p", "no:randomly", run_dir="r2")
    assert run.result.ret == 0
    run.result.stdout.fnmatch_lines(
        ["qbench: could not mark this run unfinished in */unfinished (a file in its place*"]
    )


def test_the_mcp_list_runs_says_a_run_killed_at_its_session_end_is_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed while it indexed itself at its session's end, listed by the MCP server's
    ``list_runs`` through the SDK's client: its ``recording_errors`` are not 0 and its text line
    says ``(incomplete)``. Before, it was not listed at all (never indexed); with the index
    fixed alone, it read ``2 passed``, not interrupted, with nothing saying it was
    incomplete."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp_helpers import structured

    from pytest_qbench.mcp.server import build_server

    root = tmp_path / "project"
    root.mkdir()
    (root / "test_ok.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
    (root / "conftest.py").write_text(KILL_AT_END.format(), encoding="utf-8")
    config = _r1_then_dying_r2(root, {"QBENCH_TEST_KILL_AT": "indexing"}, monkeypatch)

    async def main() -> tuple[dict[str, Any], str]:
        async with Client(build_server(config), raise_exceptions=True) as client:
            result = await client.call_tool("list_runs", {"limit": 5})
            text = " ".join(getattr(part, "text", "") for part in result.content)
            return structured(result), text

    listed, text = anyio.run(main)
    runs = {r["run_id"]: r for r in listed["runs"]}
    assert runs["r2"]["recording_errors"] > 0 and runs["r2"]["exit_code"] is None
    assert runs["r1"]["recording_errors"] == 0
    assert "(incomplete)" in text


def _r1_then_dying_r2(
    root: Path, dying: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> ServerConfig:
    """Run pytest in ``root`` twice, as a terminal does, outside any MCP server: ``r1``, then
    ``r2`` with ``dying`` in its environment (it is killed, and writes no report.json); the
    server's configuration for ``root``."""
    from child_pytest import child_env
    from child_pytest import pytest_command

    from pytest_qbench.mcp.config import ServerConfig

    for run_id, extra in (("r1", {}), ("r2", dying)):
        subprocess.run(
            pytest_command("-p", "no:randomly", run_id=run_id),
            cwd=root,
            env=child_env(extra),
            capture_output=True,
            check=False,
        )
    assert not (root / ".qbench/runs/r2/report.json").exists()
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=1.0)


@pytest.mark.parametrize(
    ("how", "backend"),
    [("killed-at-end", "sqlite"), ("unrecorded", "sqlite"), ("killed-at-end", "postgresql")],
)
def test_a_second_render_of_a_run_that_died_at_its_end_reads_it_as_the_first(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    how: str,
    backend: str,
) -> None:
    """A run SIGKILLed while writing report.json (its mark stays), or one whose stream lost its
    start record (died unrecorded), rendered twice by `qbench render RUN_DIR`: the second
    report is the first's (incomplete, exit status unknown, the same reason and start), and the
    history's `qbench runs` still lists it incomplete. Before, the first render's report.json
    and the mark's removal hid the death: the second rebuilt `# ✅ Test report: 2 passed`,
    exit code 0, and re-indexed it complete (killed at its end), or refused the stream as
    "not a qbench result stream" (unrecorded)."""
    pytester.makepyfile(test_ok="def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    pytester.makeconftest(KILL_AT_END.format())
    if backend == "postgresql":  # the run, the renders and `qbench runs` all index there
        monkeypatch.setenv("QBENCH_DB", request.getfixturevalue("postgres_server").new_database())
    monkeypatch.setenv("QBENCH_TEST_KILL_AT", "report.json")
    killed = pytester.runpytest_subprocess(
        "-p", "qbench", "--qbench-run-id=r2", "-p", "no:randomly"
    )
    assert killed.ret < 0 or killed.ret > 1  # killed by SIGKILL
    monkeypatch.delenv("QBENCH_TEST_KILL_AT")
    run_dir = pytester.path / ".qbench/runs/r2"
    if how == "unrecorded":
        (run_dir / "results.jsonl").write_bytes(b"")
    rendered = []
    for _ in range(2):
        assert main(["render", str(run_dir)]) == 0
        report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
        rendered.append(
            (
                report["run"]["recording_errors"],
                report["run"]["exit_code"],
                report["run"]["started_at"],
                report["summary"]["total"],
            )
        )
        markdown = (run_dir / "report.md").read_text(encoding="utf-8")
        assert markdown.startswith("# ❌ Test report incomplete")
    assert rendered[0] == rendered[1]
    errors, exit_code, _, _ = rendered[1]
    assert errors and exit_code is None
    word = "died during its session's end" if how == "killed-at-end" else "no start record"
    assert word in errors[0]
    _, runs = qbench_json(capsys, "runs")
    listed = {r["run_id"]: r for r in runs["runs"]}
    assert listed["r2"]["recording_errors"] and listed["r2"]["exit_code"] is None
    assert (pytester.path / ".qbench/index.sqlite").exists() is (backend == "sqlite")


def test_a_render_that_cannot_keep_how_the_run_died_writes_nothing(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run killed while writing report.json, rendered where the run directory refuses the
    note of how it died (a full disk): `qbench render` fails, names why, and writes no
    report.json, which a second render would otherwise read as a complete run."""
    from pytest_qbench.core import atomic
    from pytest_qbench.report import store

    pytester.makepyfile(test_ok="def test_a():\n    pass\n")
    pytester.makeconftest(KILL_AT_END.format())
    monkeypatch.setenv("QBENCH_TEST_KILL_AT", "report.json")
    pytester.runpytest_subprocess("-p", "qbench", "--qbench-run-id=r2", "-p", "no:randomly")
    monkeypatch.delenv("QBENCH_TEST_KILL_AT")
    run_dir = pytester.path / ".qbench/runs/r2"

    def refused(path: object, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "write_text_atomic", refused)
    capsys.readouterr()
    assert main(["render", str(run_dir)]) != 0
    err = capsys.readouterr().err
    assert "cannot write" in err and "died-at-end.txt: No space left on device" in err
    assert not (run_dir / "report.json").exists()
    assert store.killed_at_end(run_dir)  # its mark still says so


def test_a_run_that_died_with_results_unwritten_names_no_qbench_bug(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose process a `conftest.py` ends with `os._exit(0)` in a test's teardown, the
    results of the tests before still in the stream's batch (its 0.1 s not yet up): the
    rebuilt report is incomplete, never green, and its fix says to find what killed the run,
    as for a run killed at its end. Before, it told the user to fix a pytest_qbench_* hook or
    report a bug in qbench (found on a conftest with `os._exit`, twelfth round). The stream is
    cut back to its start record after the run, so that the results are lost whatever the
    machine's speed; the phase mark counts them as the run made them."""
    pytester.makeconftest(
        "import os\n\n\ndef pytest_runtest_teardown(item):\n"
        "    if item.name == 'test_c':\n        os._exit(0)\n"
    )
    pytester.makepyfile(
        test_x="def test_a():\n    pass\n\n\ndef test_b():\n    assert 0\n\n\n"
        "def test_c():\n    pass\n"
    )
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly")
    assert result.ret == 0  # os._exit(0): pytest's own status says nothing failed
    run_dir = next((pytester.path / ".qbench/runs").iterdir())
    stream = run_dir / "results.jsonl"
    stream.write_text(stream.read_text(encoding="utf-8").splitlines(True)[0], encoding="utf-8")
    assert main(["render", str(run_dir)]) == 0
    capsys.readouterr()
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert "2 test(s) finished without a result" in report["run"]["recording_errors"][0]
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert not markdown.startswith("# ✅")
    assert "Fix: find what killed or damaged it in the CI job's log" in markdown
    assert "report it as a bug in qbench" not in markdown
    assert main(["pr-comment", "--dir", ".qbench"]) == 0
    comment = capsys.readouterr().out
    assert ":white_check_mark:" not in comment
    assert "qbench could not record the run (1 recording error" in comment
    assert "internal error" not in comment  # a killed process, not a bug of qbench's
