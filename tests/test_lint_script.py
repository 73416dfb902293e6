"""``qbench check``'s eslint as the package's own ``lint`` script runs it: its paths,
``--max-warnings``, ``-c``..., planned by the same code as a test script's eslint; a script
qbench cannot run as written is not run (exit 3), never read green. Real ESLint from the npm
registry (`node_tools`); skipped where Node is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from node_tools import node_modules
from node_tools import qbench_check


pytestmark = [pytest.mark.engine]

WARNING = "export const used = 1;\nconst unused = 2;\n"
"""Line 2: ``unused`` never used (no-unused-vars, a warning by the config)."""


def lint_project(directory: Path, scripts: dict[str, str]) -> Path:
    """A package in a repository with ESLint installed, ``no-unused-vars`` a warning, one
    warning in ``src/a.js``, an error (``no-debugger``) in ``other/b.js``."""
    (directory / ".git").mkdir(parents=True)
    (directory / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    manifest = {"name": "web", "type": "module", "scripts": scripts}
    (directory / "package.json").write_text(json.dumps(manifest))
    (directory / "eslint.config.js").write_text(
        'export default [{ rules: { "no-unused-vars": "warn", "no-debugger": "error" } }];\n'
    )
    (directory / "src").mkdir()
    (directory / "src" / "a.js").write_text(WARNING)
    (directory / "other").mkdir()
    (directory / "other" / "b.js").write_text("debugger;\n")
    return directory


def check(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """``qbench check --checker eslint ARGS --json``: its exit status and its one check."""
    code, report = qbench_check(["--checker", "eslint", *args], cwd)
    [one] = report["checks"]
    return code, one


def npm_run_lint(cwd: Path) -> int | None:
    """The oracle: ``npm run lint``'s own exit status (``None`` without npm)."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    done = subprocess.run([npm, "run", "lint"], cwd=cwd, capture_output=True, timeout=600)
    return done.returncode


@pytest.mark.parametrize(
    ("scripts", "status", "codes"),
    [
        ({"lint": "eslint src --max-warnings 0"}, 1, ["no-unused-vars", "max-warnings-exceeded"]),
        ({"lint": "eslint src --max-warnings 5"}, 0, ["no-unused-vars"]),
        (
            {"lint": "npm run lint:js", "lint:js": "npx eslint src --max-warnings=0"},
            1,
            ["no-unused-vars", "max-warnings-exceeded"],
        ),
        ({"lint": "TIMING= eslint src other"}, 1, ["no-unused-vars", "no-debugger"]),
        (
            {"lint": "eslint src other --rule 'no-debugger: off' --max-warnings 1"},
            0,
            ["no-unused-vars"],
        ),
        ({"lint": "next lint --max-warnings 0"}, 1, ["no-unused-vars", "max-warnings-exceeded"]),
        ({"lint": "next lint --dir other --no-cache"}, 1, ["no-debugger"]),
        (
            {"lint": "run-p lint:*", "lint:js": "eslint src --max-warnings 0", "lint:x": "echo"},
            1,
            ["no-unused-vars", "max-warnings-exceeded"],
        ),
    ],
)
def test_check_runs_eslint_as_the_lint_script_does(
    tmp_path: Path, scripts: dict[str, str], status: int, codes: list[str]
) -> None:
    """The ``lint`` script's paths and ``--max-warnings`` are eslint's in ``qbench check``
    (also through ``npm run lint:js`` or ``run-p lint:*``, and ``next lint``'s, on its
    directories): one warning
    over ``--max-warnings 0`` fails it as it fails ``npm run lint`` (main: clean, exit 0, and
    ``other/`` linted, which the script does not lint: exit 1 on its error where ``npm run
    lint`` exits 0 at ``--max-warnings 5``)."""
    web = lint_project(tmp_path, scripts)
    code, one = check(web)
    assert (code, sorted(d["code"] for d in one["diagnostics"])) == (status, sorted(codes)), one
    assert one["status"] == ("failed" if status else "clean")
    if "max-warnings" in scripts["lint"] + scripts.get("lint:js", ""):
        assert "--max-warnings" in one["run"]["command"]
    installed = not scripts["lint"].startswith(("next", "run-p"))  # next, npm-run-all: not here
    own = npm_run_lint(web) if installed else None
    assert own is None or (own != 0) == (status != 0)


def test_paths_given_replace_the_scripts_own_and_keep_its_limit(tmp_path: Path) -> None:
    """``qbench check other`` on ``"lint": "eslint src --max-warnings 0"``: ``other`` is linted
    instead of ``src``, with the script's limit."""
    web = lint_project(tmp_path, {"lint": "eslint src --max-warnings 0"})
    (web / "other" / "c.js").write_text(WARNING)
    code, one = check(web, "other")
    found = sorted((d["file"] or "", d["code"]) for d in one["diagnostics"])
    assert found == [
        ("", "max-warnings-exceeded"),
        ("other/b.js", "no-debugger"),
        ("other/c.js", "no-unused-vars"),
    ]
    assert code == 1


@pytest.mark.parametrize(
    ("scripts", "named"),
    [
        ({"lint": "eslint src --stdin"}, "cannot carry: --stdin"),
        ({"lint": "eslint src && eslint other --max-warnings 0"}, "runs eslint 2 times"),
        (
            {"lint": "node --max-old-space-size=4096 node_modules/eslint/bin/eslint.js src"},
            "does not run the same way",
        ),
        ({"lint": "eslint $DIRS"}, "cannot carry: $DIRS"),
    ],
)
def test_a_lint_script_qbench_cannot_run_as_written_is_not_run(
    tmp_path: Path, scripts: dict[str, str], named: str
) -> None:
    """A ``lint`` script whose eslint qbench cannot run as written: ``not_run``, exit 3, the
    note naming the script and what (main: eslint run on ``.`` without the script's rule,
    warnings or paths)."""
    web = lint_project(tmp_path, scripts)
    code, one = check(web)
    assert (code, one["status"]) == (3, "not_run"), one
    assert "the package's 'lint' script" in one["note"] and named in one["note"], one["note"]


def test_a_lint_scripts_fix_is_left_out_and_nothing_written(tmp_path: Path) -> None:
    """``"lint": "eslint src --fix"``: qbench lints without fixing (it writes nothing into the
    project) and lists what the fix would fix too: never fewer problems than the script."""
    web = lint_project(tmp_path, {"lint": "eslint src --fix --max-warnings 0"})
    (web / "src" / "a.js").write_text('export const used = 1;\nconst unused = "a";;\n')
    code, one = check(web)
    assert "--fix" not in one["run"]["command"]
    assert (web / "src" / "a.js").read_text().endswith(";;\n")
    assert code == 1
    assert "max-warnings-exceeded" in [d["code"] for d in one["diagnostics"]]


def test_without_a_lint_script_eslint_runs_as_before(tmp_path: Path) -> None:
    """No ``lint`` script running eslint (``"lint": "tsc"``): eslint on ``.`` with the
    project's configuration, a warning listed, an error failing."""
    web = lint_project(tmp_path, {"lint": "tsc --noEmit"})
    code, one = check(web)
    assert sorted(d["code"] for d in one["diagnostics"]) == ["no-debugger", "no-unused-vars"]
    assert code == 1
