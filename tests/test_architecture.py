"""The package's layers (docs/architecture.md): what the front ends load, and that the
import-linter contracts in pyproject.toml catch an import running the wrong way (issue 10)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_qbench


pytestmark = pytest.mark.engine


PACKAGE = Path(pytest_qbench.__file__).parent
PYPROJECT = Path(__file__).parent.parent / "pyproject.toml"

LOADED = """
import importlib, json, pkgutil, sys
import pytest_qbench.{package} as package
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(package: str) -> list[str]:
    """Every module in ``sys.modules`` after importing all of ``pytest_qbench.<package>``."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(package=package)],
        capture_output=True,
        text=True,
        check=True,
    )
    modules: list[str] = json.loads(done.stdout)
    return modules


@pytest.mark.parametrize(
    "package", ["cli", "mcp", "report", "history", "generate", "evaluation", "core"]
)
def test_front_ends_and_library_load_neither_plugin_nor_pytest(package: str) -> None:
    """Importing every module of cli/, mcp/ and the library loads no module of plugin/, and not
    pytest, pluggy or xdist (issue 10)."""
    if package == "mcp":
        pytest.importorskip("mcp")
    modules = loaded_modules(package)
    assert f"pytest_qbench.{package}" in modules
    wrong = [
        m
        for m in modules
        if m.startswith(("pytest_qbench.plugin", "_pytest", "xdist")) or m in ("pytest", "pluggy")
    ]
    assert wrong == []


def test_cli_does_not_load_mcp_until_asked(tmp_path: Path) -> None:
    """``qbench`` builds its parser and runs a command without loading any MCP module; only
    ``qbench mcp`` imports them (issue 10)."""
    code = (
        "import json, sys\n"
        "from pytest_qbench.cli import main\n"
        "main(['schema'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('pytest_qbench.mcp'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_contracts_fail_on_an_import_from_cli_into_plugin(tmp_path: Path) -> None:
    """The import-linter contracts pass on the package as it is, and fail once cli/ imports
    plugin/ inside a function (issue 10)."""
    pytest.importorskip("importlinter")
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint_imports is None:
        pytest.skip("lint-imports is not installed next to this Python")
    copy = tmp_path / "pytest_qbench"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")

    def lint() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [lint_imports, "--no-cache"],
            cwd=tmp_path,
            env={"PYTHONPATH": str(tmp_path), "PATH": str(Path(sys.executable).parent)},
            capture_output=True,
            text=True,
        )

    kept = lint()
    assert kept.returncode == 0, kept.stdout + kept.stderr
    cli = copy / "cli" / "__init__.py"
    cli.write_text(
        cli.read_text(encoding="utf-8")
        + "\n\ndef _sneak() -> None:\n    from pytest_qbench.plugin import session  # noqa: F401\n",
        encoding="utf-8",
    )
    broken = lint()
    assert broken.returncode == 1
    assert "pytest_qbench.cli is not allowed to import pytest_qbench.plugin" in broken.stdout
