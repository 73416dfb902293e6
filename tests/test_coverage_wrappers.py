"""Coverage wrappers around a runner in a package's ``test`` script (``c8 node --test``,
``c8 vitest run``, ``nyc jest``): qbench runs the runner inside, with a note that the wrapper
was not run; a wrapper checking a coverage threshold (``c8 --100``, ``--check-coverage``, its
configuration) refuses the runner, never a green run beside a threshold unchecked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from node_tools import link_tools
from node_tools import qbench_test

from pytest_qbench.tools.js import coverage_wrap


pytestmark = [pytest.mark.engine, pytest.mark.xdist_group("js_runners")]

NODE_TEST = "const test = require('node:test')\ntest('passes', () => {})\n"
VITEST_TEST = "import { it, expect } from 'vitest'\nit('adds', () => { expect(1 + 2).toBe(3) })\n"


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    ("words", "wrapper", "inner"),
    [
        (["c8", "node", "--test"], ["c8"], ["node", "--test"]),
        (
            ["npx", "c8", "-r", "lcov", "--all", "vitest", "run"],
            ["c8", "-r", "lcov", "--all"],
            ["vitest", "run"],
        ),
        (["A=1", "nyc", "--check-coverage", "jest"], ["nyc", "--check-coverage"], ["A=1", "jest"]),
        (["c8", "check-coverage", "--lines", "90"], [], ["c8", "check-coverage", "--lines", "90"]),
        (["node", "--test"], [], ["node", "--test"]),
    ],
)
def test_a_wrapper_is_told_from_the_command_it_runs(
    words: list[str], wrapper: list[str], inner: list[str]
) -> None:
    assert coverage_wrap.unwrap(words) == (wrapper, inner)


@pytest.mark.parametrize(
    ("wrapper", "files", "why"),
    [
        (["c8"], {}, None),
        (["c8", "-r", "lcov"], {".c8rc.json": {"reporter": ["lcov"]}}, None),
        (["c8", "--100"], {}, "its option --100"),
        (["nyc", "--lines=90"], {}, "its option --lines=90"),
        (
            ["c8"],
            {".c8rc.json": {"check-coverage": True}},
            "its configuration .c8rc.json (check-coverage)",
        ),
        (["nyc"], {"package.json": {"nyc": {"branches": 80}}}, "package.json's 'nyc' (branches)"),
        (
            ["nyc"],
            {"nyc.config.js": "module.exports = {}"},
            "nyc.config.js, which qbench does not read",
        ),
    ],
)
def test_a_wrappers_threshold_is_found_in_its_options_or_configuration(
    tmp_path: Path, wrapper: list[str], files: dict[str, Any], why: str | None
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_text(content if isinstance(content, str) else json.dumps(content))
    found = coverage_wrap.threshold(wrapper, tmp_path)
    assert found == why or (why is not None and found is not None and why in found), found


def node_package(tmp_path: Path, script: str) -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    write_json(tmp_path / "package.json", {"name": "n", "scripts": {"test": script}})
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.js").write_text(NODE_TEST)
    return tmp_path


def test_c8_node_test_runs_node_test_with_a_note(tmp_path: Path) -> None:
    """``"test": "c8 node --test test/"``: Node's tests run in the run, and a note says c8 was
    not run and checks no threshold (main: not run, `script-part-not-run`, exit 1)."""
    done, report, _ = qbench_test(node_package(tmp_path, "c8 -r lcov node --test test/"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(r.nodeid, r.outcome) for r in report.results] == [
        ("test/a.test.js > passes", "passed")
    ]
    assert [w.code for w in report.warnings] == ["coverage-wrapper-not-run"]
    assert "NOTE node: " in done.stdout and "`c8 -r lcov`" in done.stdout


def test_c8_with_a_threshold_refuses_node_test(tmp_path: Path) -> None:
    """``"test": "c8 --100 node --test test/"``: the threshold decides ``npm test``, qbench
    cannot check it: refused, naming ``--100`` (main: `script-part-not-run`)."""
    done, report, _ = qbench_test(node_package(tmp_path, "c8 --100 node --test test/"))
    assert done.returncode == 1
    assert report.results == []
    [error] = report.collection_errors
    assert error.code == "runner-options-refused" and "its option --100" in error.message


def vitest_package(tmp_path: Path, tools: Path, script: str) -> Path:
    write_json(
        tmp_path / "package.json",
        {
            "name": "web",
            "type": "module",
            "scripts": {"test": script},
            "devDependencies": {"vitest": "3.2.4"},
        },
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "add.test.js").write_text(VITEST_TEST)
    link_tools(tmp_path, tools)
    return tmp_path


@pytest.mark.parametrize(
    ("script", "config", "status"),
    [
        ("c8 vitest run", None, 0),
        ("c8 --check-coverage --lines 100 vitest run", None, 1),
        ("c8 vitest run", {"100": True}, 1),
    ],
)
def test_c8_around_vitest_runs_it_or_refuses_it_by_its_threshold(
    node_tools: Path, tmp_path: Path, script: str, config: dict[str, Any] | None, status: int
) -> None:
    """``c8 vitest run``: vitest runs, with a note; with a threshold (an option, or
    ``.c8rc.json``) vitest is refused, the run red (main: green either way, the wrapper and
    its threshold unread)."""
    web = vitest_package(tmp_path, node_tools, script)
    if config is not None:
        write_json(web / ".c8rc.json", config)
    done, report, _ = qbench_test(web)
    assert done.returncode == status, done.stdout + done.stderr
    if status == 0:
        assert [r.outcome for r in report.results] == ["passed"]
        assert [w.code for w in report.warnings] == ["coverage-wrapper-not-run"]
        return
    assert report.results == []
    assert [e.code for e in report.collection_errors] == ["runner-options-refused"]
    assert "coverage threshold" in report.collection_errors[0].message
