"""The build check (issue 13): ``python -m build`` when the project has a ``pyproject.toml`` and
the ``build`` package is importable (PEP 517 backend errors), else byte-compiling the sources in a
child process (syntax errors)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.checks.spans import text_lines
from pytest_qbench.report.models import Diagnostic


BUILD_TOOL = "python.build"
COMPILE_TOOL = "python.compile"
OK_CODES = frozenset({0, 1})
"""Both commands end 0 when the project builds and 1 when it does not."""
MERGE_STDERR = True
"""``build`` prints its ``ERROR`` lines and the backend's messages on stderr: the log of the
build check is both streams together."""
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__", "build", "dist"}
)
"""Directories the byte-compiling never enters (nor any whose name starts with a dot)."""

COMPILE_SCRIPT = """\
import json, sys
failed = 0
for name in sys.argv[1:]:
    try:
        with open(name, "rb") as handle:
            compile(handle.read(), name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        failed = 1
        print(json.dumps({"file": name, "line": exc.lineno, "column": exc.offset,
            "end_line": getattr(exc, "end_lineno", None),
            "end_column": getattr(exc, "end_offset", None),
            "message": exc.msg, "type": type(exc).__name__}), flush=True)
    except (OSError, ValueError) as exc:
        failed = 1
        print(json.dumps({"file": name, "line": None, "column": None, "end_line": None,
            "end_column": None, "message": str(exc), "type": type(exc).__name__}), flush=True)
sys.exit(failed)
"""
"""Run by ``python -c``: one JSON line per file that does not compile."""


def build_command(python: str, outdir: str) -> list[str]:
    """``python -m build`` of the project in the working directory into ``outdir``."""
    return [python, "-m", "build", "--outdir", outdir, "."]


def compile_command(python: str, cwd: Path, paths: list[str]) -> list[str]:
    """Byte-compile every ``.py`` file under ``paths`` (relative to ``cwd``)."""
    return [python, "-c", COMPILE_SCRIPT, *source_files(cwd, paths)]


def source_files(cwd: Path, paths: list[str]) -> list[str]:
    """The ``.py`` files under ``paths``, sorted, skipping hidden and build directories."""
    found: set[str] = set()
    for given in paths:
        root = cwd / given
        if root.is_file():
            found.add(given)
            continue
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).parts[:-1]
            if not any(part in SKIPPED_DIRS or part.startswith(".") for part in parts):
                found.add(relative_file(str(path.resolve()), cwd))
    return sorted(found)


def parse_compile(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every file that does not compile, from the JSON lines of ``COMPILE_SCRIPT``.

    Raises:
        CheckOutputError: a line is not one of the script's.
    """
    snippets = Snippets(cwd)
    found = []
    for line, span in text_lines(decode(raw)):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            file = relative_file(str(item["file"]), cwd)
            found.append(
                Diagnostic(
                    tool=COMPILE_TOOL,
                    severity="error",
                    message=str(item["message"]),
                    code=str(item["type"]),
                    file=file,
                    line=item["line"],
                    column=item["column"],
                    end_line=item["end_line"],
                    end_column=item["end_column"],
                    code_snippet=snippets.line(file, item["line"]),
                    log_range=span.log_range(),
                    byte_offsets=span.byte_offsets(),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckOutputError(f"the byte-compiling printed {line:.200}: {exc}") from None
    return found


def parse_build(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """A failed build as one error: the last ``ERROR`` line ``build`` printed, with the last
    unindented line naming an error before it (the backend's cause), pointing at the ``ERROR``
    line in the log; nothing when no line starts with ``ERROR``.

    The log is ``build``'s stdout and stderr together (the backend's output, then its summary).
    """
    del cwd
    lines = list(text_lines(decode(raw)))
    errors = [index for index, (line, _) in enumerate(lines) if line.startswith("ERROR")]
    if not errors:
        return []
    line, span = lines[errors[-1]]
    causes = [text for text, _ in lines[: errors[-1]] if _names_a_cause(text)]
    message = line.strip() + (f" ({causes[-1].strip()[:300]})" if causes else "")
    return [
        Diagnostic(
            tool=BUILD_TOOL,
            severity="error",
            message=message,
            code="build-failed",
            log_range=span.log_range(),
            byte_offsets=span.byte_offsets(),
        )
    ]


def _names_a_cause(line: str) -> bool:
    """An unindented line of the backend's saying "error" (not a traceback frame, not build's
    own ``ERROR``, ``TIP`` or ``*`` progress lines)."""
    if not line.strip() or line[0].isspace() or line.startswith(("ERROR", "TIP", "*")):
        return False
    return "error" in line.lower()
