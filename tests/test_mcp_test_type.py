"""``run_test_workflow``'s ``test_type`` and ``qbench test --runner all`` on a project with a
Python package and a TypeScript front end (issue 22): one answer holding the failing pytest
test and the failing vitest test, each naming its runner, through a real MCP client."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import quiet_children
from node_tools import link_tools
from node_tools import qbench_test


pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp.types import CallToolResult

from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.server import build_server
from pytest_qbench.report.models import TestReport


pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.xdist_group("js_runners"),
]

PY_TEST = "def test_total():\n    assert sum([1, 2]) == 4\n"
TS_TEST = """\
import { describe, it, expect } from 'vitest'

describe('price', () => {
  it('rounds', () => {
    expect(Math.round(2.5)).toBe(2)
  })
  it('adds', () => { expect(1 + 2).toBe(3) })
})
"""


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet_children(monkeypatch)


@pytest.fixture
def project(tmp_path: Path, node_tools: Path) -> Path:
    """A Python package's tests beside a ``web/`` front end tested with vitest."""
    return make_project(tmp_path / "project", node_tools)


def make_project(root: Path, node_tools: Path) -> Path:
    """`project` at ``root`` (made, resolved)."""
    root = root.resolve()
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_calc.py").write_text(PY_TEST)
    web = root / "web"
    (web / "src").mkdir(parents=True)
    manifest = {"name": "web", "private": True, "devDependencies": {"vitest": "3.2.4"}}
    (web / "package.json").write_text(json.dumps(manifest))
    (web / "src" / "price.test.ts").write_text(TS_TEST)
    link_tools(web, node_tools)
    return root


def call(root: Path, arguments: dict[str, Any]) -> CallToolResult:
    config = ServerConfig(root=root, qbench_dir=root / ".qbench", stop_grace=2.0)

    async def main() -> CallToolResult:
        async with Client(build_server(config), raise_exceptions=True) as client:
            return await client.call_tool("run_test_workflow", arguments)

    result: CallToolResult = anyio.run(main)
    return result


def stored(root: Path) -> list[TestReport]:
    runs = sorted((root / ".qbench" / "runs").iterdir())
    return [TestReport.model_validate_json((r / "report.json").read_bytes()) for r in runs]


def test_default_runs_every_runner_that_applies(project: Path) -> None:
    """No test_type: pytest and vitest both run; one answer with both failures at their lines,
    each naming its runner; the stored run holds both."""
    result = call(project, {})
    assert not result.is_error, result
    content = result.structured_content
    assert content is not None
    assert content["success"] is False
    assert (content["summary"]["failed"], content["summary"]["passed"]) == (2, 1)
    found = {(f["runner"], f["test_name"], f["file"], f["line"]) for f in content["failures"]}
    assert found == {
        ("pytest", "tests/test_calc.py::test_total", "tests/test_calc.py", 2),
        ("vitest", "web/src/price.test.ts > price > rounds", "web/src/price.test.ts", 5),
    }
    [report] = stored(project)
    assert {r.runner for r in report.results} == {"pytest", "vitest"}
    text = result.content[0].text  # type: ignore[union-attr]
    assert "vitest web/src/price.test.ts > price > rounds" in text
    assert content["tool"] == "pytest+vitest"  # the counts are both runners' (pytest's line: 1)
    assert text.startswith("FAILED: 2 failed, 1 passed (pytest and vitest together) in "), text


LATER = "import { it } from 'vitest'\n\nit.todo('later')\n"
"""A vitest file whose one test is a todo."""


@pytest.fixture(scope="module")
def vitest_only(
    tmp_path_factory: pytest.TempPathFactory, node_tools: Path
) -> tuple[Path, CallToolResult]:
    """`project` with a todo test beside vitest's failing and passing ones, and one
    ``test_type`` vitest call's answer on it, read by the two tests below (one vitest run)."""
    root = make_project(tmp_path_factory.mktemp("vitest-only") / "project", node_tools)
    (root / "web" / "src" / "later.test.ts").write_text(LATER)
    with pytest.MonkeyPatch.context() as monkeypatch:
        quiet_children(monkeypatch)
        return root, call(root, {"test_type": "vitest"})


def test_vitest_alone_starts_no_pytest(vitest_only: tuple[Path, CallToolResult]) -> None:
    """test_type vitest: only vitest's results, in a stored run; a pytest-only argument is
    refused, not ignored."""
    project, result = vitest_only
    content = result.structured_content
    assert content is not None
    assert [f["runner"] for f in content["failures"]] == ["vitest"]
    assert content["summary"]["total"] == 3 and content["success"] is False
    [report] = stored(project)
    assert {r.runner for r in report.results} == {"vitest"}
    refused = call(project, {"test_type": "vitest", "keyword": "total"})
    assert refused.is_error
    assert "keyword" in refused.content[0].text  # type: ignore[union-attr]
    assert len(stored(project)) == 1


def test_vitest_todo_is_in_the_answers_counts(vitest_only: tuple[Path, CallToolResult]) -> None:
    """A vitest todo test is in the answer's counts as in vitest's line (``1 todo``): its
    summary's total said 3 beside 1 failed and 1 passed, with no word for the third."""
    _, result = vitest_only
    content = result.structured_content
    assert content is not None
    summary = content["summary"]
    assert (summary["total"], summary["failed"], summary["passed"]) == (3, 1, 1)
    assert summary["other"] == {"todo": 1}
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("FAILED: 1 failed, 1 passed, 1 todo in "), text


def test_qbench_test_runner_all_is_one_run(project: Path) -> None:
    """``qbench test --runner all``: one run, one report.json with the Python and the
    TypeScript failures, exit status 1."""
    done, report, _ = qbench_test(project, "--runner", "all")
    assert done.returncode == 1, done.stdout + done.stderr
    failed = {(r.runner, r.nodeid) for r in report.results if r.outcome == "failed"}
    assert failed == {
        ("pytest", "tests/test_calc.py::test_total"),
        ("vitest", "web/src/price.test.ts > price > rounds"),
    }
    assert report.summary.failed == 2 and report.run.tool == "pytest+vitest"
    assert "FAILED [vitest] web/src/price.test.ts > price > rounds" in done.stdout


SLOW_TS_TEST = """\
import { it } from 'vitest'
import { writeFileSync } from 'node:fs'

it('waits', async () => {
  writeFileSync(process.env.QBENCH_TEST_PIDS as string, String(process.pid))
  await new Promise((done) => setTimeout(done, 60000))
}, 120000)
"""


def test_cancelling_stops_vitest_after_pytest(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that cancels while vitest runs (pytest already done) stops vitest: its
    process is gone, the slot is free, and the stored run never calls the stopped test
    passed (before, the cancellation waited for vitest to finish)."""
    (project / "web" / "src" / "price.test.ts").write_text(SLOW_TS_TEST)
    pids = project / "pids.txt"
    monkeypatch.setenv("QBENCH_TEST_PIDS", str(pids))
    config = ServerConfig(root=project, qbench_dir=project / ".qbench", stop_grace=2.0)

    async def main() -> dict[str, Any]:
        async with Client(build_server(config), raise_exceptions=True) as client:
            async with anyio.create_task_group() as group:
                scope = anyio.CancelScope()

                async def run() -> None:
                    with scope:
                        await client.call_tool("run_test_workflow", {})

                group.start_soon(run)
                with anyio.fail_after(300):  # a safety net: vitest starts in seconds
                    while not pids.exists() or not pids.read_text():
                        await anyio.sleep(0.05)
                scope.cancel()
            with anyio.fail_after(600):  # the thread ends once vitest's tree is killed
                while True:
                    health = await client.call_tool("check_health", {})
                    content: dict[str, Any] | None = health.structured_content
                    assert content is not None
                    if content["run_in_progress"] is None:
                        return content
                    await anyio.sleep(0.1)

    anyio.run(main)
    stat = Path(f"/proc/{pids.read_text()}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    [report] = stored(project)
    assert ("pytest", "failed") in {(r.runner, r.outcome) for r in report.results}
    assert not any(r.runner == "vitest" and r.outcome == "passed" for r in report.results)
    assert any("vitest" in e.message and "cancelled" in e.message for e in report.collection_errors)
    assert report.run.exit_code == 1


def test_the_runs_timeout_bounds_pytest_and_vitest_together(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``timeout_seconds`` bounds the whole run: vitest, after pytest, gets what is left of
    it, not the whole timeout again. The server's clock is a fake one: 0 when the run starts,
    599 when pytest has ended, so vitest gets 600 - 599 = 1 s exactly, however long pytest
    really took. (Its test waits 60 s: stopped at 1 s, before or after it started, the note is
    the same; given the whole 600 s again, vitest would pass it after 60 s, with no note.)"""
    import types

    from pytest_qbench.mcp import other_runners
    from pytest_qbench.mcp import server

    monkeypatch.setattr(server, "time", types.SimpleNamespace(monotonic=lambda: 0.0))
    monkeypatch.setattr(other_runners, "time", types.SimpleNamespace(monotonic=lambda: 599.0))
    (project / "web" / "src" / "price.test.ts").write_text(
        SLOW_TS_TEST.replace("process.env.QBENCH_TEST_PIDS as string", "'pids.txt'")
    )
    result = call(project, {"timeout_seconds": 600})
    assert not result.is_error, result
    [report] = stored(project)
    [stopped] = [e.message for e in report.collection_errors if "vitest" in e.message]
    found = re.search(r"did not finish in ([\d.]+) s", stopped)
    assert found is not None, stopped
    assert float(found[1]) == 1
    assert report.run.exit_code == 1


def vitest_front_end(web: Path, script: str, node_tools: Path) -> Path:
    """A front end at ``web`` (made, resolved) whose ``test`` script is ``script``, with one
    passing vitest test and the cached runners."""
    web = web.resolve()
    (web / "src").mkdir(parents=True)
    manifest = {"name": "web", "scripts": {"test": script}, "devDependencies": {"vitest": "3.2.4"}}
    (web / "package.json").write_text(json.dumps(manifest))
    (web / "src" / "add.test.ts").write_text(
        "import { it, expect } from 'vitest'\nit('adds', () => { expect(1 + 2).toBe(3) })\n"
    )
    link_tools(web, node_tools)
    return web


@pytest.mark.parametrize(("test_type", "success"), [("all", False), ("vitest", True)])
def test_a_test_script_part_not_run_fails_all(
    tmp_path: Path, node_tools: Path, test_type: str, success: bool
) -> None:
    """A front end whose ``"test": "vitest run && tstyche --target 5.9"``: test_type ``all`` runs its
    vitest part only, so the run is not called a success (main: success, nothing said); test_type
    ``vitest`` is vitest's run, as asked, its note in the stored run's warnings."""
    web = vitest_front_end(
        tmp_path / "project" / "web", "vitest run && tstyche --target 5.9", node_tools
    )
    content = call(web.parent, {"test_type": test_type}).structured_content
    assert content is not None
    assert (content["success"], content["summary"]["passed"]) == (success, 1), content
    [report] = stored(web.parent)
    said = [
        d
        for d in [*report.collection_errors, *report.warnings]
        if "`tstyche --target 5.9`" in d.message
    ]
    assert [(d.code, d.severity) for d in said] == [
        ("script-part-not-run", "info" if success else "error")
    ]


def test_a_node_test_part_is_run_through_mcp(tmp_path: Path, node_tools: Path) -> None:
    """A front end whose ``"test": "vitest run && node --test test/"``: test_type ``all`` runs
    both, the node test's failure in the answer and the stored run, named ``node`` (main: the
    node part not run, `script-part-not-run`, no node test)."""
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    web = vitest_front_end(tmp_path / "web", "vitest run src && node --test test/", node_tools)
    (web / "test").mkdir()
    (web / "test" / "n.test.js").write_text(
        "const test = require('node:test')\nconst assert = require('node:assert')\n"
        "test('node part', () => {\n  assert.equal(1, 2)\n})\n"
    )
    content = call(web, {"test_type": "all"}).structured_content
    assert content is not None
    assert (content["success"], content["summary"]["passed"]) == (False, 1), content
    assert content["summary"]["failed"] == 1, content
    [report] = stored(web)
    assert [(r.runner, r.nodeid, r.outcome) for r in report.results] == [
        ("vitest", "src/add.test.ts > adds", "passed"),
        ("node", "test/n.test.js > node part", "failed"),
    ]
    assert report.collection_errors == []
