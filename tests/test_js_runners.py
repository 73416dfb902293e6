"""vitest and jest run by ``qbench test`` (issue 22): their JSON reports read into results named
by runner, counts equal to the runner's own summary line, the project's own binaries (a missing
one fails the run), and a pnpm workspace built package by package."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_here import qbench_here
from node_tools import LEAN
from node_tools import link_tools
from node_tools import qbench_check
from node_tools import qbench_test
from npm_cache import VITEST_TYPES

from pytest_qbench.report.models import TestReport
from pytest_qbench.tools.js.build import build_command
from pytest_qbench.tools.js.project import package_manager
from pytest_qbench.tools.js.project import read_package
from pytest_qbench.tools.js.project import workspace_packages


VITEST_TESTS = """\
import { describe, it, expect } from 'vitest'

describe('math', () => {
  describe('add', () => {
    it('adds', () => { expect(1 + 1).toBe(2) })
    it('carries', () => {
      expect(9 + 1).toBe(11)
    })
  })
  it.skip('skipped', () => {})
  it.todo('later')
})

it('top level', () => { expect([1, 2]).toHaveLength(2) })
"""
JEST_TESTS = """\
describe('cart', () => {
  test('total', () => { expect(2 + 2).toBe(4) })
  test('broken', () => {
    expect(2 + 2).toBe(5)
  })
  test.skip('skip me', () => {})
})
"""
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# runs no pytest; the module fixture's run is shared on one xdist worker
pytestmark = [pytest.mark.engine, pytest.mark.xdist_group("js_runners")]


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def runner_line(log: Path, word: str) -> dict[str, int]:
    """The runner's own summary line (``Tests  1 failed | 3 passed | 1 skipped | 1 todo (6)``),
    read from its console output as the oracle: ``{"failed": 1, ..., "total": 6}``."""
    text = ANSI.sub("", log.read_text(encoding="utf-8"))
    line = next(line for line in text.splitlines() if line.strip().startswith(word))
    counts = {name: int(n) for n, name in re.findall(r"(\d+) (failed|passed|skipped|todo)", line)}
    total = re.search(r"\((\d+)\)|(\d+) total", line)
    assert total is not None, line
    counts["total"] = int(total[1] or total[2])
    return counts


def qbench_counts(report: TestReport) -> dict[str, int]:
    s = report.summary
    counts = {"failed": s.failed, "passed": s.passed, "skipped": s.skipped, **s.other}
    return {k: v for k, v in counts.items() if v} | {"total": s.total}


@pytest.fixture(scope="module")
def vitest_run(node_tools: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    """One ``qbench test --runner vitest`` on a project with a failing, a skipped and a todo
    test, shared by the tests reading it."""
    project = tmp_path_factory.mktemp("vitest-project")
    write_json(project / "package.json", {"name": "web", "devDependencies": {"vitest": "3.2.4"}})
    (project / "src").mkdir()
    (project / "src" / "math.test.ts").write_text(VITEST_TESTS)
    link_tools(project, node_tools)
    return qbench_test(project, "--runner", "vitest", "--html", "report.html")


def test_vitest_counts_equal_its_summary_line(vitest_run: tuple[Any, ...]) -> None:
    """The counts of a vitest run are vitest's own line, and a failing test fails the run."""
    done, report, run_dir = vitest_run
    assert done.returncode == 1, done.stdout + done.stderr
    oracle = runner_line(run_dir / "vitest-1.log", "Tests")
    assert oracle == {"failed": 1, "passed": 2, "skipped": 1, "todo": 1, "total": 5}
    assert qbench_counts(report) == oracle
    assert {r.runner for r in report.results} == {"vitest"}
    assert (run_dir / "report.md").is_file()
    # the line qbench prints adds up too: the todo is on it, as in the report's headline
    assert "vitest: 5 tests: 1 failed, 2 passed, 1 skipped, 1 todo;" in done.stdout


def test_vitest_html_ring_counts_the_todo(vitest_run: tuple[Any, ...]) -> None:
    """The HTML page's Outcomes ring counts every test of the headline, vitest's todo with its
    own arc and legend entry (its total said 4 of the 5 tests, the todo left out)."""
    _, report, run_dir = vitest_run
    page = (run_dir.parent.parent.parent / "report.html").read_text(encoding="utf-8")
    ring = re.search(r'<svg class="chart" data-chart="donut".*?</svg>', page, re.S)
    assert ring is not None
    assert re.findall(r'class="donut-total"[^>]*>(\d+)<', ring[0]) == [str(report.summary.total)]
    assert '<circle class="o-other"' in ring[0] and "<title>1 todo</title>" in ring[0]
    legend = re.search(r'<ul class="legend">(.*?)</ul>', page, re.S)
    assert legend is not None
    words = re.findall(r"</span>(\d+ \w+)</li>", legend[0])
    assert words == ["2 passed", "1 failed", "1 skipped", "1 todo"]


def test_vitest_failure_has_id_place_and_message(vitest_run: tuple[Any, ...]) -> None:
    """The failing test's id is ``file > describe > name``, with its line, the failing line and
    the assertion's message, from vitest's JSON report."""
    _, report, _ = vitest_run
    failed = [r for r in report.results if r.outcome == "failed"]
    assert [r.nodeid for r in failed] == ["src/math.test.ts > math > add > carries"]
    result = failed[0]
    assert (result.file, result.line, result.test_name) == (
        "src/math.test.ts",
        6,
        "math > add > carries",
    )
    assert result.failure is not None
    assert result.failure.error_type == "AssertionError"
    assert "expected 10 to be 11" in result.failure.error_message
    # no stack frame in the message, not even V8's "at new Promise (<anonymous>)"
    assert " at " not in result.failure.error_message, result.failure.error_message
    assert (result.failure.file, result.failure.line) == ("src/math.test.ts", 7)
    todo = next(r for r in report.results if r.nodeid.endswith("later"))
    assert (todo.outcome, todo.counted_as) == ("skipped", ["todo"])


def test_vitest_file_whose_before_all_failed_is_named(node_tools: Path, tmp_path: Path) -> None:
    """A vitest file whose describe block's ``beforeAll`` threw: vitest's JSON marks it failed,
    with no message and its tests skipped; the file is one error named by its file, not only the run's
    "vitest exited 1 with no failed test" naming no file."""
    write_json(tmp_path / "package.json", {"name": "web", "devDependencies": {"vitest": "3.2.4"}})
    hooked = (
        "import { beforeAll, describe, it } from 'vitest'\n\n"
        "describe('hooked', () => {\n"
        "  beforeAll(() => { throw new Error('setup broke') })\n"
        "  it('a', () => {})\n"
        "})\n"
    )
    (tmp_path / "hooked.test.ts").write_text(hooked)
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [r for r in report.results if r.outcome == "error"]
    assert [r.nodeid for r in errors] == ["hooked.test.ts"], report.results
    assert errors[0].failure is not None
    assert "marked this file failed" in errors[0].failure.error_message
    assert "exited 1 with no failed test" not in done.stdout


def test_jest_results_and_counts(node_tools: Path, tmp_path: Path) -> None:
    """jest's ``--json`` report: ids, the test's line, the failing line, counts equal to jest's
    own ``Tests:`` line."""
    write_json(tmp_path / "package.json", {"name": "api", "devDependencies": {"jest": "29.7.0"}})
    (tmp_path / "cart.test.js").write_text(JEST_TESTS)
    link_tools(tmp_path, node_tools)
    done, report, run_dir = qbench_test(tmp_path, "--runner", "jest")
    assert done.returncode == 1, done.stdout + done.stderr
    oracle = runner_line(run_dir / "jest-1.log", "Tests:")
    assert qbench_counts(report) == oracle == {"failed": 1, "passed": 1, "skipped": 1, "total": 3}
    broken = next(r for r in report.results if r.outcome == "failed")
    assert (broken.nodeid, broken.line, broken.runner) == (
        "cart.test.js > cart > broken",
        3,
        "jest",
    )
    assert broken.failure is not None
    assert (broken.failure.file, broken.failure.line) == ("cart.test.js", 4)
    assert "Expected: 5" in broken.failure.error_message


def test_jest_suite_that_failed_to_run_says_why(node_tools: Path, tmp_path: Path) -> None:
    """A jest suite that failed to run (a syntax error) is one error whose message is jest's
    reason, not its heading: the line qbench prints said only "● Test suite failed to run"."""
    write_json(tmp_path / "package.json", {"name": "api", "devDependencies": {"jest": "29.7.0"}})
    (tmp_path / "broken.test.js").write_text("test('x', () => {\n  const = 1\n})\n")
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "jest")
    assert done.returncode == 1, done.stdout + done.stderr
    [error] = report.results
    assert (error.nodeid, error.outcome) == ("broken.test.js", "error")
    assert error.failure is not None
    first = error.failure.error_message.splitlines()[0]
    assert first == "Jest encountered an unexpected token", error.failure.error_message
    assert f"ERROR [jest] broken.test.js (broken.test.js): {first}" in done.stdout


@pytest.mark.parametrize(("ci", "outcome"), [("false", "passed"), ("true", "failed")])
def test_jest_new_snapshot_as_jest_decides(
    node_tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str, outcome: str
) -> None:
    """A new snapshot is written and passes outside CI (``CI=false``: jest's ci-info then says
    no CI whatever else the machine sets), and fails in CI (``CI=true``), as the project's own
    ``jest`` decides: qbench passed ``--ci`` and failed it everywhere."""
    write_json(tmp_path / "package.json", {"name": "api", "devDependencies": {"jest": "29.7.0"}})
    (tmp_path / "snap.test.js").write_text("test('snap', () => { expect([1]).toMatchSnapshot() })")
    link_tools(tmp_path, node_tools)
    monkeypatch.setenv("CI", ci)
    done, report, _ = qbench_test(tmp_path, "--runner", "jest")
    assert [(r.nodeid, r.outcome) for r in report.results] == [("snap.test.js > snap", outcome)]
    assert done.returncode == (0 if ci == "false" else 1), done.stdout + done.stderr
    assert (tmp_path / "__snapshots__" / "snap.test.js.snap").is_file() is (ci == "false")


def test_missing_binary_is_not_installed_and_fails(tmp_path: Path) -> None:
    """A project listing vitest without node_modules/.bin/vitest: the runner is "not
    installed", an error that fails the run, never a clean pass."""
    write_json(tmp_path / "package.json", {"name": "web", "devDependencies": {"vitest": "3.2.4"}})
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == 1
    assert [d.code for d in report.collection_errors] == ["runner-not-installed"]
    assert "not installed" in report.collection_errors[0].message
    assert report.summary.errors == 1 and report.run.exit_code == 1
    assert "not installed" in done.stdout


TYPE_TEST = """\
import { expectTypeOf, test } from 'vitest'
import { sum } from './sum'

test('sum is a string', () => {
  expectTypeOf(sum(1, 2)).toEqualTypeOf<string>()
})
"""
"""A type test (``*.test-d.ts``) that fails: ``sum`` returns a number."""


@pytest.mark.parametrize(
    "script", ["vitest --typecheck", "tsc --noEmit && NODE_ENV=test npm run unit", None]
)
def test_vitest_type_tests_of_the_test_script_run(tmp_path: Path, script: str | None) -> None:
    """A ``test`` script running ``vitest --typecheck`` (directly, or through ``npm run``)
    fails on a type test that fails; qbench's ``vitest run`` left ``--typecheck`` out and read
    the same project green (1 passed). Enabled in ``vitest.config.ts`` (``None``), vitest reads
    it in qbench's run itself."""
    from node_tools import node_modules

    scripts = {"test": script, "unit": "vitest run --typecheck"} if script else {}
    manifest = {"name": "web", "type": "module", "scripts": scripts}
    write_json(tmp_path / "package.json", {**manifest, "devDependencies": {"vitest": "3.2.4"}})
    options = {"strict": True, "noEmit": True, "module": "ESNext", "moduleResolution": "bundler"}
    tsconfig = {"compilerOptions": {**options, **LEAN}}
    write_json(tmp_path / "tsconfig.json", {**tsconfig, "include": ["*.ts"]})
    (tmp_path / "sum.ts").write_text("export const sum = (a: number, b: number) => a + b\n")
    (tmp_path / "sum.test.ts").write_text(
        "import { expect, test } from 'vitest'\nimport { sum } from './sum'\n"
        "test('adds', () => { expect(sum(1, 2)).toBe(3) })\n"
    )
    (tmp_path / "sum.test-d.ts").write_text(TYPE_TEST)
    if script is None:
        (tmp_path / "vitest.config.ts").write_text(
            "import { defineConfig } from 'vitest/config'\n"
            "export default defineConfig({ test: { typecheck: { enabled: true } } })\n"
        )
    (tmp_path / "node_modules").symlink_to(node_modules(VITEST_TYPES))
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == 1, done.stdout + done.stderr
    outcomes = {r.nodeid: r.outcome for r in report.results}
    assert outcomes == {"sum.test.ts > adds": "passed", "sum.test-d.ts > sum is a string": "failed"}


@pytest.mark.parametrize(
    ("script", "options"),
    [
        ("vitest", []),
        ("vitest --typecheck", ["--typecheck"]),
        (
            "npx vitest run --typecheck.only --typecheck.tsconfig tsconfig.test.json",
            ["--typecheck.only", "--typecheck.tsconfig", "tsconfig.test.json"],
        ),
        ("pnpm run build && pnpm test:unit", ["--typecheck.enabled=true"]),
        ("vitest --run; echo '--typecheck'", []),
    ],
)
def test_typecheck_options_of_the_test_script(
    tmp_path: Path, script: str, options: list[str]
) -> None:
    """The ``--typecheck`` options given to vitest, through ``pnpm run``/``pnpm X``; none
    from another command."""
    from pytest_qbench.tools.js.vitest import typecheck_options

    scripts = {"test": script, "test:unit": "vitest --typecheck.enabled=true", "build": "x"}
    write_json(tmp_path / "package.json", {"name": "web", "scripts": scripts})
    package = read_package(tmp_path)
    assert package is not None
    assert typecheck_options(package) == options


def test_a_workspace_package_given_by_its_directory_runs(node_tools: Path, tmp_path: Path) -> None:
    """``qbench test packages/a``, a workspace package's own directory: its tests run (qbench
    skipped the package, ran nothing and said "no tests ran", exit 5); ``packages/b`` is not
    asked for and does not run; a file inside ``a`` narrows the run to it."""
    write_json(
        tmp_path / "package.json", {"name": "mono", "private": True, "workspaces": ["packages/*"]}
    )
    test = "import { it, expect } from 'vitest'\nit('works', () => { expect(1).toBe(1) })\n"
    for name in ("a", "b"):
        package = tmp_path / "packages" / name
        write_json(package / "package.json", {"name": name, "devDependencies": {"vitest": "3.2.4"}})
        (package / "one.test.ts").write_text(test)
        (package / "two.test.ts").write_text(test)
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest", "packages/a")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r.nodeid for r in report.results] == [
        "packages/a/one.test.ts > works",
        "packages/a/two.test.ts > works",
    ]
    shutil.rmtree(tmp_path / ".qbench")
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest", "packages/a/two.test.ts")
    assert [r.nodeid for r in report.results] == ["packages/a/two.test.ts > works"]


def test_workspace_packages_whose_test_script_runs_the_root_runner(
    node_tools: Path, tmp_path: Path
) -> None:
    """vitest listed once at the workspace's root (a pnpm catalog's monorepo), each package's
    ``"test": "vitest run"`` with its own configuration, the root's ``test`` running them all:
    vitest runs in each package as the root's ``npm test`` does (main ran it once at the root,
    without the packages' configurations: "No test files found", exit 1)."""
    manifest = {
        "name": "mono",
        "private": True,
        "workspaces": ["packages/*"],
        "scripts": {"test": "npm test --workspaces"},
        "devDependencies": {"vitest": "3.2.4"},
    }
    write_json(tmp_path / "package.json", manifest)
    check = "import { it, expect } from 'vitest'\nit('works', () => { expect(1).toBe(1) })\n"
    for name in ("a", "b"):
        package = tmp_path / "packages" / name
        write_json(package / "package.json", {"name": name, "scripts": {"test": "vitest run"}})
        (package / "vitest.config.ts").write_text(
            "export default { test: { include: ['checks/*.check.ts'] } }\n"
        )
        (package / "checks").mkdir()
        (package / "checks" / f"{name}.check.ts").write_text(check)
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(r.nodeid for r in report.results) == [
        "packages/a/checks/a.check.ts > works",
        "packages/b/checks/b.check.ts > works",
    ]


def test_pnpm_workspace_builds_package_by_package(node_tools: Path, tmp_path: Path) -> None:
    """A pnpm workspace (pnpm from the registry): each package's build script runs on its own;
    the one that fails is named with its status, counted in projects_build_failed, and its
    tests do not run, while the others' do."""
    write_json(tmp_path / "package.json", {"name": "mono", "private": True})
    (tmp_path / "pnpm-workspace.yaml").write_text("packages:\n  - 'packages/*'\n")
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    good, bad = tmp_path / "packages" / "good", tmp_path / "packages" / "bad"
    test = "import { it, expect } from 'vitest'\nit('works', () => { expect(1).toBe(1) })\n"
    for package, script in ((good, "node -e \"console.log('built')\""), (bad, "node build.js")):
        name = f"@mono/{package.name}"
        write_json(
            package / "package.json",
            {"name": name, "scripts": {"build": script}, "devDependencies": {"vitest": "3.2.4"}},
        )
        (package / "a.test.ts").write_text(test)
        link_tools(package, node_tools)
    (bad / "build.js").write_text(
        "console.error('src/index.ts(3,7): error TS2322: no');\nprocess.exit(2)\n"
    )
    write_json(tmp_path / "packages" / "docs" / "package.json", {"name": "@mono/docs"})
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "node_modules" / ".bin" / "pnpm").symlink_to(
        node_tools / "node_modules" / ".bin" / "pnpm"
    )

    done, report, _ = qbench_test(tmp_path, "--runner", "vitest", "--build")

    assert done.returncode == 1
    statuses = {c.package: (c.status, c.run.tool, c.run.command[1:]) for c in report.checks}
    assert statuses == {
        "@mono/bad": ("failed", "pnpm.build", ["--filter", "@mono/bad", "run", "build"]),
        "@mono/good": ("clean", "pnpm.build", ["--filter", "@mono/good", "run", "build"]),
    }
    assert report.summary.projects_build_failed == 1
    assert [r.nodeid for r in report.results] == ["packages/good/a.test.ts > works"]
    errors = [d for d in report.collection_errors if d.tool == "pnpm.build"]
    assert len(errors) == 1 and "@mono/bad" in errors[0].message and "TS2322" in errors[0].message

    # the same builds as the checker plugin js.build of `qbench check`
    status, check = qbench_check(["--checker", "js.build"], tmp_path)
    assert status == 1, check
    [run] = check["checks"]
    assert (run["run"]["tool"], run["status"]) == ("js.build", "failed")
    assert [(d["file"], "@mono/bad" in d["message"]) for d in run["diagnostics"]] == [
        ("packages/bad/package.json", True)
    ]


@pytest.mark.parametrize(
    ("lock", "manager"),
    [
        ("package-lock.json", "npm"),
        ("pnpm-lock.yaml", "pnpm"),
        ("yarn.lock", "yarn"),
        (None, "npm"),
    ],
)
def test_package_manager_from_lock_file(tmp_path: Path, lock: str | None, manager: str) -> None:
    """The lock file names the package manager (npm without one)."""
    write_json(tmp_path / "package.json", {"name": "x"})
    if lock:
        (tmp_path / lock).write_text("")
    package = read_package(tmp_path)
    assert package is not None and package_manager(package) == manager


def test_workspaces_of_package_json(tmp_path: Path) -> None:
    """package.json's ``workspaces`` (yarn's object form too), ``!`` excluding; the build
    command of each manager."""
    write_json(
        tmp_path / "package.json",
        {"name": "x", "workspaces": {"packages": ["apps/*", "!apps/old"]}},
    )
    for name in ("web", "old"):
        write_json(tmp_path / "apps" / name / "package.json", {"name": name})
    (tmp_path / "apps" / "notes").mkdir()
    root = read_package(tmp_path)
    assert root is not None
    packages = workspace_packages(root)
    assert [p.name for p in packages] == ["web"]
    assert build_command("npm", "npm", packages[0]) == ["npm", "run", "build", "--workspace", "web"]
    assert build_command("yarn", "yarn", packages[0]) == [
        "yarn",
        "workspace",
        "web",
        "run",
        "build",
    ]
    assert build_command("npm", "npm", None) == ["npm", "run", "build"]


def test_vitest_and_jest_are_runners_of_the_plugin_interface(tmp_path: Path) -> None:
    """vitest and jest are built-in plugins of the runner interface: detected from package.json
    (here a front end one directory down), planned with the project's own binary, and not
    installed (never planned through a download) when it is missing."""
    from pytest_qbench.tools.registry import load_registry
    from pytest_qbench.tools.spec import NotInstalled

    runners = load_registry(entry_points=False).runners
    assert {"pytest", "vitest", "jest"} <= set(runners)
    web = tmp_path / "web"
    write_json(web / "package.json", {"name": "web", "devDependencies": {"vitest": "3.2.4"}})
    vitest, jest = runners["vitest"].tool, runners["jest"].tool
    assert vitest.applies(tmp_path) and not jest.applies(tmp_path)
    assert vitest.installed is not None and not vitest.installed(tmp_path)
    with pytest.raises(NotInstalled, match=r"node_modules/\.bin/vitest"):
        vitest.plan(web, [], tmp_path)
    binary = web / "node_modules" / ".bin" / "vitest"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    plan = vitest.plan(web, ["src/a.test.ts"], tmp_path)
    assert plan.command[0] == str(binary) and plan.output == tmp_path / "vitest.json"
    assert (
        f"--outputFile.json={plan.output}" in plan.command and plan.command[-1] == "src/a.test.ts"
    )


def test_unknown_runner_is_refused_with_the_registered_ones(tmp_path: Path) -> None:
    """``--runner mocha`` (no plugin registers it): a one-line error listing the registered
    runners; nothing runs, nothing is stored."""
    done = qbench_here("test", "--runner", "mocha", cwd=tmp_path)
    assert done.ret != 0
    assert "unknown runner 'mocha'; registered runners: pytest, vitest, jest" in done.err
    assert not (tmp_path / ".qbench").exists()


@pytest.mark.parametrize(("wanted", "code"), [("number", 0), ("string", 1)])
def test_type_test_file_without_tests_as_vitest_says(
    tmp_path: Path, wanted: str, code: int
) -> None:
    """A package whose only test file is a type test with its ``expectTypeOf`` outside any
    ``test()`` (secretlint's ``@secretlint/types``), run ``vitest --typecheck.only``: vitest
    says ``Test Files 1 passed``, ``Tests no tests``, exit 0, and qbench said "no tests ran",
    exit 5; now 0 tests, exit 0, and a note naming the file. The assertion failing: exit 1."""
    from node_tools import node_modules

    manifest = {"name": "types", "type": "module", "scripts": {"test": "vitest --typecheck.only"}}
    write_json(tmp_path / "package.json", {**manifest, "devDependencies": {"vitest": "3.2.4"}})
    options = {"strict": True, "noEmit": True, "module": "ESNext", "moduleResolution": "bundler"}
    write_json(
        tmp_path / "tsconfig.json",
        {"compilerOptions": {**options, **LEAN}, "include": ["*.ts"]},
    )
    (tmp_path / "sum.ts").write_text("export const sum = (a: number, b: number) => a + b\n")
    (tmp_path / "sum.test-d.ts").write_text(
        "import { expectTypeOf } from 'vitest'\nimport { sum } from './sum'\n"
        f"expectTypeOf(sum(1, 2)).toEqualTypeOf<{wanted}>()\n"
    )
    (tmp_path / "node_modules").symlink_to(node_modules(VITEST_TYPES))
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == code, done.stdout + done.stderr
    assert report.run.exit_code == code
    if code == 0:
        assert report.results == [] and report.collection_errors == []
        [note] = [w for w in report.warnings if w.code == "no-test-in-file"]
        assert "1 file holding no test (sum.test-d.ts)" in note.message
        assert f"NOTE vitest: {note.message}" in done.stdout
    else:
        assert [(r.nodeid, r.outcome) for r in report.results] == [("sum.test-d.ts", "error")]


VITEST_PROJECTS = """\
import { defineConfig } from 'vitest/config'
export default defineConfig({ test: { projects: [
  { test: { name: 'unit', include: ['unit/*.test.ts'] } },
  { test: { name: 'slow', include: ['slow/*.test.ts'] } },
] } })
"""
"""A vitest configuration of two projects (vitest 3.2's ``test.projects``)."""


@pytest.mark.parametrize(
    ("scripts", "ran"),
    [
        ({"test": "vitest run --project unit"}, ["unit/u.test.ts > u"]),
        ({"test": "npm run unit -- --project=slow", "unit": "vitest"}, ["slow/s.test.ts > s"]),
        (
            {"test": "vitest --project unit && vitest --project slow"},
            ["slow/s.test.ts > s", "unit/u.test.ts > u"],
        ),
        ({"test": "vitest -c vitest.unit.config.ts"}, ["unit/u.test.ts > u"]),
        ({"test": "vitest --root unit -c vitest.unit.config.ts"}, ["unit/u.test.ts > u"]),
        # the script's file filters (a word after a flag, a project's value before it)
        ({"test": "vitest run unit"}, ["unit/u.test.ts > u"]),
        (
            {"test": "vitest --passWithNoTests --project slow --project unit unit/"},
            ["unit/u.test.ts > u"],
        ),
        ({"test": "vitest run unit/ && vitest run unit/u"}, ["unit/u.test.ts > u"]),
    ],
)
def test_vitest_runs_the_tests_of_the_test_script(
    node_tools: Path, tmp_path: Path, scripts: dict[str, str], ran: list[str]
) -> None:
    """The test script's ``--project``, ``--config`` and ``--root`` (directly, or through
    ``npm run X -- ARGS``) choose the tests of qbench's vitest run as of ``npm test``: qbench
    ran every project (2 tests, 1 failed)."""
    write_json(
        tmp_path / "package.json",
        {"name": "web", "type": "module", "scripts": scripts, "devDependencies": {"vitest": "3"}},
    )
    (tmp_path / "vitest.config.ts").write_text(VITEST_PROJECTS)
    for folder, name, value in (("unit", "u", 1), ("slow", "s", 2)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.test.ts").write_text(
            f"import {{ test, expect }} from 'vitest'\ntest('{name}', () => expect({value}).toBe(1))\n"
        )
    for where in (tmp_path, tmp_path / "unit"):  # with --root unit, vitest reads -c from unit/
        (where / "vitest.unit.config.ts").write_text(
            "export default { test: { include: ['**/u.test.ts'] } }\n"
        )
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert sorted(r.nodeid for r in report.results) == ran, done.stdout + done.stderr
    assert done.returncode == (1 if "slow/s.test.ts > s" in ran else 0)


@pytest.mark.parametrize(
    ("script", "ran"),
    [
        ("jest --selectProjects client", ["client/c.test.js > c"]),
        ("jest --config jest.server.config.js", ["server/s.test.js > s"]),
        (
            "jest --selectProjects client server --ci",
            ["client/c.test.js > c", "server/s.test.js > s"],
        ),
    ],
)
def test_jest_runs_the_tests_of_the_test_script(
    node_tools: Path, tmp_path: Path, script: str, ran: list[str]
) -> None:
    """The test script's ``--selectProjects`` (a list, ended by the next option) and
    ``--config`` choose the tests of qbench's jest run as of ``npm test``: qbench ran both
    projects."""
    manifest = {"name": "api", "scripts": {"test": script}, "devDependencies": {"jest": "29"}}
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "jest.config.js").write_text(
        "module.exports = { projects: [\n"
        "  { displayName: 'client', testMatch: ['<rootDir>/client/*.test.js'] },\n"
        "  { displayName: 'server', testMatch: ['<rootDir>/server/*.test.js'] },\n"
        "] }\n"
    )
    (tmp_path / "jest.server.config.js").write_text(
        "module.exports = { testMatch: ['<rootDir>/server/*.test.js'] }\n"
    )
    for name, value in (("client", 1), ("server", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name[0]}.test.js").write_text(
            f"test('{name[0]}', () => expect({value}).toBe({value}))\n"
        )
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "jest")
    assert sorted(r.nodeid for r in report.results) == ran, done.stdout + done.stderr
    assert done.returncode == 0


JEST_ESM_TEST = """\
import { test, expect } from '@jest/globals'
import { double } from '../../src/double.js'
test('doubles', () => expect(double(2)).toBe(4))
"""
"""An ES module test (``import``): jest runs it only under Node's ``--experimental-vm-modules``."""


@pytest.mark.parametrize(
    ("script", "outcomes", "status"),
    [
        # Node's option before jest's script, a file filter (tests/ui's test left out)
        (
            "node --experimental-vm-modules node_modules/jest/bin/jest.js tests/api",
            [("tests/api/double.test.js > doubles", "passed")],
            0,
        ),
        # the option in NODE_OPTIONS, the filter as jest's --testPathPattern
        (
            "NODE_OPTIONS=--experimental-vm-modules jest --testPathPattern=tests/api",
            [("tests/api/double.test.js > doubles", "passed")],
            0,
        ),
        # --coverage: the configuration's threshold not met fails jest's run (every test passed)
        (
            "NODE_OPTIONS=--experimental-vm-modules jest tests/api --coverage",
            [("tests/api/double.test.js > doubles", "passed")],
            1,
        ),
    ],
)
def test_jest_runs_as_the_test_script_starts_it(
    node_tools: Path, tmp_path: Path, script: str, outcomes: list[tuple[str, str]], status: int
) -> None:
    """An ES module package whose test script runs jest under Node's
    ``--experimental-vm-modules``, on its file filter, with ``--coverage``: qbench runs the
    tests ``npm test`` runs the way it runs them (main: jest without the Node option, every
    file an error "Jest encountered an unexpected token"; every file run; no coverage, so a
    green run where ``npm test`` fails on its threshold)."""
    manifest = {
        "name": "api",
        "type": "module",
        "scripts": {"test": script},
        "devDependencies": {"jest": "29"},
    }
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "jest.config.js").write_text(
        "export default { transform: {}, coverageThreshold: { global: { functions: 100 } } }\n"
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "double.js").write_text(
        "export const double = (n) => n * 2\nexport const half = (n) => n / 2\n"
    )
    for folder in ("api", "ui"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
        (tmp_path / "tests" / folder / "double.test.js").write_text(JEST_ESM_TEST)
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "jest")
    ran = [(r.nodeid, r.outcome) for r in report.results if r.outcome != "error"]
    assert ran == outcomes, done.stdout + done.stderr
    assert done.returncode == status, done.stdout + done.stderr
    if status:  # jest's exit 1 with no failed test: its threshold, named, never a pass
        [problem] = report.collection_errors
        assert "coverage threshold for functions (100%) not met: 50%" in problem.message


def test_vitest_coverage_of_the_test_script_without_its_provider(
    node_tools: Path, tmp_path: Path
) -> None:
    """``"test": "vitest run --coverage"`` without ``@vitest/coverage-v8`` installed: vitest
    stops before any test (``MISSING DEPENDENCY``, exit 1), as ``npm test`` does; the run fails
    naming it (main: ``--coverage`` not carried, a green run)."""
    manifest = {
        "name": "web",
        "type": "module",
        "scripts": {"test": "vitest run --coverage"},
        "devDependencies": {"vitest": "3"},
    }
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "a.test.ts").write_text("import { test } from 'vitest'\ntest('a', () => {})\n")
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == 1, done.stdout + done.stderr
    [problem] = report.collection_errors
    assert "Cannot find dependency '@vitest/coverage-v8'" in problem.message, problem.message


@pytest.mark.parametrize(
    ("script", "runner", "arguments", "env"),
    [
        ("vitest run src/unit", "vitest", ["src/unit"], {}),
        (
            "vitest --coverage src/unit -t add",
            "vitest",
            ["--coverage", "--testNamePattern=add", "src/unit"],
            {},
        ),
        (
            "vitest run --coverage.include src --project a x y",
            "vitest",
            ["--coverage.include", "src", "--project=a", "x", "y"],
            {},
        ),
        ("vitest run a && vitest run b", "vitest", ["a", "b"], {}),
        (
            "cross-env TZ=UTC jest tests/api --coverage",
            "jest",
            ["--coverage", "tests/api"],
            {"TZ": "UTC"},
        ),
        ("jest --selectProjects a b --ci src", "jest", ["--selectProjects", "a", "b", "src"], {}),
        (
            "jest -w 2 --testPathPattern=api --coverage=false",
            "jest",
            ["--testPathPattern", "api", "--coverage=false"],
            {},
        ),
    ],
)
def test_file_filters_coverage_and_variables_carried(
    tmp_path: Path, script: str, runner: str, arguments: list[str], env: dict[str, str]
) -> None:
    """The test script's file filters (the words no option takes as its value), its coverage
    options and the variables set before the runner, as qbench's run gets them."""
    from pytest_qbench.tools.js import jest
    from pytest_qbench.tools.js import scripts
    from pytest_qbench.tools.js import vitest

    write_json(tmp_path / "package.json", {"name": "web", "scripts": {"test": script}})
    package = read_package(tmp_path)
    assert package is not None
    module = vitest if runner == "vitest" else jest
    command = module.command(["bin"], tmp_path / "out.json", [], package)
    ours = {"run", "--reporter=default", "--reporter=json", "--includeTaskLocation", "--json"}
    ours |= {"--testLocationInResults", f"--outputFile.json={tmp_path / 'out.json'}"}
    ours |= {f"--outputFile={tmp_path / 'out.json'}"}
    assert [word for word in command[1:] if word not in ours] == arguments
    assert scripts.launch(package, runner).env == env


@pytest.mark.parametrize(
    ("script", "why"),
    [
        ("vitest related src/a.ts", "related: the tests of the files it names"),
        ("vitest run --changed HEAD", "--changed: the tests of the files git sees changed"),
        ("jest -o", "-o: the tests of the files git sees changed"),
        ("jest --findRelatedTests src/a.js", "--findRelatedTests: the tests of the files it names"),
        ("vitest run unit && vitest run", "different file filters (unit, (none))"),
        ("NODE_OPTIONS=--x jest && jest", "starts jest 2 times in different ways"),
    ],
)
def test_file_choices_qbench_cannot_make_are_refused(tmp_path: Path, script: str, why: str) -> None:
    """Options that choose the tests from git's state, a cache or imports, and commands that
    filter or start the runner differently: refused with the reason (qbench ran every test)."""
    from pytest_qbench.tools.js import jest
    from pytest_qbench.tools.js import scripts
    from pytest_qbench.tools.js import vitest
    from pytest_qbench.tools.spec import Unsupported

    write_json(tmp_path / "package.json", {"name": "web", "scripts": {"test": script}})
    package = read_package(tmp_path)
    assert package is not None
    module = vitest if "vitest" in script else jest
    with pytest.raises(Unsupported, match=re.escape(why)):
        module.command(["bin"], tmp_path / "out.json", [], package)
        scripts.launch(package, module.NAME)


@pytest.mark.parametrize(
    ("script", "runner", "options"),
    [
        ("vitest run --project a --project=b", "vitest", ["--project=a", "--project=b"]),
        ("vitest -c x.ts -r web --dir src", "vitest", ["--config=x.ts", "--root=web", "--dir=src"]),
        ("vitest --project a; vitest --project b", "vitest", ["--project=a", "--project=b"]),
        ("vitest run --workspace=w.ts --typecheck", "vitest", ["--workspace=w.ts"]),
        ("jest --rootDir app -c j.json", "jest", ["--config=j.json", "--rootDir=app"]),
        ("jest --selectProjects a b --ci src", "jest", ["--selectProjects", "a", "b"]),
        ("jest --projects p q && jest --projects p q", "jest", ["--projects", "p", "q"]),
        (
            "npm run unit && npm run slow",
            "jest",
            ["--selectProjects", "unit", "integration", "slow"],
        ),
        ("tsc && eslint --config x.js", "jest", []),
        (
            "node --experimental-vm-modules node_modules/jest/bin/jest.js -c j.json",
            "jest",
            ["--config=j.json"],
        ),
    ],
)
def test_options_carried_from_the_test_script(
    tmp_path: Path, script: str, runner: str, options: list[str]
) -> None:
    """The options that choose the tests, as qbench's run gets them; none from another
    command; jest's ``--selectProjects`` of two commands run together (event-driven-user-
    activity-service's ``npm run test:unit && npm run test:integration``: refused on main)."""
    from pytest_qbench.tools.js import jest
    from pytest_qbench.tools.js import scripts
    from pytest_qbench.tools.js import vitest

    more = {"unit": "jest --selectProjects unit integration", "slow": "jest --selectProjects slow"}
    write_json(tmp_path / "package.json", {"name": "web", "scripts": {"test": script, **more}})
    package = read_package(tmp_path)
    assert package is not None
    table = vitest.OPTIONS if runner == "vitest" else jest.OPTIONS
    assert scripts.carried(package, runner, table) == options


@pytest.mark.parametrize(
    ("script", "why"),
    [
        (
            "vitest --config a.ts && vitest --config b.ts",
            "2 times with different --config (a.ts, b.ts)",
        ),
        ("vitest --project a && vitest", "different --project (a, (none))"),
        ("vitest --config $CONFIG", "--config $CONFIG, which its shell expands"),
        ("vitest run --root", "--root without a value"),
    ],
)
def test_options_qbench_cannot_carry_are_refused(
    node_tools: Path, tmp_path: Path, script: str, why: str
) -> None:
    """A test script whose options qbench cannot carry into its one vitest run: vitest does
    not run, the run fails with the reason and the fix (it ran every test, another set than
    ``npm test``'s)."""
    manifest = {"name": "web", "scripts": {"test": script}, "devDependencies": {"vitest": "3"}}
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "a.test.ts").write_text("import { test } from 'vitest'\ntest('a', () => {})\n")
    link_tools(tmp_path, node_tools)
    done, report, run_dir = qbench_test(tmp_path, "--runner", "vitest")
    assert done.returncode == 1
    assert report.results == []
    [problem] = report.collection_errors
    assert problem.code == "runner-options-refused"
    assert why in problem.message and "not run" in problem.message, problem.message
    assert not list(run_dir.glob("vitest-*.log"))


def test_no_pytest_test_beside_a_passed_type_test_file_is_a_pass(tmp_path: Path) -> None:
    """MCP's pytest run with no test (exit 5) merged with a vitest run whose only file passed
    holding no test: vitest's pass makes the run one that ran something (exit 0), as a vitest
    test would; with nothing from either it stays "no tests ran"."""
    from pytest_qbench.tools.run_tests import Gathered
    from pytest_qbench.tools.run_tests import build_report
    from pytest_qbench.tools.run_tests import merge_report
    from pytest_qbench.tools.run_tests import started_now

    pytest_run = build_report(Gathered(["pytest"], exit_code=5), "r", started_now(), [], tmp_path)
    typed = Gathered(["vitest"], passed_without_tests=["web/sum.test-d.ts"])
    assert merge_report(pytest_run, typed).run.exit_code == 0
    assert merge_report(pytest_run, Gathered(["vitest"])).run.exit_code == 5


@pytest.mark.parametrize(
    ("scripts", "runners", "parts"),
    [
        ({"test": "vitest run && node --test test/"}, ["vitest"], ["node --test test/"]),
        ({"test": "jest && tsc"}, ["jest"], ["tsc"]),
        ({"test": "jest && vitest run"}, ["jest", "vitest"], []),
        ({"test": "jest && vitest run"}, ["jest"], ["vitest run"]),
        ({"test": "vitest --project a; vitest --project b"}, ["vitest"], []),
        (
            {"test": "npm run lint && npm run unit", "lint": "eslint .", "unit": "vitest"},
            ["vitest"],
            ["eslint ."],
        ),
        ({"test": "NODE_ENV=test pnpm unit", "unit": "cross-env TZ=UTC jest"}, ["jest"], []),
        ({"test": "rimraf coverage && echo start && vitest run 2>&1"}, ["vitest"], []),
        ({"test": "cd web && vitest run"}, ["vitest"], ["cd web"]),
        ({"test": "npm run missing && jest"}, ["jest"], ["npm run missing"]),
        ({"test": "cd web && npm test"}, ["vitest"], ["cd web", "npm test"]),
    ],
)
def test_parts_of_the_test_script_besides_the_runners(
    tmp_path: Path, scripts: dict[str, str], runners: list[str], parts: list[str]
) -> None:
    """The commands of a test script (and of the scripts it runs) that run none of the runners
    qbench ran: each can fail ``npm test``."""
    from pytest_qbench.tools.js.scripts import parts_besides

    write_json(tmp_path / "package.json", {"name": "web", "scripts": scripts})
    package = read_package(tmp_path)
    assert package is not None
    assert parts_besides(package, runners) == parts


def test_a_script_qbench_ran_itself_is_no_part_left_out(tmp_path: Path) -> None:
    """``"test": "npm run build && vitest run"`` under ``qbench test --build``: qbench ran the
    build script itself, so it is no command left out; without ``--build`` it is one."""
    from pytest_qbench.tools.js.scripts import parts_besides

    scripts = {"test": "npm run build && vitest run", "build": "tsc && vite build"}
    write_json(tmp_path / "package.json", {"name": "web", "scripts": scripts})
    package = read_package(tmp_path)
    assert package is not None
    assert parts_besides(package, ["vitest"]) == ["tsc", "vite build"]
    assert parts_besides(package, ["vitest"], ran=frozenset({"build"})) == []


NODE_TEST_FAILING = """\
const test = require('node:test')
const assert = require('node:assert')
test('node part', () => assert.equal(1, 2))
"""


@pytest.mark.parametrize(("runner", "status"), [(None, 1), ("vitest", 0)])
def test_a_test_script_part_qbench_does_not_run_is_not_green(
    node_tools: Path, tmp_path: Path, runner: str | None, status: int
) -> None:
    """``"test": "vitest run && node test/node-part.js"`` whose node script (node:test's
    tests run as a plain script) fails (``npm test`` exits 1): qbench runs the vitest part
    only (a ``node --test`` part it runs itself: tests/test_script_parts.py); run as the project's tests
    (every runner that applies) the run is red, naming the part it did not run (main: green,
    exit 0, nothing said); with ``--runner vitest`` asked for, vitest's run as asked, with a
    note."""
    manifest = {
        "name": "web",
        "scripts": {"test": "vitest run && node test/node-part.js"},
        "devDependencies": {"vitest": "3"},
    }
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "a.test.ts").write_text("import { test } from 'vitest'\ntest('a', () => {})\n")
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "node-part.js").write_text(NODE_TEST_FAILING)  # not vitest's
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path, *(["--runner", runner] if runner else []))
    assert done.returncode == status, done.stdout + done.stderr
    assert [(r.nodeid, r.outcome) for r in report.results] == [("a.test.ts > a", "passed")]
    found = [*report.collection_errors, *report.warnings]
    said = [(d.severity, d.code) for d in found if "`node test/node-part.js`" in d.message]
    assert said == [("error" if status else "info", "script-part-not-run")], found


@pytest.mark.parametrize(
    ("scripts", "command"),
    [
        ({"test": "pnpm -r --if-present test"}, "pnpm -r --if-present test"),
        ({"test": "pnpm --recursive run test"}, "pnpm --recursive run test"),
        ({"test": "pnpm -r --no-bail test"}, None),
        ({"test": "turbo test"}, "turbo test"),
        (
            {"test": "npx turbo run test --filter=./packages/*"},
            "turbo run test --filter=./packages/*",
        ),
        ({"test": "turbo run test --continue"}, None),
        ({"test": "npm run ci", "ci": "lerna run test --stream"}, "lerna run test --stream"),
        ({"test": "npm test --workspaces"}, None),
        ({"test": "turbo run build && vitest"}, None),
    ],
)
def test_workspace_test_scripts_that_stop_at_the_first_failure(
    tmp_path: Path, scripts: dict[str, str], command: str | None
) -> None:
    """The root's test commands that stop at the first workspace package that fails: pnpm's
    recursive run without ``--no-bail``, turbo without ``--continue``, lerna without
    ``--no-bail``; not npm's ``--workspaces``, nor a turbo build before the tests."""
    from pytest_qbench.tools.js.scripts import stops_at_first_failure

    write_json(tmp_path / "package.json", {"name": "mono", "scripts": scripts})
    package = read_package(tmp_path)
    assert package is not None
    assert stops_at_first_failure(package) == command


@pytest.mark.parametrize("bail", [True, False])
def test_every_workspace_package_runs_and_a_bailing_root_script_is_named(
    node_tools: Path, tmp_path: Path, bail: bool
) -> None:
    """A pnpm workspace whose root's ``"test": "pnpm -r test"`` stops at the first package that
    fails: qbench runs every package (the counts are all of them: 1 failed, 1 passed) and says
    that the project's own run stops there (main said nothing: its counts differed from
    ``pnpm test``'s, unexplained); with ``--no-bail``, nothing to say."""
    script = "pnpm -r test" if bail else "pnpm -r --no-bail test"
    manifest = {"name": "mono", "scripts": {"test": script}, "devDependencies": {"vitest": "3"}}
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "pnpm-workspace.yaml").write_text("packages:\n  - 'packages/*'\n")
    for name, value in (("a", 2), ("b", 1)):
        package = tmp_path / "packages" / name
        write_json(package / "package.json", {"name": name, "scripts": {"test": "vitest run"}})
        (package / f"{name}.test.ts").write_text(
            f"import {{ it, expect }} from 'vitest'\nit('{name}', () => expect({value}).toBe(1))\n"
        )
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (report.summary.failed, report.summary.passed, report.collection_errors) == (1, 1, [])
    notes = [w for w in report.warnings if w.code == "workspace-bail"]
    assert [
        (n.severity, "`pnpm -r test`" in n.message, "a failed" in n.message) for n in notes
    ] == ([("info", True, True)] if bail else []), report.warnings


@pytest.mark.parametrize("runner", ["jest", "vitest"])
def test_pass_with_no_tests_of_the_test_script_is_no_tests_not_a_crash(
    node_tools: Path, tmp_path: Path, runner: str
) -> None:
    """``"test": "jest --passWithNoTests"`` in a package with no test yet (buggy/mono-repo's
    template): ``npm test`` exits 0. qbench's run carries the option: no test ran (exit 5, as
    pytest's "no tests collected"), no error (main: jest's "No tests found" exit 1 was a crash,
    ``crashed: exit code 1, no report (Pattern:  - 0 matches)``)."""
    manifest = {
        "name": "example",
        "scripts": {"test": f"{runner} --passWithNoTests"},
        "devDependencies": {runner: "3" if runner == "vitest" else "29"},
    }
    write_json(tmp_path / "package.json", manifest)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.js").write_text("module.exports = 1\n")
    link_tools(tmp_path, node_tools)
    done, report, _ = qbench_test(tmp_path)
    assert (done.returncode, report.collection_errors) == (5, []), done.stdout + done.stderr


@pytest.mark.parametrize(
    ("script", "code", "said"),
    [
        ("c8 --100 node --test && tstyche", 1, ["under `c8 --100`", "`tstyche`"]),
        ('echo "Error: no test specified" && exit 1', 5, []),
    ],
)
def test_a_test_script_no_runner_runs_is_not_no_tests(
    tmp_path: Path, script: str, code: int, said: list[str]
) -> None:
    """A package whose ``test`` script runs only what qbench runs no runner for
    (fastify/fastify-plugin: ``c8 --100 node --test`` and ``tstyche``, 43 tests and 39
    assertions under ``npm test``): ``qbench test`` fails, naming them (main: "no tests ran",
    exit 5, nothing said): node --test refused under c8's threshold, tstyche not run; ``npm
    init``'s placeholder script is no test."""
    from pytest_qbench.tools.run_tests import run_tests

    write_json(tmp_path / "package.json", {"name": "plugin", "scripts": {"test": script}})
    gathered = run_tests(tmp_path, None, [], tmp_path)
    assert gathered.exit_code == code
    assert all(w in p.message for p, w in zip(gathered.problems, said, strict=True))
