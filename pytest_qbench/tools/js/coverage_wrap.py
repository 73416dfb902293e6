"""Coverage wrappers around a runner in a package's scripts (``c8 node --test``, ``c8 vitest
run``, ``nyc jest``): qbench runs the runner inside and not the wrapper, whose coverage report
is not made; a wrapper that checks a coverage threshold (``c8 --100``, ``nyc
--check-coverage``, or its configuration file saying so) fails ``npm test`` when coverage is
under it, which qbench cannot decide: such a command is refused (fails closed), never run as
if the threshold were met.

Standard library only; nothing here starts a process.
"""

from __future__ import annotations

import json
from pathlib import Path


WRAPPERS = frozenset({"c8", "nyc"})
"""The coverage wrappers qbench reads."""
_LAUNCHERS = frozenset({"npx", "pnpx", "bunx"})
_INNER = frozenset({"node", "vitest", "jest", "mocha", "tsx", "ts-node", "ava", "tap"})
"""The names a wrapped command starts with (qbench runs node, vitest and jest)."""
_THRESHOLD_OPTIONS = frozenset(
    {"--100", "--check-coverage", "--lines", "--functions", "--branches", "--statements"}
)
"""The wrappers' options that set or check a threshold (``--lines 90`` alone sets one that
``--check-coverage`` checks: read as a threshold too)."""
_THRESHOLD_KEYS = frozenset(
    {"100", "check-coverage", "checkCoverage", "lines", "functions", "branches", "statements"}
)
_JSON_CONFIGS = (".c8rc", ".c8rc.json", ".nycrc", ".nycrc.json")
"""The wrappers' JSON configuration files (c8 reads the first two and nyc's)."""
_OTHER_CONFIGS = (
    ".c8rc.yml",
    ".c8rc.yaml",
    ".c8rc.js",
    ".c8rc.cjs",
    ".nycrc.yml",
    ".nycrc.yaml",
    "nyc.config.js",
    "nyc.config.cjs",
    "nyc.config.mjs",
)
"""Their configuration files qbench does not read (YAML, code)."""


def unwrap(words: list[str]) -> tuple[list[str], list[str]]:
    """A command's ``words`` (its variables first) as the wrapper's words (``["c8",
    "--100"]``; empty: no wrapper) and the words it runs, variables kept in front (``A=1 c8 -r
    lcov node --test`` as ``["c8", "-r", "lcov"]`` and ``["A=1", "node", "--test"]``); the
    wrapped command starts at the first word naming a runner (`_INNER`)."""
    at = 0
    while at < len(words) and "=" in words[at] and not words[at].startswith("-"):
        at += 1
    start = at + 1 if at < len(words) and words[at] in _LAUNCHERS else at
    if start >= len(words) or words[start].rsplit("/", 1)[-1] not in WRAPPERS:
        return [], words
    for inner in range(start + 1, len(words)):
        if words[inner].rsplit("/", 1)[-1] in _INNER:
            return words[start:inner], [*words[:at], *words[inner:]]
    return [], words


def threshold(wrapper: list[str], cwd: Path) -> str | None:
    """What makes the ``wrapper`` (`unwrap`) check a coverage threshold, run in ``cwd``: its
    option (``--100``), its configuration (``.c8rc.json`` saying ``check-coverage``, the
    ``c8``/``nyc`` key of ``package.json``), or a configuration file qbench does not read
    (``nyc.config.js``: it may); ``None`` when nothing does."""
    for word in wrapper[1:]:
        if word.partition("=")[0] in _THRESHOLD_OPTIONS:
            return f"its option {word}"
    name = wrapper[0].rsplit("/", 1)[-1] if wrapper else "c8"
    for config in _OTHER_CONFIGS:
        if (cwd / config).is_file():
            return f"its configuration {config}, which qbench does not read"
    sources = [
        (config, _read(cwd / config)) for config in _JSON_CONFIGS if (cwd / config).is_file()
    ]
    manifest = _read(cwd / "package.json")
    if isinstance(manifest, dict) and name in manifest:
        sources.append((f"package.json's {name!r}", manifest[name]))
    for where, loaded in sources:
        if not isinstance(loaded, dict):
            return f"its configuration {where}, which qbench cannot read"
        keys = sorted(_THRESHOLD_KEYS & {str(key) for key in loaded})
        if keys:
            return f"its configuration {where} ({keys[0]})"
    return None


def _read(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


NOT_RUN = "coverage-wrapper-not-run"
"""The code of the note saying a runner ran without the coverage wrapper the script runs it
under (which checks no threshold)."""
REFUSED = "runner-options-refused"
"""The code of the error refusing a runner whose wrapper checks a threshold (the refusal's)."""


def note(label: str, wrapper: list[str]) -> str:
    """The note for ``label`` (the runner and where) run without ``wrapper``."""
    return (
        f"{label}: the test script runs it under `{' '.join(wrapper)[:200]}`, which qbench does "
        "not run: the tests are the same, the wrapper's coverage report is not made, and it "
        "checks no coverage threshold (none to check)"
    )


def refusal(runner: str, wrapper: list[str], why: str) -> str:
    """Why ``runner`` is not run: the test script's ``wrapper`` around it checks a coverage
    threshold (``why``)."""
    return (
        f"the test script runs {runner} under `{' '.join(wrapper)[:200]}`, whose "
        f"coverage threshold ({why}) fails the test script when coverage is under it, which "
        "qbench cannot check; check coverage with the runner's own thresholds (vitest's "
        "coverage.thresholds, jest's coverageThreshold), or run the script yourself"
    )
