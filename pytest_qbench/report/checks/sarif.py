"""SARIF 2.1.0 from any tool (eslint, semgrep, bandit, CodeQL...) into diagnostics (issue 13):
``ruleId``, ``level``, ``message.text`` and the first location's ``physicalLocation`` (its
``artifactLocation.uri`` and ``region``). A malformed file is refused with the JSON path of the
problem. Every name and message kept is bounded (a SARIF file is another tool's output, or an
attacker's), and each result's JSON is let go once read, so a large file is held about once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from urllib.parse import urlparse

from pytest_qbench.core.errors import SarifFormatError
from pytest_qbench.report.checks.spans import Snippets
from pytest_qbench.report.checks.spans import cut
from pytest_qbench.report.checks.spans import relative_file
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import Severity


MAX_NAME = 200
"""Characters kept of a tool's name and of a rule id."""
MAX_FILE = 1000
"""Characters kept of a result's file."""
MAX_MESSAGE = 4000
"""Characters kept of a result's message."""

LEVELS: dict[str, Severity] = {
    "error": "error",
    "warning": "warning",
    "note": "info",
    "none": "info",
}
"""SARIF's levels; a result without one is a ``warning`` (SARIF 2.1.0, 3.27.10)."""


class _Reader:
    """Walks one SARIF document, raising with the JSON path of the first problem."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> SarifFormatError:
        """The error for ``problem`` at ``path``."""
        return SarifFormatError(f"{self.source}: {path}: {problem}; not valid SARIF 2.1.0")

    def get(self, node: dict[str, Any], path: str, key: str, kind: type, required: bool) -> Any:
        """``node[key]`` checked to be a ``kind``; ``None`` when absent and not required."""
        if key not in node or node[key] is None:
            if required:
                raise self.fail(f"{path}.{key}", "missing")
            return None
        value = node[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(f"{path}.{key}", f"must be {_KIND_NAMES[kind]}, given {value!r:.60}")
        return value


_KIND_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer"}


def parse_sarif(raw: bytes, source: str, cwd: Path) -> Iterator[tuple[str, list[Diagnostic]]]:
    """Each run of a SARIF log: its tool's name and its results as diagnostics.

    Raises:
        SarifFormatError: not JSON, not version 2.1.0, or a field of the wrong type.
    """
    reader = _Reader(source)
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise reader.fail("$", f"not JSON ({exc})") from None
    except RecursionError:
        raise reader.fail("$", "JSON nested too deep") from None
    if not isinstance(document, dict):
        raise reader.fail("$", "must be an object")
    version = reader.get(document, "$", "version", str, required=True)
    if version != "2.1.0":
        raise reader.fail("$.version", f"is {version!r}, only '2.1.0' is read")
    snippets = Snippets(cwd)
    files: dict[str, str] = {}
    runs = reader.get(document, "$", "runs", list, required=True)
    del document
    for index, run in enumerate(runs):
        runs[index] = None  # let it go once read
        yield _read_run(reader, run, f"$.runs[{index}]", files, snippets)


def _read_run(
    reader: _Reader, run: Any, path: str, files: dict[str, str], snippets: Snippets
) -> tuple[str, list[Diagnostic]]:
    if not isinstance(run, dict):
        raise reader.fail(path, "must be an object")
    tool = reader.get(run, path, "tool", dict, required=True)
    driver = reader.get(tool, f"{path}.tool", "driver", dict, required=True)
    name = reader.get(driver, f"{path}.tool.driver", "name", str, required=True)
    results = reader.get(run, path, "results", list, required=False) or []
    name = cut(name, MAX_NAME)
    found = []
    for index, result in enumerate(results):
        results[index] = None  # let it go once read
        found.append(
            _read_result(reader, result, f"{path}.results[{index}]", name, files, snippets)
        )
    return name, found


def _read_result(
    reader: _Reader,
    result: Any,
    path: str,
    tool: str,
    files: dict[str, str],
    snippets: Snippets,
) -> Diagnostic:
    if not isinstance(result, dict):
        raise reader.fail(path, "must be an object")
    message = reader.get(result, path, "message", dict, required=True)
    text = reader.get(message, f"{path}.message", "text", str, required=False)
    if text is None:  # a message given only by id, from the rule's messageStrings
        text = reader.get(message, f"{path}.message", "id", str, required=True)
    level = reader.get(result, path, "level", str, required=False) or "warning"
    if level not in LEVELS:
        raise reader.fail(
            f"{path}.level", f"must be one of {', '.join(LEVELS)}, given {level!r:.60}"
        )
    rule = reader.get(result, path, "rule", dict, required=False) or {}
    code = reader.get(result, path, "ruleId", str, required=False)
    code = code or reader.get(rule, f"{path}.rule", "id", str, required=False)
    where = _read_location(reader, result, path, files, snippets.cwd)
    return Diagnostic(
        tool=tool,
        severity=LEVELS[level],
        message=cut(text, MAX_MESSAGE),
        code=cut(code, MAX_NAME) if code else code,
        file=where["file"],
        line=where["line"],
        column=where["column"],
        end_line=where["end_line"],
        end_column=where["end_column"],
        code_snippet=where["snippet"] or snippets.line(where["file"], where["line"]),
    )


def _read_location(
    reader: _Reader, result: dict[str, Any], path: str, files: dict[str, str], cwd: Path
) -> dict[str, Any]:
    """The first location's file, region and snippet (all ``None`` when there is none)."""
    where: dict[str, Any] = dict.fromkeys(
        ("file", "line", "column", "end_line", "end_column", "snippet")
    )
    locations = reader.get(result, path, "locations", list, required=False) or []
    if not locations:
        return where
    path = f"{path}.locations[0]"
    if not isinstance(locations[0], dict):
        raise reader.fail(path, "must be an object")
    physical = reader.get(locations[0], path, "physicalLocation", dict, required=False)
    if physical is None:
        return where
    path = f"{path}.physicalLocation"
    artifact = reader.get(physical, path, "artifactLocation", dict, required=False) or {}
    uri = reader.get(artifact, f"{path}.artifactLocation", "uri", str, required=False)
    if uri and uri not in files:
        files[uri] = cut(_file_of(uri, cwd), MAX_FILE)
    where["file"] = files[uri] if uri else None
    region = reader.get(physical, path, "region", dict, required=False) or {}
    path = f"{path}.region"
    for key, field in (
        ("startLine", "line"),
        ("startColumn", "column"),
        ("endLine", "end_line"),
        ("endColumn", "end_column"),
    ):
        where[field] = reader.get(region, path, key, int, required=False)
    snippet = reader.get(region, path, "snippet", dict, required=False) or {}
    text = reader.get(snippet, f"{path}.snippet", "text", str, required=False)
    where["snippet"] = text.splitlines()[0][:240] if text and text.strip() else None
    return where


def _file_of(uri: str, cwd: Path) -> str:
    """A ``file://`` URI or a relative reference as a project-relative path."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return relative_file(unquote(parsed.path), cwd)
    return relative_file(unquote(uri), cwd)
