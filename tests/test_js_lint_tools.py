"""oxlint, Biome and Prettier run for real (``qbench check``'s checkers from the ``lint``
script; a test script's commands), oxfmt and tsgo in a test script, and a workspace root's
own test scripts (``pretest``, the commands besides ``npm run test --workspaces``) read: each tool
installed once from the npm registry (`node_tools`), each project set up and run once per
module; skipped where Node is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from node_tools import node_modules
from node_tools import qbench_check
from node_tools import qbench_test
from npm_cache import LINT_PACKAGES

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.tools.builtin import node_checkers
from pytest_qbench.tools.js import script_checks
from pytest_qbench.tools.js.scripts import runs_workspaces
from pytest_qbench.tools.node import biome
from pytest_qbench.tools.node import oxfmt
from pytest_qbench.tools.node import oxlint
from pytest_qbench.tools.spec import Unsupported


LINTED = "const unused = 1;\ndebugger;\nexport const a=  2\n"
"""Line 1: ``unused`` (an oxlint and a Biome warning); line 2: ``debugger`` (an oxlint
warning, a Biome error); not formatted (Prettier, Biome)."""
CLEAN = "export const b = 1;\n"


def project(directory: Path, scripts: dict[str, str], **more: Any) -> Path:
    """A package in ``directory`` with ``scripts``, ``src/a.js`` (`LINTED`), ``src/b.js``
    (clean), a passing ``node --test`` file and the cached tools as its ``node_modules``."""
    (directory / "src").mkdir(parents=True)
    (directory / "test").mkdir()
    manifest = {"name": directory.name, "private": True, "type": "module", "scripts": scripts}
    (directory / "package.json").write_text(json.dumps({**manifest, **more}))
    (directory / "src" / "a.js").write_text(LINTED)
    (directory / "src" / "b.js").write_text(CLEAN)
    (directory / "test" / "a.test.js").write_text(
        "import test from 'node:test'\ntest('ok', () => {})\n"
    )
    return directory


@pytest.fixture(scope="module")
def tools() -> Path:
    """The cache's ``node_modules`` with oxlint, Biome and Prettier."""
    return node_modules(LINT_PACKAGES)


@pytest.fixture(scope="module")
def checked(tools: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ``qbench check --target frontend`` of a package whose ``lint`` script runs the three."""
    lint = (
        "oxlint src --max-warnings 0 && biome lint src --write && prettier --write test && "
        "prettier --check src"
    )
    web = project(tmp_path_factory.mktemp("check") / "web", {"lint": lint})
    (web / "node_modules").symlink_to(tools, target_is_directory=True)
    code, report = qbench_check(["--target", "frontend"], web)
    return {"code": code, "runs": {run["run"]["tool"]: run for run in report["checks"]}}


def found(run: dict[str, Any]) -> list[tuple[str | None, str | None, int | None, str]]:
    return [(d["code"], d.get("file"), d.get("line"), d["severity"]) for d in run["diagnostics"]]


def test_check_runs_the_lint_scripts_oxlint_as_written(checked: dict[str, Any]) -> None:
    """oxlint's two warnings, and --max-warnings 0's error (oxlint exits 1, so does the lint
    script): failed, its paths and options as the script gives them."""
    run = checked["runs"]["oxlint.lint"]
    assert run["status"] == "failed"
    assert run["run"]["command"][1:] == ["-f", "json", "--max-warnings", "0", "src"]
    assert found(run) == [
        ("eslint(no-unused-vars)", "src/a.js", 1, "warning"),
        ("eslint(no-debugger)", "src/a.js", 2, "warning"),
        ("max-warnings-exceeded", None, None, "error"),
    ]
    assert checked["code"] == 1


def test_check_runs_the_lint_scripts_biome_without_writing(checked: dict[str, Any]) -> None:
    """``biome lint src --write`` as ``biome lint src`` with its JSON: the unused variable a
    warning, the debugger an error; nothing written (``--write`` left out)."""
    run = checked["runs"]["biome.lint"]
    assert run["status"] == "failed"
    assert "--write" not in run["run"]["command"]
    assert found(run) == [
        ("lint/correctness/noUnusedVariables", "src/a.js", 1, "warning"),
        ("lint/suspicious/noDebugger", "src/a.js", 2, "error"),
    ]


def test_check_runs_the_lint_scripts_prettier_each_file_named(
    checked: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The lint script's ``prettier --check src`` (its ``prettier --write test`` fails on
    nothing, left aside): the unformatted file an error, the formatted one not named."""
    run = checked["runs"]["prettier.format"]
    assert run["status"] == "failed"
    assert run["run"]["command"][1:] == ["--list-different", "src"]
    assert found(run) == [("not-formatted", "src/a.js", None, "error")]


@pytest.fixture(scope="module")
def workspace(tools: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One ``qbench test`` of an npm workspace whose root runs ``oxlint --deny-warnings src``
    before its tests (``pretest``) and ``tsgo`` after the packages' (``npm run test
    --workspaces && tsgo --noEmit``, a TS2322 in ``src/c.ts``); its package runs ``node
    --test && biome check src && oxfmt --check src``."""
    root = project(
        tmp_path_factory.mktemp("workspace") / "root",
        {
            "pretest": "oxlint --deny-warnings src",
            "test": "npm run test --workspaces && tsgo --noEmit",
        },
        workspaces=["packages/*"],
    )
    tsconfig = {"compilerOptions": {"strict": True, "noEmit": True}, "include": ["src/**/*.ts"]}
    (root / "tsconfig.json").write_text(json.dumps(tsconfig))
    (root / "src" / "c.ts").write_text('export const n: number = "s"\n')
    project(
        root / "packages" / "app", {"test": "node --test && biome check src && oxfmt --check src"}
    )
    (root / "node_modules").symlink_to(tools, target_is_directory=True)
    return qbench_test(root)


def test_a_workspace_roots_own_test_scripts_are_run_or_named(workspace: Any) -> None:
    """The root's ``pretest`` oxlint runs (two warnings, an error for --deny-warnings), its
    tsgo runs (the TS2322, read as tsc's), its ``npm run test --workspaces`` is the packages' tests (run,
    not named); the package's ``biome check`` runs (the debugger, the unformatted file), and
    its ``oxfmt --check`` (the unformatted file):
    failed, as ``npm test`` fails."""
    done, report, _ = workspace
    assert done.returncode == 1, done.stdout
    problems = [(d.tool, d.code, d.file) for d in report.collection_errors]
    assert ("oxlint", "max-warnings-exceeded", None) in problems
    assert ("tsc.typecheck", "TS2322", "src/c.ts") in problems
    assert ("biome.lint", "lint/suspicious/noDebugger", "packages/app/src/a.js") in problems
    assert ("biome.lint", "format", "packages/app/src/a.js") in problems
    assert ("oxfmt.format", "not-formatted", "packages/app/src/a.js") in problems
    assert not [p for p in problems if p[0] == "oxfmt.format" and p[2] != "packages/app/src/a.js"]
    assert not [d for d in report.collection_errors if d.code == "script-part-not-run"]
    assert report.summary.passed == 1


@pytest.mark.parametrize(
    ("command", "every"),
    [
        ("npm run test --workspaces", True),
        ("npm test -ws --if-present", True),
        ("pnpm -r test", True),
        ("pnpm --recursive run test", True),
        ("yarn workspaces run test", True),
        ("yarn workspaces foreach -A run test", True),
        ("turbo run test", True),
        ("npx turbo test", True),
        ("lerna run test", True),
        ("nx run-many -t test", True),
        ("npm run test --workspace web", True),
        ("pnpm --filter ./packages/* --filter ./site run test", True),
        ("turbo run test --filter=web", True),
        ("pnpm -r lint", False),
        ("turbo run lint test", False),
        ("nx affected -t test", False),
        ("pnpm -r --filter web lint", False),
        ("yarn workspaces foreach run test", False),
        ("npm run lint", False),
    ],
)
def test_a_command_running_every_workspace_packages_tests(command: str, every: bool) -> None:
    assert runs_workspaces(command.split()) is every


def test_oxlint_and_biome_options_not_carried_are_named(tmp_path: Path) -> None:
    """A test script's fixing oxlint, Biome choosing files by git, or another Biome command:
    refused by name, never run otherwise than written."""
    with pytest.raises(Unsupported, match="--fix"):
        oxlint.plan_oxlint(["--fix", "src"], tmp_path)
    with pytest.raises(Unsupported, match="--changed"):
        biome.plan_biome(["check", "--changed"], tmp_path)
    with pytest.raises(Unsupported, match="biome migrate"):
        biome.plan_biome(["migrate"], tmp_path)
    with pytest.raises(Unsupported, match="oxfmt without --check writes"):
        oxfmt.plan_check(["src"], tmp_path)


def test_biome_listing_fewer_diagnostics_than_it_counts_fails_closed(tmp_path: Path) -> None:
    raw = b'{"summary":{"errors":2,"warnings":0},"diagnostics":[]}'
    with pytest.raises(CheckOutputError, match="counted 2"):
        biome.parse_biome(raw, tmp_path)
    with pytest.raises(CheckOutputError, match="no JSON report"):
        oxlint.parse_oxlint(b"Error: config not found\n", tmp_path)


@pytest.mark.parametrize(
    ("scripts", "applies"),
    [
        ({"lint": "eslint . && prettier --write ."}, False),
        ({"format": "prettier --write .", "format:check": "prettier -c ."}, True),
        ({"lint": "npm run lint:format", "lint:format": "prettier . --check"}, True),
    ],
)
def test_prettier_applies_where_a_script_checks_the_formatting(
    tmp_path: Path, scripts: dict[str, str], applies: bool
) -> None:
    """A ``prettier --write`` fails on no file: the checker applies only where the ``lint``
    or ``format:check`` script runs ``prettier --check``."""
    (tmp_path / "package.json").write_text(json.dumps({"name": "web", "scripts": scripts}))
    check = node_checkers.runs_in_script("prettier", script_checks.FORMAT_SCRIPTS)
    assert check(tmp_path) is applies


def test_npm_workspaces_without_if_present_needs_every_packages_test_script(
    tmp_path: Path,
) -> None:
    """``npm run test --workspaces`` fails on a package without a ``test`` script (``pnpm -r
    test`` and ``--if-present`` skip it): then it is no run of the packages' tests qbench
    stands for, and stays a part not run."""
    from pytest_qbench.tools.js.project import read_package

    (tmp_path / "package.json").write_text(json.dumps({"name": "r", "workspaces": ["p/*"]}))
    for name, scripts in (("a", {"test": "node --test"}), ("b", {})):
        (tmp_path / "p" / name).mkdir(parents=True)
        manifest = {"name": name, "scripts": scripts}
        (tmp_path / "p" / name / "package.json").write_text(json.dumps(manifest))
    root = read_package(tmp_path)
    assert root is not None
    assert not runs_workspaces(["npm", "run", "test", "--workspaces"], root)
    assert runs_workspaces(["npm", "run", "test", "--workspaces", "--if-present"], root)
    assert runs_workspaces(["pnpm", "-r", "test"], root)
