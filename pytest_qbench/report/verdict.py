"""Whether a run is green: the one rule behind every verdict a report shows.

report.md's and summary.md's headline (the templates get it as ``green``, and why not as
``reasons``), the HTML report's headline, the digest's ``success`` and the CTRF document's
``extra.success`` all call `verdict_of` (or `run_green`); none writes the rule again, and each
says why a red run is red in the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Literal
from typing import NamedTuple

from pytest_qbench.core.exit_codes import PYTEST_MEANINGS
from pytest_qbench.core.exit_codes import RAN_CLEAN
from pytest_qbench.core.exit_codes import PytestExit
from pytest_qbench.core.markdown import format_duration
from pytest_qbench.core.summary_words import summary_parts
from pytest_qbench.core.text import exception_line


ReasonKind = Literal[
    "tests", "interrupted", "incomplete", "coverage", "gate", "exit_code", "no_tests", "undecided"
]
"""The kinds of `RedReason`, in the order `red_reasons` gives them."""
MAX_RECORDING_ERRORS = 20
"""The errors ``RunMeta.recording_errors`` keeps; the last one kept says how many more."""


def recording_errors(report: Mapping[str, Any]) -> list[str]:
    """What qbench failed to record of the run (its own internal errors while recording):
    ``run.recording_errors``, or, in a report written before that field, the
    ``internal-error`` warnings of qbench. Empty when qbench recorded the whole run."""
    listed = report["run"].get("recording_errors")
    if listed:
        return list(listed)
    return [
        str(w["message"])
        for w in report.get("warnings") or ()
        if w.get("tool") == "qbench" and w.get("code") == "internal-error"
    ]


class RedReason(NamedTuple):
    """One reason a run is not green: its ``kind`` and the words every output shows."""

    kind: ReasonKind
    text: str
    """Plain text (each format escapes it): ``the run was interrupted (Ctrl-C, ...)``."""


def red_reasons(report: Mapping[str, Any], errors: list[str] | None = None) -> list[RedReason]:
    """Why the run is not green, in words every output shows the same (summary.md, the job
    summary, report.md, the HTML headline, the digest, CTRF); empty when it is green. One
    reason for each of

    - ``tests``: a test failed or errored (``summary.failed``, ``summary.errors``: failed
      subtests and collection errors count there, as in pytest's summary line);
    - ``interrupted``: the run did not finish (Ctrl-C, ``pytest.exit``, a process that died: a
      stream without its end record, pytest-xdist's workers crashed past
      ``--max-worker-restart``, a planned shard missing from ``qbench merge``, a merged shard
      that did not finish), saying which when the report tells;
    - ``incomplete``: qbench did not record the whole run (`recording_errors` is not empty):
      an incomplete report is never green, whatever it counted;
    - ``gate``: a gate failed (a gate qbench could not judge has failed), each with its detail;
      ``coverage``: the coverage is below its threshold without a gate saying so;
    - ``exit_code``: the runner's exit status is not one of a run in which nothing failed
      (pytest's 0 or 5), and no reason above explains it: pytest's 3 (internal error) or a
      plugin's 1 fails a CI job whatever the counts say. An unknown status (``None``) is no
      reason by itself;
    - ``no_tests``: pytest ran no test (its exit status 5: none collected, or every one
      deselected) and nothing above says why: pytest's summary line says "no tests ran" and a CI
      job fails on that status, so the report is not green either.

    (`verdict_of` adds ``undecided``: qbench erred while deciding.)

    ``report`` is a ``TestReport`` record (``model_dump(mode="json")``); ``errors`` its
    `recording_errors`, when the caller has them already.
    """
    summary, run, coverage = report["summary"], report["run"], report["coverage"]
    tool = run.get("tool") or "pytest"
    reasons: list[RedReason] = []
    failing = summary_parts(summary, ("failed", "errors"))
    if failing:
        reasons.append(RedReason("tests", ", ".join(failing)))
    if run["interrupted"]:
        reasons.append(RedReason("interrupted", _why_interrupted(report)))
    if errors is None:
        errors = recording_errors(report)
    if errors:
        reasons.append(RedReason("incomplete", f"the report is incomplete: {INCOMPLETE_SHORT}"))
    gates = [gate for gate in report["gates"] if gate["passed"] is False]
    if (
        coverage
        and coverage["met"] is False
        and not any(g.get("kind") == "coverage" for g in gates)
    ):
        reasons.append(RedReason("coverage", _coverage_below(coverage)))
    reasons += [RedReason("gate", _gate_failed(gate)) for gate in gates]
    code = run["exit_code"]
    if code not in (*RAN_CLEAN, None) and not _status_explained(code, reasons):
        whole = not errors  # else "no test failed" is only what qbench recorded
        other = summary.get("other") or {}
        said = _qbench_said(report).get("session-failed") if whole else None
        reasons.append(RedReason("exit_code", _exit_status(tool, code, whole, other, said)))
    if code == PytestExit.NO_TESTS_COLLECTED and tool == "pytest" and not reasons:
        reasons.append(RedReason("no_tests", NO_TESTS_TEXT))
    return reasons


NO_TESTS_TEXT = (
    "pytest ran no tests (exit status 5: none collected, or every one deselected), and a CI "
    "job fails on that status: check the test paths and the -k/-m selection"
)


def run_green(report: Mapping[str, Any]) -> bool:
    """Whether the run is green (a ✅ headline, the digest's ``success``): `red_reasons` found
    none, and qbench erred in none of it (`verdict_of`). ``report`` is a ``TestReport`` record
    (``model_dump(mode="json")``)."""
    return verdict_of(report).green


class Verdict(NamedTuple):
    """Everything an output shows of the verdict: why the run is red (`red_reasons`), what
    qbench could not record (`recording_errors`) and the sentence saying so
    (`incomplete_text`)."""

    reasons: list[RedReason]
    recording_errors: list[str]
    incomplete: str

    @property
    def green(self) -> bool:
        """Whether the run is green: no reason it is not."""
        return not self.reasons


def verdict_of(report: Mapping[str, Any]) -> Verdict:
    """The verdict every output shows, failing closed: when qbench errs while deciding (a bug,
    a report it cannot read), the run is red with the error named (kind ``undecided``), and the
    outputs are still written."""
    try:
        errors = recording_errors(report)
        return Verdict(red_reasons(report, errors), errors, incomplete_text(errors))
    except Exception as exc:
        detail = exception_line(exc)
        why = f"qbench could not decide whether the run is green, so it is not: {detail}"
        return Verdict([RedReason("undecided", why)], [], "")


INCOMPLETE_SHORT = "qbench could not record the whole run"
"""The ``incomplete`` reason's words after ``the report is incomplete:``."""
SHOWN_SHARDS = 5
"""The shards that did not finish named in the ``interrupted`` reason of a merged run."""


def _qbench_said(report: Mapping[str, Any]) -> dict[str, str]:
    """qbench's own warnings of the report, by code."""
    return {
        warning.get("code"): str(warning["message"])
        for warning in report.get("warnings") or ()
        if warning.get("tool") == "qbench"
    }


def _why_interrupted(report: Mapping[str, Any]) -> str:
    """The ``interrupted`` reason: what the report tells of why the run did not finish."""
    said = _qbench_said(report)
    if "merge-missing-shards" in said:
        return "the merged run is missing a shard: " + said["merge-missing-shards"]
    if "merge-plans-differ" in said:
        return "the merged run is not whole: " + said["merge-plans-differ"]
    unfinished = [
        shard["run"] for shard in report.get("shards") or () if shard["run"]["interrupted"]
    ]
    if unfinished:
        named = ", ".join(
            shard_name(run.get("shard"), str(run["run_id"])) for run in unfinished[:SHOWN_SHARDS]
        )
        more = (
            f" and {len(unfinished) - SHOWN_SHARDS} more" if len(unfinished) > SHOWN_SHARDS else ""
        )
        return f"a merged shard did not finish: {named}{more}"
    if "workers-crashed" in said:
        return "the run did not finish: " + said["workers-crashed"]
    if "pytest-internal-error" in said:  # plugin/internal_error.py
        return f"the run did not finish: {said['pytest-internal-error']}; this report holds the tests that ran"
    if "run-stopped" in said:  # pytest's words: --sw's "Test failed, continuing from this test..."
        return (
            f"the run did not finish: {said['run-stopped']}; this report holds the tests that ran"
        )
    run = report["run"]
    if run["exit_code"] is None:
        took = format_duration(report["summary"]["duration"])
        return (
            "the run did not finish: its process died or was killed before the session's end "
            "(its results stream has no end record); this report holds the tests that finished, "
            f"and its duration ({took}) runs to the last of them: when it died is unknown"
        )
    if run["exit_code"] == PytestExit.INTERRUPTED:
        return (
            "the run was interrupted (Ctrl-C, pytest.exit or a signal) before its end; this "
            "report holds the tests that finished"
        )
    return "the run did not finish; this report holds the tests that finished"


def shard_name(shard: Mapping[str, Any] | None, run_id: str) -> str:
    """How a shard's run is named in the reasons and notes of a merged run (the one formatter
    of ``qbench merge``'s notes and of the verdict): ``shard 2/3 (run ID)``, ``queue NAME
    machine W (run ID)``, or ``run ID`` for a run that was not a planned shard (``shard`` is
    its ``ShardInfo`` as a record; ``None``: no shard)."""
    run = f"run {run_id}"
    if shard and shard.get("queue") is not None:
        machine = f" machine {shard['worker']}" if shard.get("worker") else ""
        return f"queue {shard['queue']}{machine} ({run})"
    if shard and shard.get("count"):
        return f"shard {shard.get('index')}/{shard['count']} ({run})"
    return run


def _coverage_below(coverage: Mapping[str, Any]) -> str:
    percentage, threshold = coverage.get("percentage"), coverage.get("threshold")
    if not isinstance(percentage, (int, float)) or not isinstance(threshold, (int, float)):
        return "the coverage is below its threshold"
    return f"coverage {percentage:.2f}% is below its threshold {threshold:g}%"


def _gate_failed(gate: Mapping[str, Any]) -> str:
    from pytest_qbench.report.gates.text import GATE_LABELS  # only when a gate failed

    kind = gate.get("kind")
    label = GATE_LABELS.get(str(kind), "gate")
    name = "" if kind == "coverage" or not gate.get("name") else f" {gate['name']}"
    detail = gate.get("detail")
    return f"{label}{name} failed: {detail}" if detail else f"{label}{name} failed"


def _status_explained(code: int, reasons: list[RedReason]) -> bool:
    """Whether an earlier reason is why the runner exited ``code`` (pytest's 1 when tests or a
    gate failed, 2 when interrupted or stopped by collection errors)."""
    kinds = {reason.kind for reason in reasons}
    if code == PytestExit.TESTS_FAILED:
        return bool(kinds & {"tests", "gate", "coverage"})
    if code == PytestExit.INTERRUPTED:
        return bool(kinds & {"tests", "interrupted"})
    return False


def _exit_status(
    tool: str, code: int, whole: bool, other: Mapping[str, int], failed: str | None = None
) -> str:
    """``pytest exited 3 (internal error)``; a 1 of a run whose report is ``whole`` and counts
    no failed test says that no test failed, unless pytest's line counts tests under a plugin's
    own words (``other``: a conftest's ``pytest_report_teststatus`` may file a failure as
    ``1 known``), which it names instead, or the reason a plugin failed the session with
    (``failed``: the `session-failed` note, pytest-timeout's ``session-timeout: ...``)."""
    if tool != "pytest":
        return f"{tool} exited {code}" + (" though no test failed" if whole and code == 1 else "")
    if code == PytestExit.TESTS_FAILED and whole and other:
        words = ", ".join(f"{count} {word}" for word, count in other.items())
        meaning = (
            f"its line counts no failed test, but {words} under a plugin's words: a failure "
            "the plugin counts so, or a plugin or a gate qbench does not know, failed it"
        )
    elif code == PytestExit.TESTS_FAILED and whole and failed:
        meaning = failed  # "pytest failed the session: session-timeout: 3.0 sec exceeded"
    elif code == PytestExit.TESTS_FAILED and whole:
        meaning = "though no test failed: a plugin, or a gate qbench does not know, failed it"
    else:
        meaning = PYTEST_MEANINGS.get(code, "a status of a failed run")
    return f"pytest exited {code} ({meaning})"


def incomplete_text(errors: list[str]) -> str:
    """What the headline says under an incomplete report (plain text, escaped by the format it
    lands in): that qbench could not record the run, what failed, and the fix; "" when
    ``errors`` is empty."""
    if not errors:
        return ""
    more = f" ({len(errors)} errors; all are under the warnings)" if len(errors) > 1 else ""
    fix = (
        "Fix: if it names one of your pytest_qbench_* hooks, or your pytest_sessionfinish, fix "
        "that hook; otherwise report it as a bug in qbench, with this message."
    )
    stored = all(any(words in error for words in STORE_ERRORS) for error in errors)
    if not stored and all(error.startswith(OUTPUT_ERRORS) for error in errors):
        return (
            "qbench could not write every output of this run, so they are incomplete: the "
            "counts are whole, but an output asked for is missing. "
            f"The error{more}: {errors[0]}. Fix: if it names your template, fix that template; "
            "otherwise report it as a bug in qbench, with this message."
        )
    if stored:
        return (
            "this report was rebuilt from what the run streamed to its run directory, which "
            "does not hold the whole run, so this report is incomplete: its counts are what was "
            f"kept, not what ran. The error{more}: {errors[0]}. Fix: find what killed or damaged "
            "it in the CI job's log (a timeout, the out-of-memory killer, a full disk), and run "
            "the tests again for a verdict."
        )
    return (
        "qbench could not record this run, so this report is incomplete: its counts are what "
        "qbench recorded, not what ran (pytest's own summary line and exit status are right). "
        f"The error{more}: {errors[0]}. {fix}"
    )


STORE_ERRORS = (
    "the run's process died during its session's end",
    "line(s) of the result stream are not valid records",
    "test(s) finished without a result in the stream",
    "has no end record: the disk refused its last writes",
)
"""Words of the errors of a report rebuilt from a damaged stream, from the stream of a run
killed at its session's end, of one killed with results its batch had not yet written, or of
one whose disk refused the stream's last records (``readers.StreamContents.damage``,
``store.KILLED_AT_END``, ``readers.STREAM_CUT``)."""


OUTPUT_ERRORS = ("could not write ", "internal error in writing ")
"""How an output's failure recorded in ``run.recording_errors`` begins
(``history.publish.Publisher``)."""


def bounded_errors(errors: list[str], limit: int = MAX_RECORDING_ERRORS) -> list[str]:
    """``errors`` without repeats, at most ``limit`` of them, the last kept saying how many
    more there were."""
    unique = list(dict.fromkeys(errors))
    if len(unique) <= limit:
        return unique
    more = len(unique) - limit + 1
    return [*unique[: limit - 1], f"and {more} more internal errors (see the warnings)"]


__all__ = [
    "MAX_RECORDING_ERRORS",
    "OUTPUT_ERRORS",
    "ReasonKind",
    "RedReason",
    "Verdict",
    "bounded_errors",
    "incomplete_text",
    "recording_errors",
    "red_reasons",
    "run_green",
    "verdict_of",
]
