"""``node --test`` (Node's built-in test runner) as a command of a package's ``test`` script
(``"test": "vitest run && node --test test/"``), run by ``qbench test`` as written, with
qbench's reporter (`REPORTER`: each ended test as a JSON line, with the file, line and column
Node gives on Node 20 and later) writing to a file: its tests in the run, named ``node``; its
counts checked against Node's own closing counts (``tests``, ``pass``, ``fail``,
``cancelled``, ``skipped``, ``todo``), its exit status as Node's.

Refused (``runner-options-refused``, fails closed): a reporter of the script's own
(``--test-reporter``: qbench's replaces it), ``--watch`` (never ends), a word the shell would
expand that qbench does not expand as it would (``$VAR``, a glob in a script with quotes: see
`expand`), and a Node older than 20.
"""

from __future__ import annotations

import glob
import json
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import CheckOutputError
from pytest_qbench.report.models import Diagnostic
from pytest_qbench.report.models import TestResult
from pytest_qbench.tools.execute import run_supervised
from pytest_qbench.tools.js import coverage_wrap
from pytest_qbench.tools.js.coverage_wrap import unwrap
from pytest_qbench.tools.js.results import SEPARATOR
from pytest_qbench.tools.js.results import make_failure
from pytest_qbench.tools.js.results import relative
from pytest_qbench.tools.js.scripts import split
from pytest_qbench.tools.problems import CRASHED
from pytest_qbench.tools.problems import problem
from pytest_qbench.tools.spec import Unsupported


RUNNER = "node"
"""The runner named on the results of ``node --test``."""
REPORTER = Path(__file__).with_name("node_test_reporter.mjs")
OK_CODES = frozenset({0, 1})
"""``node --test``'s exit statuses: 0 every test passed (or skipped, or todo), 1 one failed
or was cancelled; any other is a crash."""
MIN_NODE = 20
"""The oldest Node whose test events give the line and column qbench reads (and a custom
reporter)."""
_VALUED = frozenset(
    {
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "--test-name-pattern",
        "--test-skip-pattern",
        "--test-concurrency",
        "--test-timeout",
        "--env-file",
        "-C",
        "--conditions",
        "--input-type",
        "--test-shard",
    }
)
"""Node's options whose value may follow as the next word."""
_REFUSED = {
    "--test-reporter": "qbench's reporter replaces the script's",
    "--test-reporter-destination": "qbench's reporter writes its own file",
    "--watch": "a watching run never ends",
}
_SHELL = re.compile(r"[$`*?\[\]{}~]")
"""A word the shell would expand (``test/*.test.js``, ``$DIR``); qbench runs no shell."""
_GLOB = re.compile(r"[*?\[]")
"""A word ``sh`` expands as a glob."""
_COUNTS = re.compile(r"^(tests|pass|fail|cancelled|skipped|todo) (\d+)$")


@dataclass
class NodeRun:
    """What ``node --test`` gave."""

    part: str
    results: list[TestResult] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)
    """What the run did otherwise than the script (a coverage wrapper not run)."""


def node_test_words(part: str) -> tuple[dict[str, str], list[str]] | None:
    """The variables set before it and the words after ``node`` of a ``node --test``
    command, also under a coverage wrapper (``c8 node --test``: `coverage_wrap`); ``None`` for
    any other command (``node build.js``)."""
    _, words = unwrap(split(part))  # c8 node --test: its wrapper is not run (run_part)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if not words or words[0].rsplit("/", 1)[-1] != "node":
        return None
    rest = words[1:]
    number = 0
    while number < len(rest):
        word = rest[number]
        number += 1
        if word == "--test":
            return env, rest
        if not word.startswith("-"):
            return None  # node script.js: a script, not the test runner
        if word in _VALUED:
            number += 1
    return None


def node_major(node: str) -> int | None:
    """The major version of ``node`` (``v20.20.2``: 20); ``None`` when it does not say."""
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"v(\d+)\.", done.stdout.strip())
    return int(found[1]) if found else None


def expand(words: list[str], part: str, cwd: Path) -> list[str]:
    """``words`` with each unquoted glob expanded in ``cwd`` as ``sh`` expands it (npm runs
    scripts with ``sh``: ``**`` as ``*``, no globstar; the matches sorted; a glob matching
    nothing kept as written); a script with quotes in it is left as it is (a quoted glob is
    Node's own to expand, from Node 21, and qbench cannot tell which words were quoted)."""
    if "'" in part or '"' in part:
        return words
    found: list[str] = []
    for word in words:
        if word.startswith("-") or not _GLOB.search(word):
            found.append(word)
            continue
        found += sorted(glob.glob(word, root_dir=cwd)) or [word]
    return found


def command_for(words: list[str], node: str, output: Path) -> list[str]:
    """``node WORDS`` (globs expanded: `expand`) with qbench's reporter writing to
    ``output``.

    Raises:
        Unsupported: a refused option (`_REFUSED`), or a word the shell would expand.
    """
    refused = [
        f"{w} ({_REFUSED[w.partition('=')[0]]})" for w in words if w.partition("=")[0] in _REFUSED
    ]
    shell = [w for w in words if _SHELL.search(w)]
    if shell:
        refused.append(f"{shell[0]} (its shell expands it; qbench runs no shell)")
    if refused:
        raise Unsupported(f"node --test options qbench cannot carry: {', '.join(refused)}")
    at = words.index("--test") + 1
    mine = [f"--test-reporter={REPORTER}", f"--test-reporter-destination={output}"]
    return [node, *words[:at], *mine, *words[at:]]


def run_part(
    part: str, cwd: Path, root: Path, log_dir: Path, timeout: float, stop: threading.Event | None
) -> NodeRun | None:
    """Run the ``node --test`` command ``part`` of the test script in ``cwd``; ``None`` when
    it is no such command."""
    found = node_test_words(part)
    if found is None:
        return None
    env, words = found
    done = NodeRun(part)
    label = f"node --test ({cwd.name}), the test script's `{part[:200]}`"
    wrapper, _ = unwrap(split(part))
    why = coverage_wrap.threshold(wrapper, cwd) if wrapper else None
    if why is not None:
        message = f"{label}: not run: {coverage_wrap.refusal('node --test', wrapper, why)}"
        done.problems.append(problem(RUNNER, message, coverage_wrap.REFUSED))
        return done
    if wrapper:
        message = coverage_wrap.note(label, wrapper)
        done.notes.append(
            Diagnostic(tool=RUNNER, severity="info", message=message, code=coverage_wrap.NOT_RUN)
        )
    node = shutil.which("node")
    if node is None:
        message = f"{label}: node is not on PATH: install Node.js {MIN_NODE} or later"
        done.problems.append(problem(RUNNER, message, "runner-not-installed"))
        return done
    major = node_major(node)
    if major is None or major < MIN_NODE:
        message = (
            f"{label}: not run: Node {major or '(unknown version)'}: qbench reads node --test "
            f"on Node {MIN_NODE} and later"
        )
        done.problems.append(problem(RUNNER, message, "runner-options-refused"))
        return done
    log_name = f"node-{len(list(log_dir.glob('node-*.log'))) + 1}"
    with tempfile.TemporaryDirectory(prefix="qbench-node-") as scratch:
        output = Path(scratch) / "node-test.jsonl"
        try:
            command = command_for(expand(words, part, cwd), node, output)
        except Unsupported as exc:
            message = f"{label}: not run: {exc}; write the command plainly, or run it yourself"
            done.problems.append(problem(RUNNER, message, "runner-options-refused"))
            return done
        ran = run_supervised(command, cwd, log_dir, log_name, timeout, stop, env)
        raw_in = f"raw output in {ran.log.name}"
        if ran.problem is not None:
            done.problems.append(problem(RUNNER, f"{label}: {ran.problem}; {raw_in}", CRASHED))
            return done
        if ran.exit_code not in OK_CODES or not output.is_file():
            why = f"exit code {ran.exit_code}" + ("" if output.is_file() else ", no report")
            done.problems.append(problem(RUNNER, f"{label} crashed: {why}; {raw_in}", CRASHED))
            return done
        try:
            done.results = parse_node_test(output.read_bytes(), root, cwd)
        except CheckOutputError as exc:
            done.problems.append(problem(RUNNER, f"{label}: {exc}; {raw_in}", CRASHED))
            return done
    failed = any(r.outcome in ("failed", "error") for r in done.results)
    if ran.exit_code != 0 and not failed:
        message = f"{label} exited {ran.exit_code} with no failed test; {raw_in}"
        done.problems.append(problem(RUNNER, message, CRASHED))
    elif ran.exit_code == 0 and failed:
        message = f"{label} exited 0 with a failed test; {raw_in}"
        done.problems.append(problem(RUNNER, message, CRASHED))
    return done


def parse_node_test(raw: bytes, root: Path, cwd: Path) -> list[TestResult]:
    """Every test qbench's reporter wrote (files relative to ``root``), a suite that failed
    outside its tests (a failing ``before`` hook) as one ``error``.

    Raises:
        CheckOutputError: a line that is not the reporter's JSON, no closing counts from
            Node, or counts not Node's.
    """
    results: list[TestResult] = []
    counts: dict[str, int] = {}
    mine = {"tests": 0, "pass": 0, "fail": 0, "cancelled": 0, "skipped": 0, "todo": 0}
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            if event["type"] == "diagnostic":
                found = _COUNTS.match(str(event["message"]))
                if found:
                    counts[found[1]] = int(found[2])
                continue
            result, counted = _result(event, root, cwd)
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckOutputError(
                f"node --test reporter line unreadable ({exc}): {line:.200}"
            ) from None
        if result is None:
            continue
        results.append(result)
        if counted is not None:
            mine["tests"] += 1
            mine[counted] += 1
    if set(counts) != set(mine):
        raise CheckOutputError(f"node --test gave no closing counts (read: {counts})")
    if counts != mine:
        raise CheckOutputError(f"node --test counted {counts}, its tests read {mine}")
    return results


def _result(event: dict[str, Any], root: Path, cwd: Path) -> tuple[TestResult | None, str | None]:
    """One reporter line as a result, and which of Node's counts it is in (``None``: a suite,
    in none)."""
    suite = event["kind"] == "suite"
    failure_type = event.get("failureType")
    if suite and (event["type"] == "pass" or failure_type in ("subtestsFailed", None)):
        return None, None
    file = relative(str(event["file"]), root, cwd) if event.get("file") else "(node --test)"
    titles = [str(t) for t in event.get("parents") or [] if t is not None]
    name = str(event["name"])
    if event.get("file") and name == str(event["file"]):
        name = ""  # a file that failed outside its tests: Node names it by its path
    line = event.get("line") if isinstance(event.get("line"), int) else None
    todo, skip = event.get("todo") not in (False, None), event.get("skip") not in (False, None)
    failure = None
    if todo:
        outcome, counted, reason = "skipped", "todo", "todo"
    elif skip:
        outcome, counted, reason = "skipped", "skipped", None
    elif event["type"] == "pass":
        outcome, counted, reason = "passed", "pass", None
    else:
        cancelled = failure_type == "cancelledByParent"
        outcome, counted, reason = ("error" if cancelled or suite else "failed"), "fail", None
        if cancelled:
            counted = "cancelled"
        failure = make_failure(str(event.get("error") or "(no message)"), file, root, cwd)
    words = {"todo": ["todo"], "cancelled": ["cancelled"]}  # as Node's closing counts word them
    duration = event.get("duration")
    seconds = round(float(duration) / 1000, 6) if isinstance(duration, (int, float)) else 0.0
    result = TestResult(
        nodeid=SEPARATOR.join([file, *titles, *([name] if name else [])]),
        test_name=SEPARATOR.join([*titles, name or file]),
        file=file,
        line=line,
        outcome=outcome,  # type: ignore[arg-type]
        duration=seconds,
        failure=failure,
        reason=reason,
        counted_as=words.get(counted, []),
        runner=RUNNER,
    )
    return result, (None if suite else counted)
