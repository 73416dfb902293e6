"""needs_llm_review: the functions still with uncovered lines after generation, with why."""

from __future__ import annotations

from pathlib import Path

from pytest_qbench.generate.coverage_gap import Lines
from pytest_qbench.generate.functions import Function
from pytest_qbench.generate.models import ReviewItem


def review_items(
    functions: dict[str, list[Function]], after: Lines, reasons: dict[str, list[str]], project: Path
) -> list[ReviewItem]:
    """One item per function with uncovered lines left, most uncovered first, then most
    complex."""
    items: list[ReviewItem] = []
    for module, gaps in functions.items():
        for function in gaps:
            missing = function.lines_in(after.missing(function.file))
            if not missing:
                continue
            why = reasons.get(f"{module}:{function.qualname}") or [
                f"generated tests did not reach lines {line_ranges(missing)}"
            ]
            items.append(
                ReviewItem(
                    function=function.qualname,
                    file=relative(function.file, project),
                    line=function.line,
                    reason="; ".join(dict.fromkeys(why)),
                    context=function.context,
                    complexity_score=float(function.complexity),
                    uncovered_lines=missing,
                )
            )
    items.sort(key=lambda i: (-len(i.uncovered_lines), -i.complexity_score, i.file, i.line))
    return items


def line_ranges(lines: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5, 9``."""
    parts: list[str] = []
    start = previous = lines[0]
    for line in [*lines[1:], None]:
        if line is not None and line == previous + 1:
            previous = line
            continue
        parts.append(f"{start}-{previous}" if previous != start else str(start))
        if line is not None:
            start = previous = line
    return ", ".join(parts)


def relative(path: Path, project: Path) -> str:
    """``path`` relative to ``project``, with ``/`` separators; else as it is."""
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return path.as_posix()
