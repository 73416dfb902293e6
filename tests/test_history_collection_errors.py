"""Collection errors in the history index: a module failing to import is a result of outcome
``error`` under the collector's node id, so ``qbench diff`` and ``pr-comment`` name a new one
(and a fixed one), and a run with only collection errors is indexed and listed by ``qbench
runs``, ``show`` and MCP's ``list_runs``. Real pytest runs in subprocesses, the real CLI, a real
SQLite file, a real MCP client over stdio."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from child_pytest import run_child
from mcp_helpers import mcp_call

from pytest_qbench.cli import main


pytestmark = [
    pytest.mark.runs_pytest,  # pytest with qbench, in subprocesses
    pytest.mark.xdist_group("test_history_collection_errors"),  # one worker makes `project`
]

GOOD = "def test_{name}():\n    assert True\n"
BROKEN = "import no_such_module_{name}\n\ndef test_{name}():\n    assert True\n"


def run_pytest(root: Path, run_id: str, broken: set[str], *args: str) -> int:
    """Run the two modules, those in ``broken`` failing to import; pytest's exit status."""
    for name in ("a", "b"):
        text = BROKEN if name in broken else GOOD
        (root / f"test_{name}.py").write_text(text.format(name=name))
    done = run_child(root, *args, run_id=run_id)
    return done.returncode


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Green, then b failing to import (the other module still run), then both failing, then
    green again, then b failing to import (so pytest runs nothing)."""
    root = tmp_path_factory.mktemp("collerr").resolve()
    (root / "pytest.ini").write_text("[pytest]\n")
    assert run_pytest(root, "green", set()) == 0
    assert run_pytest(root, "one", {"b"}, "--continue-on-collection-errors") == 1
    assert run_pytest(root, "all", {"a", "b"}) == 2
    assert run_pytest(root, "fixed", set()) == 0
    assert run_pytest(root, "stopped", {"b"}) == 2  # pytest stops: test_a.py collected, not run
    return root


def qbench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``qbench ARGS`` in process (in the current directory): exit status and output."""
    capsys.readouterr()
    status = main(list(args))
    return status, capsys.readouterr().out


def test_diff_names_a_new_and_a_fixed_collection_error(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    status, diff = qbench(capsys, "diff", "green", "one")
    assert status == 1, diff
    new = diff.split("New failures (1):\n", 1)[1]
    assert new.startswith(
        "  test_b.py  ModuleNotFoundError at test_b.py:1: No module named 'no_such_module_b'"
    ), diff
    # test_b.py::test_b was not collected in "one": neither removed, nor new when it is back
    assert "Removed tests" not in diff and "New tests" not in diff, diff

    status, diff = qbench(capsys, "diff", "all", "fixed")
    assert status == 0, diff
    fixed = diff.split("Fixed (2):\n", 1)[1].splitlines()[:2]
    assert [line.split() for line in fixed] == [
        ["test_a.py", "error", "->", "collected"],
        ["test_b.py", "error", "->", "collected"],
    ], diff
    assert "Removed tests" not in diff and "New tests" not in diff, diff

    status, diff = qbench(capsys, "diff", "fixed", "stopped")
    assert status == 1 and "  test_b.py  ModuleNotFoundError" in diff, diff
    # pytest ran no test of test_a.py, which it collected: not a removed test
    assert "Removed tests" not in diff and "test_a.py::test_a" not in diff, diff
    assert "B  ran 0 tests of 1 file, deselected 0 (pytest stopped at collection errors" in diff

    data = json.loads(qbench(capsys, "diff", "green", "all", "--json")[1])
    assert sorted(f["nodeid"] for f in data["new_failures"]) == ["test_a.py", "test_b.py"]


def test_pr_comment_lists_the_collection_error(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    _status, comment = qbench(capsys, "pr-comment", "one", "--base", "green")
    assert "1 new failure" in comment, comment
    assert "- `test_b.py` ModuleNotFoundError at test\\_b.py:1: No module named" in comment


def test_a_run_with_only_collection_errors_is_indexed(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    _status, listed = qbench(capsys, "runs")
    rows = {line.split()[0]: line for line in listed.splitlines()[1:5]}
    assert "0 tests: 2 errors  " in rows["all"], listed
    assert rows["all"].split()[-2] == "2", rows["all"]  # pytest's exit status
    _status, shown = qbench(capsys, "show", "all")
    assert "tests     0: 2 errors\n" in shown, shown

    with sqlite3.connect(project / ".qbench" / "index.sqlite") as db:
        rows_of_all = db.execute(
            "SELECT t.nodeid, r.outcome FROM results r JOIN tests t ON t.id = r.test_ref"
            " JOIN runs u ON u.id = r.run_ref WHERE u.run_id = 'all' ORDER BY t.nodeid"
        ).fetchall()
    assert rows_of_all == [("test_a.py", "error"), ("test_b.py", "error")]


def test_flaky_never_calls_a_module_flaky(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A collector never passes, so it is never flaky: test_b.py failed to import in two runs
    in a row, which ``qbench flaky`` calls broken, as it does a test failing twice in a row."""
    monkeypatch.chdir(project)
    _status, out = qbench(capsys, "flaky", "--json")
    labels = {t["nodeid"]: t["status"] for t in json.loads(out)["tests"]}
    assert labels == {"test_b.py": "broken"}, out


def test_list_runs_over_mcp_shows_the_run(project: Path) -> None:
    pytest.importorskip("mcp")
    result = mcp_call(project, "list_runs", {"limit": 5})
    ids = [r["run_id"] for r in result.structured_content["runs"]]
    assert ids == ["stopped", "fixed", "all", "one", "green"], ids
    line = next(x for x in result.content[0].text.splitlines() if x.startswith("all  "))
    assert "2 errors" in line, line


@pytest.fixture
def broken_copy(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the project's index to break, as the current directory."""
    shutil.copytree(
        project / ".qbench", tmp_path / ".qbench", ignore=shutil.ignore_patterns("runs")
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path / ".qbench" / "index.sqlite"


def set_outcome(index: Path, run_id: str, nodeid: str, outcome: str) -> None:
    """Write ``outcome`` into the index row of ``nodeid`` in ``run_id``, as a damaged or foreign
    index could hold it."""
    with sqlite3.connect(index) as db:
        changed = db.execute(
            "UPDATE results SET outcome = ? WHERE run_ref = (SELECT id FROM runs WHERE run_id = ?)"
            " AND test_ref = (SELECT id FROM tests WHERE nodeid = ?)",
            (outcome, run_id, nodeid),
        ).rowcount
    assert changed == 1


@pytest.mark.parametrize(
    ("base", "head", "run_id"),
    [("green", "one", "one"), ("one", "fixed", "one")],
    ids=["new-error", "fixed-error"],
)
def test_diff_fails_closed_on_a_collection_error_it_cannot_read(
    broken_copy: Path,
    capsys: pytest.CaptureFixture[str],
    base: str,
    head: str,
    run_id: str,
) -> None:
    """A collection error whose row holds no outcome qbench knows: whether it is new or fixed
    cannot be decided, so the diff fails (status 1) and names the error, never a pass."""
    set_outcome(broken_copy, run_id, "test_b.py", "ERROR")
    capsys.readouterr()
    status = main(["diff", base, head])
    out, err = capsys.readouterr()
    assert status == 1, out
    assert "qbench: error: " in err and "'ERROR'" in err and "test_b.py" in err, err


def test_diff_fails_closed_when_the_index_cannot_be_read(
    broken_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The results of the runs cannot be read: the diff fails and names why."""
    with sqlite3.connect(broken_copy) as db:
        db.execute("ALTER TABLE results RENAME TO results_gone")
    capsys.readouterr()
    status = main(["diff", "green", "one"])
    out, err = capsys.readouterr()
    assert status == 1, out
    assert err.startswith("qbench: ") and "results" in err, err
