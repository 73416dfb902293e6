"""The commands of a package's ``test`` script besides its runner that ``qbench test`` runs
itself: the checkers (``tsc``, ``eslint`` with ``--max-warnings``) through ``qbench check``'s
checkers, and ``node --test`` (Node's built-in runner) read by qbench's reporter; what it cannot
run as written is refused, naming it, or stays a part not run (fails closed). Real tools from
the npm registry (`node_tools`); skipped where Node is missing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from node_tools import LEAN
from node_tools import link_tools
from node_tools import node_modules
from node_tools import qbench_test
from npm_cache import FORMAT_PACKAGES

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.tools.js import node_test
from pytest_qbench.tools.js import script_checks
from pytest_qbench.tools.node import prettier
from pytest_qbench.tools.spec import NotInstalled
from pytest_qbench.tools.spec import Unsupported


pytestmark = [pytest.mark.engine, pytest.mark.xdist_group("js_runners")]

TS_ERROR = "function greet(name: string): string { return name }\nexport const g = greet(3);\n"
"""Line 2: a number given for a string (TS2345)."""
JS_WARNING = "export const used = 1;\nconst unused = 2;\n"
"""Line 2: ``unused`` never used (no-unused-vars, a warning by the config)."""
VITEST_TEST = "import { it, expect } from 'vitest'\nit('adds', () => { expect(1 + 2).toBe(3) })\n"
NODE_TESTS = """\
const test = require('node:test')
const assert = require('node:assert')
test('passes', () => assert.equal(1, 1))
test('fails', () => {
  assert.equal(1, 2)
})
test('skipped', { skip: true }, () => {})
test('later', { todo: true }, () => {})
test.describe('group', () => {
  test.it('inner', () => {})
  test.it('inner fails', () => { throw new Error('boom') })
})
"""


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def fullstack(tmp_path: Path, runners: Path, script: str, clean: bool, **others: str) -> Path:
    """A repository (``.git``) whose root has the checkers installed (tsc, eslint) and whose
    ``web`` package has the runners, its test script ``script`` (and the scripts ``others``);
    ``clean``: no type error and no lint warning."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    web = tmp_path / "web"
    (web / "src").mkdir(parents=True)
    manifest = {"name": "web", "type": "module", "scripts": {"test": script, **others}}
    write_json(web / "package.json", {**manifest, "devDependencies": {"vitest": "3.2.4"}})
    options = {"strict": True, "types": [], **LEAN}
    tsconfig = {"compilerOptions": options, "include": ["src/**/*.ts"]}
    write_json(web / "tsconfig.json", tsconfig)
    (web / "eslint.config.js").write_text(
        'export default [{ rules: { "no-unused-vars": "warn" } }];\n'
    )
    (web / "src" / "greet.ts").write_text("export const g = 1;\n" if clean else TS_ERROR)
    (web / "src" / "extra.js").write_text("export const used = 1;\n" if clean else JS_WARNING)
    (web / "src" / "add.test.js").write_text(VITEST_TEST)
    link_tools(web, runners)
    return web


@pytest.mark.parametrize("clean", [True, False])
def test_checkers_of_the_test_script_run_in_the_run(
    node_tools: Path, tmp_path: Path, clean: bool
) -> None:
    """``"test": "vitest run && tsc --noEmit && eslint src --max-warnings 0"``: qbench runs
    tsc and eslint as ``qbench check`` does, its verdict ``npm test``'s (main: red either way,
    `script-part-not-run`): clean, exit 0; a type error (TS2345 at its line) and one lint
    warning over ``--max-warnings 0`` (eslint exits 1 on it), exit 1, each said."""
    script = "vitest run && tsc --noEmit && eslint src --max-warnings 0"
    web = fullstack(tmp_path, node_tools, script, clean)
    done, report, _ = qbench_test(web)
    assert done.returncode == (0 if clean else 1), done.stdout + done.stderr
    assert [(r.nodeid, r.outcome) for r in report.results] == [("src/add.test.js > adds", "passed")]
    errors = [(e.tool, e.code, e.file, e.line) for e in report.collection_errors]
    assert "script-part-not-run" not in done.stdout
    if clean:
        assert errors == [], report.collection_errors
        return
    assert errors == [
        ("tsc.typecheck", "TS2345", "src/greet.ts", 2),
        ("eslint", "max-warnings-exceeded", None, None),
    ], report.collection_errors
    assert [(w.code, w.file, w.line) for w in report.warnings] == [
        ("no-unused-vars", "src/extra.js", 2)
    ]
    assert "ERROR tsc.typecheck src/greet.ts:2 TS2345" in done.stdout
    npm = shutil.which("npm")
    if npm is not None:  # the oracle: npm test's own verdict
        own = subprocess.run([npm, "test"], cwd=web, capture_output=True, timeout=600, check=False)
        assert own.returncode != 0


@pytest.mark.parametrize(
    ("scripts", "codes"),
    [
        ({"pretest": "tsc --noEmit"}, ["TS2345"]),
        (
            {
                "pretest": "npm run lint",
                "lint": "eslint src",
                "postlint": "eslint src --max-warnings 0",
            },
            ["max-warnings-exceeded"],
        ),
        ({"posttest": "mocha --check-leaks"}, ["script-part-not-run"]),
    ],
)
def test_the_scripts_npm_runs_around_the_test_script_are_run_or_named(
    node_tools: Path, tmp_path: Path, scripts: dict[str, str], codes: list[str]
) -> None:
    """``npm test`` runs ``pretest`` before ``test`` and ``posttest`` after (``npm run lint``
    ``prelint`` and ``postlint``), and fails when one fails: qbench runs their ``tsc`` and
    ``eslint`` as the test script's own, and names what it cannot run (main: exit 0, all
    green, none of them read)."""
    web = fullstack(tmp_path, node_tools, "vitest run", False, **scripts)
    done, report, _ = qbench_test(web)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [r.outcome for r in report.results] == ["passed"]
    assert [e.code for e in report.collection_errors] == codes, report.collection_errors
    npm = shutil.which("npm")
    if npm is not None and "mocha" not in str(scripts):  # the oracle: npm test's own verdict
        own = subprocess.run([npm, "test"], cwd=web, capture_output=True, timeout=600, check=False)
        assert own.returncode != 0


def test_a_checker_option_qbench_cannot_carry_is_refused_by_name(
    node_tools: Path, tmp_path: Path
) -> None:
    """``tsc --noEmit --watch`` and ``eslint . --fix`` are not run otherwise than written:
    each refused (`runner-options-refused`) naming the option; the run is red (main: red,
    `script-part-not-run`, naming no option)."""
    web = fullstack(tmp_path, node_tools, "vitest run && tsc --watch && eslint . --fix", True)
    done, report, _ = qbench_test(web)
    assert done.returncode == 1
    refused = [e.message for e in report.collection_errors if e.code == "runner-options-refused"]
    assert len(refused) == 2, report.collection_errors
    assert "cannot carry: --watch" in refused[0] and "cannot carry: --fix" in refused[1]


@pytest.mark.parametrize(
    ("part", "found"),
    [
        ("tsc --noEmit", ("tsc", ["--noEmit"])),
        ("npx eslint . --max-warnings=0", ("eslint", [".", "--max-warnings=0"])),
        ("node_modules/.bin/tsc -b", ("tsc", ["-b"])),
        ("NODE_ENV=ci eslint .", None),
        ("prettier --check .", ("prettier", ["--check", "."])),
        ("oxfmt --check src", ("oxfmt", ["--check", "src"])),
        ("mocha --check src", None),
    ],
)
def test_the_checker_a_script_command_runs(part: str, found: tuple[str, list[str]] | None) -> None:
    assert script_checks.checker_of(part) == found


@pytest.mark.parametrize(
    ("words", "refused"),
    [
        (["--noEmit", "--watch"], "--watch"),
        (["--noEmit", "--strict"], "--strict"),
        (["-b", "a", "b"], "b"),
        (["-p"], "-p"),
    ],
)
def test_tsc_options_not_carried_are_named(tmp_path: Path, words: list[str], refused: str) -> None:
    with pytest.raises(Unsupported, match=f"cannot carry: {re.escape(refused)}$"):
        script_checks.plan_tsc(words, tmp_path, tmp_path)


@pytest.mark.parametrize("no_emit", [True, False])
def test_a_tsc_that_writes_its_output_is_refused(tmp_path: Path, no_emit: bool) -> None:
    """``"test": "tsc && node --test dist/"``: a plain ``tsc`` writes the output a later
    command runs, and qbench's writes nothing: refused, unless its ``tsconfig.json`` itself
    says ``noEmit`` (it is then planned: here not installed); ``tsc -b`` alike."""
    options = {"noEmit": True} if no_emit else {"outDir": "dist"}
    write_json(tmp_path / "tsconfig.json", {"compilerOptions": options})
    if no_emit:
        with pytest.raises(NotInstalled):
            script_checks.plan_tsc([], tmp_path, tmp_path)
    else:
        with pytest.raises(Unsupported, match="without --noEmit writes its output"):
            script_checks.plan_tsc([], tmp_path, tmp_path)
    with pytest.raises(Unsupported, match="tsc -b without --noEmit"):
        script_checks.plan_tsc(["-b"], tmp_path, tmp_path)


def test_node_test_globs_expand_as_sh_expands_them(tmp_path: Path) -> None:
    """``node --test ./test-node/**/*.test.js`` (formidable's): ``sh`` reads ``**`` as ``*``
    (one directory deep), sorted; a glob matching nothing stays as written; a script with
    quotes is left to Node."""
    for name in ("test-node/b/x.test.js", "test-node/a/y.test.js", "test-node/a/deep/z.test.js"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    words = ["--test", "./test-node/**/*.test.js", "none/*.js"]
    assert node_test.expand(words, " ".join(words), tmp_path) == [
        "--test",
        "./test-node/a/y.test.js",
        "./test-node/b/x.test.js",
        "none/*.js",
    ]
    assert node_test.expand(words, "node --test './test-node/**/*.test.js'", tmp_path) == words


@pytest.mark.parametrize(
    ("words", "refused"),
    [([".", "--fix"], "--fix"), (["--max-warnings", "many"], "--max-warnings many")],
)
def test_eslint_options_not_carried_are_named(
    tmp_path: Path, words: list[str], refused: str
) -> None:
    with pytest.raises(Unsupported, match=f"cannot carry: {re.escape(refused)}$"):
        script_checks.plan_eslint(words, tmp_path, tmp_path)


@pytest.mark.parametrize(
    ("part", "found"),
    [
        ("node --test test/", ({}, ["--test", "test/"])),
        (
            "NODE_ENV=test node --import tsx --test",
            ({"NODE_ENV": "test"}, ["--import", "tsx", "--test"]),
        ),
        ("node build.js --test", None),
        ("c8 node --test", ({}, ["--test"])),  # its wrapper: coverage_wrap
        ("node --version", None),
    ],
)
def test_a_node_test_command_is_told_from_other_node_commands(
    part: str, found: tuple[dict[str, str], list[str]] | None
) -> None:
    assert node_test.node_test_words(part) == found


@pytest.mark.parametrize(
    ("words", "named"),
    [
        (["--test", "--test-reporter=spec"], "--test-reporter=spec"),
        (["--test", "test/*.test.js"], "test/*.test.js"),
        (["--watch", "--test"], "--watch"),
    ],
)
def test_node_test_options_not_carried_are_named(
    tmp_path: Path, words: list[str], named: str
) -> None:
    with pytest.raises(Unsupported, match=re.escape(named)):
        node_test.command_for(words, "node", tmp_path / "out")


def test_node_test_counts_not_nodes_fail_closed(tmp_path: Path) -> None:
    """A reporter's lines whose tests do not add up to Node's closing counts (or with no
    counts) are an unreadable report, never a pass."""
    test: dict[str, Any] = {
        "type": "pass",
        "kind": "test",
        "name": "a",
        "parents": [],
        "file": None,
    }
    counts = ["tests 2", "pass 2", "fail 0", "cancelled 0", "skipped 0", "todo 0"]
    lines = [test, *({"type": "diagnostic", "message": c} for c in counts)]
    raw = "\n".join(json.dumps(line) for line in lines).encode()
    with pytest.raises(CheckOutputError, match="counted"):
        node_test.parse_node_test(raw, tmp_path, tmp_path)
    with pytest.raises(CheckOutputError, match="no closing counts"):
        node_test.parse_node_test(json.dumps(test).encode(), tmp_path, tmp_path)


NODE_LINE = re.compile(r"^(?:ℹ|#) (tests|pass|fail|cancelled|skipped|todo) (\d+)$")


def test_node_test_part_runs_with_nodes_counts_and_status(tmp_path: Path) -> None:
    """``"test": "node --test test/"``: qbench runs it, each test with its file and line (Node
    20 and later), its counts Node's own closing counts (``# tests 6``...), its exit status
    Node's (main: no test, the part not run)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    write_json(tmp_path / "package.json", {"name": "n", "scripts": {"test": "node --test test/"}})
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.js").write_text(NODE_TESTS)
    own = subprocess.run(
        [node, "--test", "test/"], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    oracle = {m[1]: int(m[2]) for line in own.stdout.splitlines() if (m := NODE_LINE.match(line))}
    assert oracle["tests"] == 6, own.stdout
    done, report, _ = qbench_test(tmp_path)
    assert done.returncode == own.returncode == 1, done.stdout + done.stderr
    s = report.summary
    assert (s.total, s.passed, s.failed, s.skipped, s.other.get("todo", 0)) == (
        oracle["tests"],
        oracle["pass"],
        oracle["fail"],
        oracle["skipped"],
        oracle["todo"],
    )
    failed = {(r.nodeid, r.failure.file, r.failure.line) for r in report.results if r.failure}
    assert failed == {
        ("test/a.test.js > fails", "test/a.test.js", 5),
        ("test/a.test.js > group > inner fails", "test/a.test.js", 11),
    }
    assert {r.runner for r in report.results} == {"node"}
    assert report.run.tool == "node"
    assert report.collection_errors == []


def test_an_eslint_part_leaves_the_runs_own_store_out(tmp_path: Path) -> None:
    """``qbench test --dir qa-store`` on ``"test": "vitest run && eslint ."``: the store below
    the package is not linted (a file there with an error is not counted), as under ``qbench
    check``; the package's own file is."""
    (tmp_path / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    write_json(tmp_path / "package.json", {"name": "web", "type": "module"})
    (tmp_path / "eslint.config.js").write_text(
        'export default [{ rules: { "no-debugger": "error" } }];\n'
    )
    (tmp_path / "mine.js").write_text("debugger;\n")
    log_dir = tmp_path / "qa-store" / "runs" / "20261127T000000Z-abcdef"
    log_dir.mkdir(parents=True)
    (log_dir / "left.js").write_text("debugger;\n")
    done = script_checks.run_part("eslint .", tmp_path, log_dir, 600, None)
    assert done is not None
    assert [(d.file, d.code) for d in done.diagnostics] == [("mine.js", "no-debugger")]
    assert done.problems == []


@pytest.mark.parametrize(
    ("words", "tail"),
    [
        (["--noEmit", "-p", "tsconfig.app.json"], ["-p", "tsconfig.app.json", "--noEmit"]),
        (["--project=web", "--noEmit", "--pretty", "false"], ["-p", "web", "--noEmit"]),
        (["-b", "web", "--noEmit"], ["web/tsconfig.json"]),
        (["--build", "--noEmit"], ["tsconfig.json"]),
    ],
)
def test_tsc_options_carried(tmp_path: Path, words: list[str], tail: list[str]) -> None:
    """tsc's ``-p X`` is given as written; ``-b [X]`` runs ``tsc -b``'s own builder
    (`tsc.BUILD`) on X's ``tsconfig.json``, nothing written; ``--pretty`` is qbench's."""
    (tmp_path / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    (tmp_path / "web").mkdir()
    plan = script_checks.plan_tsc(words, tmp_path, tmp_path / "scratch")
    if words[0].startswith(("-b", "--build")):
        assert plan.command[1].endswith("tsc_build.js")
        assert plan.command[3:5] == [*tail, str(tmp_path / "scratch")]
    else:
        assert plan.command[1:4] == tail
        assert plan.command[-2:] == ["--pretty", "false"]


@pytest.mark.parametrize("formatted", [True, False])
def test_a_prettier_check_part_runs_and_names_each_file(tmp_path: Path, formatted: bool) -> None:
    """``"test": "prettier --check src --no-semi"``: qbench runs Prettier's check, each file it
    would format otherwise an error at that file, its verdict ``npm test``'s (main: not run,
    `script-part-not-run`, exit 1 either way)."""
    tools = node_modules(FORMAT_PACKAGES)
    (tmp_path / ".git").mkdir()
    (tmp_path / "node_modules").symlink_to(tools, target_is_directory=True)
    script = "prettier --check src --no-semi --log-level warn"
    write_json(tmp_path / "package.json", {"name": "fmt", "scripts": {"test": script}})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "good.js").write_text("export const a = 1\n")
    (tmp_path / "src" / "bad.js").write_text(
        "export const b = 1\n" if formatted else "export const   b=1;\n"
    )
    done, report, _ = qbench_test(tmp_path)
    errors = [(e.tool, e.code, e.file) for e in report.collection_errors]
    npm = shutil.which("npm")
    own = (
        subprocess.run([npm, "test"], cwd=tmp_path, capture_output=True, timeout=600)
        if npm
        else None
    )
    if formatted:
        assert (done.returncode, errors) == (5, []), done.stdout + done.stderr
        assert own is None or own.returncode == 0
        return
    assert done.returncode == 1
    assert errors == [("prettier.format", "not-formatted", "src/bad.js")], report.collection_errors
    assert "ERROR prettier.format src/bad.js not-formatted: not formatted" in done.stdout
    assert own is None or own.returncode == 1


@pytest.mark.parametrize(
    ("words", "refused"),
    [(["--write", "."], "cannot carry: --write"), (["."], "without --check")],
)
def test_a_prettier_that_writes_is_refused(tmp_path: Path, words: list[str], refused: str) -> None:
    with pytest.raises(Unsupported, match=re.escape(refused)):
        prettier.plan_check(words, tmp_path)


@pytest.mark.parametrize(
    ("words", "names"),
    [
        (["run-p", "lint:*"], ["lint:js", "lint:css"]),
        (["npm-run-all", "-s", "lint:**", "unit"], ["lint:js", "lint:css", "lint:js:fix", "unit"]),
        (["run-s", "missing"], None),
        (["eslint", "."], None),
    ],
)
def test_npm_run_all_runs_the_scripts_it_names(words: list[str], names: list[str] | None) -> None:
    """``run-p lint:*`` runs each script its glob matches (``*`` within a ``:`` part, ``**``
    across them), so their commands are the script's (main: `run-p lint:*` a part not run)."""
    from pytest_qbench.tools.js.project import Package
    from pytest_qbench.tools.js.scripts import parts_besides
    from pytest_qbench.tools.js.scripts import run_all

    scripts = {
        "test": "run-s lint unit",
        "lint": "run-p lint:*",
        "lint:js": "eslint src",
        "lint:css": "stylelint x",
        "lint:js:fix": "eslint --fix src",
        "unit": "vitest run",
    }
    package = Package(Path("."), "x", {"scripts": scripts})
    assert run_all(package, words) == names
    assert parts_besides(package, ["vitest"]) == ["eslint src", "stylelint x"]
