"""The front end's checkers (issue 22): the real tsc and eslint, installed from the npm registry
into a cached directory (``node_tools``), run by ``qbench check`` on a project with a Python back
end and a TypeScript front end in ``web/``; their errors at their files, lines and columns."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from child_pytest import run_child
from node_tools import JS_ERROR
from node_tools import LEAN
from node_tools import frontend_project
from node_tools import node_modules
from node_tools import qbench_check

from pytest_qbench.tools.node.tsc import has_references
from pytest_qbench.tools.node.tsc import parse_tsc


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python package at the root, a TypeScript front end in ``web/``."""
    root = tmp_path_factory.mktemp("fullstack")
    (root / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n')
    (root / "app.py").write_text("VALUE = 1\n")
    frontend_project(root / "web")
    return root


FRONTEND = pytest.mark.xdist_group("test_node_checkers.frontend")
"""The tests of the one ``frontend`` check: on one worker under ``--dist loadgroup``, so made
once."""


@pytest.fixture(scope="module")
def frontend(project: Path) -> tuple[int, dict[str, Any]]:
    """One ``qbench check --target frontend`` of ``project``: tsc and ESLint, the checkers that
    apply, each read by its own test below."""
    return qbench_check(["--target", "frontend"], project)


def places(check: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (d["file"], d["line"], d["column"], d["code"], d["severity"]) for d in check["diagnostics"]
    ]


@FRONTEND
def test_tsc_finds_ts2345_at_its_line_and_column(frontend: tuple[int, dict[str, Any]]) -> None:
    status, report = frontend
    tsc = report["checks"][0]
    assert (tsc["run"]["tool"], tsc["status"], status) == ("tsc.typecheck", "failed", 1)
    assert places(tsc) == [("web/src/greet.ts", 6, 31, "TS2345", "error")]
    assert (
        "'number' is not assignable to parameter of type 'string'"
        in (tsc["diagnostics"][0]["message"])
    )
    assert tsc["run"]["command"][0].endswith("web/node_modules/.bin/tsc")


SOLUTION_TSCONFIG = """\
{
  // create-vite's "solution" tsconfig: no file of its own, the checked ones in references
  "files": [],
  "references": [
    { "path": "./tsconfig.app.json" },
  ],
}
"""


def test_tsc_on_a_solution_tsconfig_checks_its_references(tmp_path: Path) -> None:
    """A ``tsconfig.json`` of ``"files": []`` and ``references`` (every create-vite TypeScript
    template's): ``tsc --noEmit`` checks nothing there and said clean beside the error the
    project's ``tsc -b`` prints; qbench checks its references and finds the error."""
    web = frontend_project(tmp_path / "web")
    (web / "tsconfig.json").rename(web / "tsconfig.app.json")
    (web / "tsconfig.json").write_text(SOLUTION_TSCONFIG)
    status, report = qbench_check(["--target", "frontend", "--checker", "tsc"], tmp_path)
    [tsc] = report["checks"]
    assert (tsc["status"], status) == ("failed", 1), tsc
    assert places(tsc) == [("web/src/greet.ts", 6, 31, "TS2345", "error")]
    assert tsc["run"]["command"][1].endswith("tsc_build.js")


def test_tsconfig_references_read_through_comments(tmp_path: Path) -> None:
    """``references`` in JSON with comments and trailing commas; none in a comment or a
    string, nor an empty list."""
    tsconfig = tmp_path / "tsconfig.json"
    tsconfig.write_text(SOLUTION_TSCONFIG)
    assert has_references(tsconfig)
    tsconfig.write_text('{\n  // "references": [{"path": "x"}]\n  "include": ["src"],\n}\n')
    assert not has_references(tsconfig)
    tsconfig.write_text('{"references": [], "files": ["a // b"]}')
    assert not has_references(tsconfig)
    tsconfig.write_text('{"references": [{"path": "a"}], /* unclosed')
    assert has_references(tsconfig)
    assert not has_references(tmp_path / "missing.json")


LIB_ERROR = 'export const size: number = "large";\n'
"""Line 1, column 14: a string for a number (TS2322)."""
SOLO_ERROR = "export const twice: string = 2 * 2;\n"
"""Line 1, column 14: a number for a string (TS2322)."""
APP_USES_LIB = 'import { size } from "../lib/src/size";\nexport const twice: string = size * 2;\n'
"""Line 2, column 14: a number for a string (TS2322), through the referenced project's ``size``
(its declarations, ``lib/dist/size.d.ts``, are what ``tsc -b`` checks the app against)."""


PROJECT_OPTIONS = {"composite": True, "strict": True, **LEAN}
"""Each referenced project's options (`LEAN`: a ``tsc -b`` of the three took 4 s of CPU with
TypeScript's lib checked)."""


def references_project(directory: Path, typescript: str) -> Path:
    """A front end shaped as create-vite's: a solution ``tsconfig.json`` referencing a composite
    ``lib`` project (declarations into ``lib/dist``), a composite ``noEmit`` app
    (``.tsbuildinfo`` beside its config, as create-vite's but not into the shared
    ``node_modules``) that references ``lib`` and imports it, and a composite ``noEmit``
    ``solo`` project that references nothing, one error in each; the real ``typescript``
    linked in. (The app and ``solo`` were two projects of two runs once: one run checks both,
    the importing project and the one that stands alone.)"""
    (directory / "lib" / "src").mkdir(parents=True)
    (directory / "src").mkdir()
    (directory / "solo" / "src").mkdir(parents=True)
    (directory / "package.json").write_text('{"name": "web", "private": true}')
    lib = {"compilerOptions": {**PROJECT_OPTIONS, "outDir": "dist"}}
    (directory / "lib" / "tsconfig.json").write_text(json.dumps({**lib, "include": ["src"]}))
    (directory / "lib" / "src" / "size.ts").write_text(LIB_ERROR)
    app = {**PROJECT_OPTIONS, "noEmit": True}
    (directory / "tsconfig.app.json").write_text(
        json.dumps({"compilerOptions": app, "include": ["src"], "references": [{"path": "lib"}]})
    )
    (directory / "src" / "twice.ts").write_text(APP_USES_LIB)
    solo = {"compilerOptions": app, "include": ["src"], "references": []}
    (directory / "solo" / "tsconfig.json").write_text(json.dumps(solo))
    (directory / "solo" / "src" / "twice.ts").write_text(SOLO_ERROR)
    references = [{"path": "./lib"}, {"path": "./tsconfig.app.json"}, {"path": "./solo"}]
    (directory / "tsconfig.json").write_text(json.dumps({"files": [], "references": references}))
    (directory / "node_modules").symlink_to(node_modules({"typescript": typescript}))
    return directory


def listing(directory: Path) -> list[str]:
    """Every file under ``directory`` (not through ``node_modules``), qbench's own left out."""
    return sorted(
        str(path.relative_to(directory))
        for path in directory.rglob("*")
        if path.is_file() and ".qbench" not in path.parts
    )


@pytest.mark.parametrize(
    ("typescript", "found"),
    [
        # before 5.6, tsc -b skips a project whose reference has errors (the app), not solo
        ("5.5.4", [("web/lib/src/size.ts", 1), ("web/solo/src/twice.ts", 1)]),
        (
            "5.9.3",
            [("web/lib/src/size.ts", 1), ("web/src/twice.ts", 2), ("web/solo/src/twice.ts", 1)],
        ),
        # the native compiler, no JavaScript API: each project by tsc -p (its builder crashed);
        # the app reads lib's declarations, built into the scratch directory (a TS6305 without)
        (
            "7.0.2",
            [("web/lib/src/size.ts", 1), ("web/src/twice.ts", 2), ("web/solo/src/twice.ts", 1)],
        ),
    ],
)
def test_tsc_on_references_writes_nothing_and_agrees_with_tsc_b(
    tmp_path: Path, typescript: str, found: list[tuple[str, int]]
) -> None:
    """``tsc -b`` writes the referenced projects' output and ``.tsbuildinfo`` files into the
    project (TypeScript 5.5 refuses ``-b --noEmit``; 5.9 takes it and still writes an
    incremental project's ``.tsbuildinfo``; 7 has no JavaScript API for qbench's builder).
    qbench's check leaves the project's files as they
    were, with the diagnostics of the project's own ``tsc -b`` (run in a copy), in its order,
    an importing project checked against its reference's declarations as ``tsc -b`` does."""
    web = references_project(tmp_path / "project" / "web", typescript)
    copy = tmp_path / "copy"
    shutil.copytree(web, copy, symlinks=True)
    own = subprocess.run(
        ["node_modules/.bin/tsc", "-b", "--pretty", "false"],
        cwd=copy,
        capture_output=True,
        check=False,
        timeout=600,
    )
    assert own.returncode in (1, 2), own
    before = listing(web)
    assert listing(copy) != before
    status, report = qbench_check(
        ["--target", "frontend", "--checker", "tsc"], tmp_path / "project"
    )
    [tsc] = report["checks"]
    assert (tsc["status"], status) == ("failed", 1), tsc
    assert listing(web) == before
    expected = [
        (f"web/{d.file}", d.line, d.column, d.code, d.severity) for d in parse_tsc(own.stdout, copy)
    ]
    assert places(tsc) == expected
    assert [place[:2] for place in expected] == found


@FRONTEND
def test_eslint_error_with_its_rule(frontend: tuple[int, dict[str, Any]]) -> None:
    status, report = frontend
    eslint = report["checks"][1]
    assert (eslint["run"]["tool"], eslint["status"], status) == ("eslint.lint", "failed", 1)
    assert places(eslint) == [("web/src/extra.js", 2, 7, "no-unused-vars", "error")]


def test_eslint_leaves_qbench_own_directory_out(tmp_path: Path) -> None:
    """A front end at the root, its ``.qbench/`` beside its sources: a flat configuration
    ignores no dot-directory, so ESLint linted what qbench wrote there (a configuration linting
    JSON found 1 600 errors in qbench's earlier reports); qbench's check leaves it out."""
    web = frontend_project(tmp_path)
    (web / ".qbench" / "runs" / "old").mkdir(parents=True)
    (web / ".qbench" / "runs" / "old" / "leftover.js").write_text(JS_ERROR)
    status, report = qbench_check(["--checker", "eslint"], web)
    [eslint] = report["checks"]
    assert places(eslint) == [("src/extra.js", 2, 7, "no-unused-vars", "error")], eslint
    assert status == 1


def test_eslint_leaves_a_custom_qbench_dir_out(tmp_path: Path) -> None:
    """``qbench check --dir STORE``: the directory this run writes to, named otherwise than
    ``.qbench``, is left out of ESLint's files too (main left out ``.qbench/`` only: a leftover
    report of an earlier run there was counted), glob characters in its name read as they are.
    One store, nested and with glob characters and a space: a plain name (``qa-runs``, a case
    of its own once) takes the same path, its escaping changing nothing."""
    store = "reports/q[a] (1)"
    web = frontend_project(tmp_path)
    (web / store / "runs" / "old").mkdir(parents=True)
    (web / store / "runs" / "old" / "leftover.js").write_text(JS_ERROR)
    status, report = qbench_check(["--checker", "eslint", "--dir", store], web)
    [eslint] = report["checks"]
    assert places(eslint) == [("src/extra.js", 2, 7, "no-unused-vars", "error")], eslint
    assert status == 1


def test_eslint_crash_names_its_error_not_a_stack_frame(tmp_path: Path) -> None:
    """ESLint stopped by a syntax error in its configuration (exit 2) is crashed, and the note
    names the error: it named the last frame of Node's stack below it
    (``at async ModuleJob._link (node:internal/...)``)."""
    web = frontend_project(tmp_path / "web")
    with (web / "eslint.config.js").open("a") as config:
        config.write("export const broken = ;\n")
    status, report = qbench_check(["--target", "frontend", "--checker", "eslint"], tmp_path)
    [eslint] = report["checks"]
    assert (eslint["status"], status) == ("crashed", 1)
    assert "exit code 2 (SyntaxError: Unexpected token ';')" in eslint["note"], eslint["note"]


def test_target_both_gives_python_and_typescript_errors(project: Path) -> None:
    (project / "bad.py").write_text("import os\n")
    try:
        status, report = qbench_check(["--target", "both", "--checker", "ruff,tsc"], project)
    finally:
        (project / "bad.py").unlink()
    found = {d["tool"]: (d["file"], d["line"]) for c in report["checks"] for d in c["diagnostics"]}
    assert status == 1
    assert found == {"ruff.lint": ("bad.py", 1), "tsc.typecheck": ("web/src/greet.ts", 6)}


@FRONTEND
def test_target_frontend_runs_the_checkers_that_apply(
    frontend: tuple[int, dict[str, Any]],
) -> None:
    status, report = frontend
    assert status == 1
    assert [(c["run"]["tool"], c["status"]) for c in report["checks"]] == [
        ("tsc.typecheck", "failed"),
        ("eslint.lint", "failed"),
    ]


def test_missing_binary_is_not_installed_never_clean(tmp_path: Path) -> None:
    """A front end whose node_modules lacks tsc: "not run", exit 3, never clean."""
    web = tmp_path / "web"
    web.mkdir()
    (web / "package.json").write_text("{}")
    (web / "tsconfig.json").write_text("{}")
    status, report = qbench_check(["--target", "frontend"], tmp_path)
    [tsc] = report["checks"]
    assert (tsc["status"], status) == ("not_run", 3)
    assert "npm install --save-dev typescript" in tsc["note"]


@pytest.mark.runs_pytest
def test_qbench_check_runs_a_frontend_checker_beside_the_tests(project: Path) -> None:
    """``pytest --qbench-check=tsc`` runs the front end's tsc (in ``qbench_frontend``) while
    the tests run: its error in the report at its place relative to the rootdir, judged by
    ``--qbench-max-errors``."""
    (project / "pytest.ini").write_text("[pytest]\nqbench_frontend = web\n")
    (project / "test_app.py").write_text("def test_value():\n    assert True\n")
    runs = project / ".qbench" / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    try:
        done = run_child(  # no plugin but qbench (autoloading them cost 0.8 s of CPU)
            project,
            "test_app.py",
            "--qbench-check=tsc",
            "--qbench-max-errors=0",
            "-p",
            "no:cacheprovider",
            timeout=600,
        )
    finally:
        (project / "pytest.ini").unlink()
        (project / "test_app.py").unlink()
    assert done.returncode == 1, done.stdout + done.stderr
    [run] = set(runs.iterdir()) - before  # run ids of one second are in no order
    report = json.loads((run / "report.json").read_text())
    assert [(d["tool"], d["file"], d["line"], d["code"]) for d in report["diagnostics"]] == [
        ("tsc.typecheck", "web/src/greet.ts", 6, "TS2345")
    ]
    assert report["summary"]["passed"] == 1
    assert "1 passed" in done.stdout


def test_tsc_hoisted_to_the_workspace_root_is_found(tmp_path: Path) -> None:
    """An npm workspace (``"workspaces": ["web"]``) installs its tools once, at its root:
    ``web/`` has no ``node_modules``. qbench found no tsc there and said "not run"; it looks up
    to the repository's root and runs the root's tsc on the front end. A tsc above the
    repository's root (a home directory's) is not the project's: "not run" there, exit 3."""
    (tmp_path / "node_modules").symlink_to(node_modules())
    repository = tmp_path / "repo"
    web = frontend_project(repository / "web")
    (web / "node_modules").unlink()
    workspace = {"name": "app", "private": True, "workspaces": ["web"]}
    (repository / "package.json").write_text(json.dumps(workspace))
    (repository / "pytest.ini").write_text("[pytest]\nqbench_frontend = web\n")
    subprocess.run(["git", "init", "-q"], cwd=repository, check=True)
    status, report = qbench_check(["--target", "frontend", "--checker", "tsc"], repository)
    [tsc] = report["checks"]
    assert (tsc["status"], status) == ("not_run", 3), tsc
    assert "npm install --save-dev typescript" in tsc["note"]
    (repository / "node_modules").symlink_to(node_modules())
    status, report = qbench_check(["--target", "frontend", "--checker", "tsc,eslint"], repository)
    by_tool = {c["run"]["tool"]: c for c in report["checks"]}
    assert {tool: c["status"] for tool, c in by_tool.items()} == {
        "tsc.typecheck": "failed",
        "eslint.lint": "failed",
    }
    assert places(by_tool["tsc.typecheck"]) == [("web/src/greet.ts", 6, 31, "TS2345", "error")]
    assert by_tool["tsc.typecheck"]["run"]["command"][0] == str(
        repository.resolve() / "node_modules" / ".bin" / "tsc"
    )
    assert status == 1


def test_crash_note_names_nodes_uncaught_error_not_its_version_line() -> None:
    """A Node program's uncaught error ends with its stack and ``Node.js v20.20.2``: the note
    names the error (qbench's builder under TypeScript 7 said only ``(Node.js v20.20.2)``)."""
    from pytest_qbench.tools.runner import crash_note

    output = (
        b"/x/tsc_build.js:70\n  ts.createDiagnosticReporter(system, false),\n     ^\n\n"
        b"TypeError: ts.createDiagnosticReporter is not a function\n"
        b"    at Object.<anonymous> (/x/tsc_build.js:70:6)\n"
        b"    at node:internal/main/run_main_module:28:49\n\nNode.js v20.20.2\n"
    )
    note = crash_note("tsc.typecheck", 1, output, "tsc.typecheck.stderr.log")
    assert note == (
        "tsc.typecheck crashed: exit code 1 (TypeError: ts.createDiagnosticReporter is not a "
        "function); raw output in tsc.typecheck.stderr.log"
    )
