"""The static checks of a test run (``--qbench-check``, issue 13.4) as report records: the
diagnostics (errors first, bounded), the counts per tool and severity, the terminal lines, the
digest's next steps, the GitHub annotations and the ``--qbench-max-errors`` gate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

from pytest_qbench.core.summary_words import plural
from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.models import CheckRun
    from pytest_qbench.report.records import CheckRunRecord
    from pytest_qbench.report.records import DiagnosticRecord
    from pytest_qbench.report.records import GateResultRecord


SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
MAX_REPORT_DIAGNOSTICS = 1000
"""Diagnostics kept in ``report.json`` (errors first); the counts hold every one."""
MAX_STEPS = 3
"""Checker errors the digest turns into next steps."""
KINDS = {"typecheck": "type error", "lint": "lint error", "build": "build error"}


def report_parts(
    checks: Iterable[CheckRun],
) -> tuple[list[CheckRunRecord], list[DiagnosticRecord], dict[str, dict[str, int]]]:
    """The checks (without their diagnostics), the diagnostics (errors first, bounded) and
    the counts per tool and severity, as records."""
    runs: list[CheckRunRecord] = []
    found: list[DiagnosticRecord] = []
    counts: dict[str, dict[str, int]] = {}
    for check in checks:
        record = cast("CheckRunRecord", check.model_dump(mode="json"))
        items = record["diagnostics"]
        record["diagnostics"] = []
        runs.append(record)
        per: Counter[str] = Counter(str(item["severity"]) for item in items)
        counts[check.run.tool] = {s: per[s] for s in SEVERITY_ORDER if per[s]}
        found.extend(items)
    found.sort(key=lambda item: SEVERITY_ORDER[item["severity"]])
    return runs, found[:MAX_REPORT_DIAGNOSTICS], counts


def error_count(counts: dict[str, dict[str, int]]) -> int:
    """Errors over every checker."""
    return sum(per.get("error", 0) for per in counts.values())


def count_line(check: CheckRunRecord | dict[str, Any], counts: dict[str, int]) -> str:
    """``ruff.lint: 2 errors, 1 warning``, ``ruff.lint: clean``, ``mypy.typecheck: not run:
    install mypy`` or ``mypy.typecheck: crashed (note)``."""
    tool = check["run"]["tool"]
    if check["status"] == "not_run":
        return f"{tool}: {check['note']}"
    if check["status"] == "crashed":
        return f"{tool}: crashed: {check['note']}"
    return f"{tool}: {severity_text(counts)}"


def severity_text(counts: Mapping[str, int]) -> str:
    """``2 errors, 1 warning`` (worst first), or ``clean``."""
    parts = [plural(n, s) for s in SEVERITY_ORDER if (n := counts.get(s, 0))]
    return ", ".join(parts) or "clean"


def where(item: DiagnosticRecord | dict[str, Any]) -> str:
    """``a.py:142:5`` (the parts known), or the tool's name when no file is known."""
    parts = [str(p) for p in (item["file"], item["line"], item["column"]) if p is not None]
    return ":".join(parts) or str(item["tool"])


def diagnostic_step(item: DiagnosticRecord | dict[str, Any]) -> str:
    """``Fix type error in a.py:142 (arg-type): message`` for the digest."""
    if item["code"] == "checker-crashed":
        return f"Fix or reinstall {item['tool']}: {' '.join(item['message'].split())[:200]}"
    kind = KINDS.get(str(item["tool"]).rpartition(".")[2], "error")
    at = ":".join(str(p) for p in (item["file"], item["line"]) if p is not None)
    code = f" ({item['code']})" if item["code"] else ""
    message = " ".join(item["message"].split())[:160]
    return f"Fix {kind} in {at or item['tool']}{code}: {message}"


def diagnostic_steps(diagnostics: Iterable[DiagnosticRecord | dict[str, Any]]) -> list[str]:
    """Next steps for the first checker errors."""
    errors = [item for item in diagnostics if item["severity"] == "error"]
    return [diagnostic_step(item) for item in errors[:MAX_STEPS]]


def max_errors_gate(
    counts: dict[str, dict[str, int]],
    maximum: int,
    not_run: Iterable[str] = (),
    crashed: Iterable[str] = (),
) -> GateResultRecord:
    """The ``--qbench-max-errors`` verdict: passed when the errors are at most ``maximum`` and
    every checker ran to its end; a checker that did not run (not installed), crashed or was
    stopped at the timeout leaves its errors uncounted, so the gate cannot pass."""
    errors = error_count(counts)
    by_tool = ", ".join(
        f"{tool} {per['error']}" for tool, per in counts.items() if per.get("error")
    )
    detail = plural(errors, "checker error") + (f" ({by_tool})" if by_tool else "")
    missing, broken = list(not_run), list(crashed)
    passed = errors <= maximum and not missing and not broken
    detail += f", {'at most' if errors <= maximum else 'more than'} the {maximum} allowed"
    if missing:
        detail += (
            f"; {', '.join(missing)} did not run, so its errors are not counted: install it, "
            "or leave it out of --qbench-check"
        )
    if broken:
        detail += (
            f"; {', '.join(broken)} crashed or did not finish, so its errors are not counted: "
            "fix it (see its log), or raise --qbench-check-timeout"
        )
    return new(
        "GateResult",
        kind="max_errors",
        name=", ".join(counts) or "checkers",
        passed=passed,
        detail=detail,
        value=float(errors),
        threshold=float(maximum),
    )
