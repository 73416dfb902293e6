"""ESLint's JSON formatter (``eslint -f json``) into diagnostics: an array of files, each with
its messages (severity 2 an error, 1 a warning; the rule as the code)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.core.summary_words import plural
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import Span
from pytest_qbench.report.checks.spans import decode
from pytest_qbench.report.checks.spans import json_array_items
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic


TOOL = "eslint.lint"
OK_CODES = frozenset({0, 1})
"""ESLint's documented exit statuses: 0 no error, 1 errors found (2 a configuration problem or
an internal error)."""
CONFIG_FILES = (
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc",
)
"""The files an ESLint configuration lives in (flat config first, then the legacy ones)."""


OWN_FILES = "**/.qbench/"
"""qbench's own directory, left out of ESLint's files: a flat configuration ignores no
dot-directory, and one linting JSON (eslint-plugin-jsonc, ``@antfu/eslint-config``) found
1 600 errors in qbench's earlier reports there (``.qbench/.gitignore`` is read by no ESLint)."""
_GLOB = re.compile(r"([\\*?\[\]{}()!+@])")
"""What an ignore pattern (minimatch) reads as a glob, escaped in a directory's name."""


def eslint_command(
    executable: str, paths: list[str], cwd: Path | None = None, store: Path | None = None
) -> list[str]:
    """The command: the project's configuration applies, qbench adds no rule; its files but
    qbench's own (`OWN_FILES`, and ``store``, the directory this run writes to, when it is
    another below ``cwd``: ``--dir reports/qbench``, ``--qbench-dir qa``)."""
    ignored = [OWN_FILES]
    if store is not None and cwd is not None:
        inside = own_directory(store, cwd)
        if inside is not None:
            ignored.append(inside)
    options = [word for pattern in ignored for word in ("--ignore-pattern", pattern)]
    return [executable, "-f", "json", *options, *(paths or ["."])]


def own_directory(store: Path, cwd: Path) -> str | None:
    """``store`` as an ignore pattern relative to ``cwd`` (``reports/qbench/``); ``None``
    when it is outside ``cwd`` (ESLint does not go there) or named ``.qbench`` (`OWN_FILES`)."""
    try:
        relative = store.resolve().relative_to(cwd.resolve())
    except ValueError:
        return None
    if not relative.parts or relative.name == ".qbench":
        return None
    return _GLOB.sub(r"\\\1", relative.as_posix()) + "/"


def parse_eslint(raw: bytes, cwd: Path) -> list[Diagnostic]:
    """Every message of every file ESLint printed, in its order.

    Raises:
        CheckOutputError: the output is not ESLint's JSON array of files.
    """
    snippets = Snippets(cwd)
    found: list[Diagnostic] = []
    for item, span in json_array_items(decode(raw), "eslint"):
        try:
            file = relative_file(str(item["filePath"]), cwd)
            found.extend(_diagnostic(one, file, snippets, span) for one in item["messages"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckOutputError(f"eslint printed an item without {exc}: {item!r:.200}") from None
    return found


def _diagnostic(message: Any, file: str, snippets: Snippets, span: Span) -> Diagnostic:
    line = message.get("line")
    return Diagnostic(
        tool=TOOL,
        severity="error" if int(message["severity"]) == 2 else "warning",
        message=str(message["message"]),
        code=message.get("ruleId") or ("parse-error" if message.get("fatal") else None),
        file=file,
        line=line,
        column=message.get("column"),
        end_line=message.get("endLine"),
        end_column=message.get("endColumn"),
        code_snippet=snippets.line(file, line),
        log_range=span.log_range(),
        byte_offsets=span.byte_offsets(),
    )


TOO_MANY_WARNINGS = "max-warnings-exceeded"
"""The code of the error saying eslint found more warnings than ``--max-warnings`` allows
(eslint then exits 1)."""


def parse_limited(
    limit: int | None,
    parse: Callable[[bytes, Path], list[Diagnostic]] = parse_eslint,
    tool: str = TOOL,
    allowed: str | None = None,
) -> Callable[[bytes, Path], list[Diagnostic]]:
    """``parse`` (`parse_eslint`), and with a warnings ``limit`` (``--max-warnings``; oxlint's
    ``--deny-warnings``, Biome's ``--error-on-warnings``: 0, said as ``allowed``) one more
    error (`TOO_MANY_WARNINGS`) when the warnings are more than it: the tool's exit 1 said,
    so a run with only warnings is not read as clean where the project's own run fails."""
    if limit is None:
        return parse
    name = tool.split(".")[0]

    def limited(raw: bytes, cwd: Path) -> list[Diagnostic]:
        found = parse(raw, cwd)
        warnings = sum(1 for item in found if item.severity == "warning")
        if warnings > limit:
            said = allowed or f"--max-warnings {limit}"
            message = f"{plural(warnings, 'warning')}, more than {said}: {name} exits 1"
            found.append(
                Diagnostic(tool=tool, severity="error", message=message, code=TOO_MANY_WARNINGS)
            )
        return found

    return limited
