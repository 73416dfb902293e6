"""``qbench check --list``: every registered checker, where it comes from, and whether it
applies to the project here and is installed (issue 22)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pytest_qbench.core.exit_codes import ERR
from pytest_qbench.core.exit_codes import OK
from pytest_qbench.tools.frontend import find_frontend
from pytest_qbench.tools.spec import Checker
from pytest_qbench.tools.spec import NotInstalled


COLUMNS = ("name", "kind", "target", "distribution", "applies", "installed")


def print_checkers(root: Path, configured: str | None) -> int:
    """Print one line per checker (tab-separated, with a header), then each broken plugin on
    stderr; exit status 1 when a plugin is broken, else 0."""
    from pytest_qbench.tools.registry import registry  # pluggy: loaded by --list only

    found = registry()
    frontend = find_frontend(root, configured)
    print("\t".join(COLUMNS))
    for name, registered in found.checkers.items():
        checker = registered.tool
        where = frontend if checker.target == "frontend" else root
        applies = where is not None and checker.applies(where)
        installed = where is not None and is_installed(checker, where)
        row = (name, checker.kind, checker.target, registered.distribution, applies, installed)
        print("\t".join(yes_no(value) for value in row))
    for error in found.errors:
        print(f"qbench: error: {error.line()}", file=sys.stderr)
    return ERR if found.errors else OK


def is_installed(checker: Checker, where: Path) -> bool:
    """``checker.installed``, else whether it can be planned (its binary found)."""
    if checker.installed is not None:
        return checker.installed(where)
    with tempfile.TemporaryDirectory(prefix="qbench-list-") as scratch:
        try:
            checker.plan(where, [], Path(scratch))
        except NotInstalled:
            return False
        except Exception:  # a third party's planner failing: it cannot run here
            return False
    return True


def yes_no(value: object) -> str:
    """``yes``/``no`` for a bool, the text otherwise."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
