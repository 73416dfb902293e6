"""Agent evaluation inside pytest tests: the ``qbench`` fixture, ``@pytest.mark.qbench``, the fail
rules, ini thresholds, judges, and what lands in the report, the Markdown and the digest
(issue 4)."""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest

from pytest_qbench import plugin
from pytest_qbench.evaluation import NO_JUDGE_REASON
from pytest_qbench.plugin.collectors import AGENT_FIELDS
from pytest_qbench.report.merge import Source
from pytest_qbench.report.merge import merge_reports
from pytest_qbench.report.models import TestResult

from conftest import QBenchRun
from conftest import RunQBench
from conftest import assert_summary_matches_pytest


def metrics(result: TestResult) -> dict[str, Any]:
    """A result's metric results by name (the last of each name)."""
    return {m.metric_name: m for m in result.metric_results}


def message(run: QBenchRun, name: str) -> str:
    """The failure message of the test ``name``."""
    failure = run.by_name(name).failure
    assert failure is not None, name
    return failure.error_message


# --- recording, and the report's agent fields ---------------------------------------------------

RECORDED = """
    import pytest

    @pytest.mark.qbench(
        metrics=["exact_match", {"metric": "token_f1", "threshold": 0.5}],
        ground_truth="Paris",
        expected_tools=["search", {"name": "open", "arguments": {"url": "u"}}],
    )
    def test_capital(qbench):
        qbench.record(
            "Paris",
            input="What is the capital of France?",
            tool_calls=[{"name": "open", "arguments": '{"url": "u", "n": 2}'}, "search"],
            latency_ms=120,
        )

    def test_structured(qbench):
        qbench.record({"city": "Paris", "pop": 2}, input=["a", 1], ground_truth=["Paris", "paris"])
        result = qbench.score("json_valid")
        assert (result.metric_name, result.score, result.passed) == ("json_valid", 1.0, True)
        assert [r.metric_name for r in qbench.results] == ["json_valid"]

    def test_plain():
        pass
"""


def test_recorded_sample_lands_in_the_report(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Response, input, ground truth, tool calls (arguments as JSON), expected tools, whether
    they matched, and every metric result are in the test's result; a test without the fixture
    has none of it."""
    pytester.makepyfile(RECORDED)
    run = run_qbench()
    run.result.assert_outcomes(passed=3)
    assert_summary_matches_pytest(run)
    capital = run.by_name("test_capital")
    assert capital.agent_response == "Paris"
    assert capital.test_input == "What is the capital of France?"
    assert capital.ground_truth == "Paris"
    assert capital.tool_calls == [{"name": "open", "arguments": {"url": "u", "n": 2}}, "search"]
    assert capital.expected_tools == ["search", {"name": "open", "arguments": {"url": "u"}}]
    assert capital.tools_matched is True
    found = metrics(capital)
    assert list(found) == ["exact_match", "token_f1"]
    assert (found["exact_match"].score, found["exact_match"].threshold) == (1.0, None)
    assert (found["token_f1"].score, found["token_f1"].threshold) == (1.0, 0.5)
    assert all(m.passed and m.error is None and not m.skipped for m in found.values())
    structured = run.by_name("test_structured")
    assert structured.agent_response == '{"city": "Paris", "pop": 2}'
    assert structured.test_input == '["a", 1]'
    assert structured.ground_truth == '["Paris", "paris"]'
    assert (structured.expected_tools, structured.tools_matched) == (None, None)
    plain = run.by_name("test_plain")
    assert (plain.metric_results, plain.agent_response, plain.tool_calls) == ([], None, [])


def test_response_is_bounded_and_redacted(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The response is cut at --qbench-max-output with a marker; secrets never reach it."""
    monkeypatch.setenv("SERVICE_API_KEY", "s3cr3t-value-123")
    pytester.makepyfile(
        """
        def test_long(qbench):
            qbench.record("s3cr3t-value-123 " + "x" * 500, input="in")
        """
    )
    run = run_qbench("--qbench-max-output=100")
    response = run.by_name("test_long").agent_response
    assert response is not None
    assert "s3cr3t" not in response and "[redacted]" in response
    assert "qbench cut" in response and "--qbench-max-output" in response
    assert len(response) < 200


# --- the fail rules -----------------------------------------------------------------------------

FAIL_RULES = """
    import pytest

    @pytest.mark.qbench(metrics=[{"metric": "token_f1", "threshold": 0.9}], ground_truth="Paris")
    def test_below_threshold(qbench):
        qbench.record("It is Paris, I think")

    @pytest.mark.qbench(expected_tools=["search", "open"])
    def test_tools_mismatch(qbench):
        qbench.record("ok", tool_calls=["search"])

    @pytest.mark.qbench(metrics=[{"metric": "regex", "pattern": "(", "fail_on_error": True}])
    def test_error_fails(qbench):
        qbench.record("text")

    @pytest.mark.qbench(metrics=[{"metric": "regex", "pattern": "(", "threshold": 0.5}])
    def test_error_is_kept(qbench):
        qbench.record("text")

    @pytest.mark.qbench(
        metrics=[{"metric": "exact_match", "threshold": 1, "enabled": False}], ground_truth="a"
    )
    def test_disabled(qbench):
        qbench.record("b")

    @pytest.mark.qbench(
        metrics=[
            {"metric": "exact_match", "threshold": 1},
            {"metric": "token_f1", "threshold": 0.9},
            "rouge_l",
        ],
        ground_truth="the cat sat",
        expected_tools=["lookup"],
    )
    def test_every_failure_listed(qbench):
        qbench.record("a cat", tool_calls=[])

    def test_soft_score(qbench):
        qbench.record("Lyon", ground_truth="Paris")
        qbench.score("exact_match", threshold=1)
        print("went on")

    def test_check_stops(qbench):
        qbench.record("Lyon", ground_truth="Paris")
        qbench.check("exact_match", threshold=1)
        print("not reached")

    def test_check_error(qbench):
        qbench.record("text")
        qbench.check("regex", pattern="(")

    def test_check_passes(qbench):
        qbench.record("Paris", ground_truth="Paris")
        assert qbench.check("exact_match", threshold=1).passed

    def test_add(qbench):
        qbench.add("human_rating", 3, scale=5, threshold=4)

    def test_add_error(qbench):
        result = qbench.add("external", None, error="service down")
        assert (result.score, result.passed, result.error) == (None, False, "service down")

    @pytest.mark.qbench(metrics=["exact_match"], ground_truth="Paris")
    def test_own_assert(qbench):
        qbench.record("Paris")
        assert False, "own failure"

    @pytest.mark.qbench(metrics=["exact_match"], ground_truth="Paris")
    def test_nothing_recorded(qbench):
        pass

    def test_close_call(qbench):
        qbench.add("m", 0.699, threshold=0.7)
"""


def test_fail_rules(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A metric below its threshold, unmatched tools, or an error with fail_on_error fail the
    test with every failing check in the message; errors without it and disabled metrics are
    shown and pass; check() fails at once; the test's own failure stops evaluation."""
    pytester.makepyfile(FAIL_RULES)
    run = run_qbench("--qbench-capture=all")
    run.result.assert_outcomes(passed=4, failed=11)
    assert_summary_matches_pytest(run)
    assert message(run, "test_below_threshold") == "metric token_f1: score 0.33 < threshold 0.90"
    assert run.by_name("test_below_threshold").failure.error_type == "MetricFailure"  # type: ignore[union-attr]
    assert message(run, "test_tools_mismatch") == "tools: called [search], expected [search, open]"
    assert run.by_name("test_tools_mismatch").tools_matched is False
    assert message(run, "test_error_fails") == (
        "metric regex: error: regex: invalid pattern '(': missing ), unterminated subpattern at "
        "position 0"
    )
    kept = metrics(run.by_name("test_error_is_kept"))["regex"]
    assert (run.by_name("test_error_is_kept").outcome, kept.passed, kept.score) == (
        "passed",
        False,
        None,
    )
    assert kept.error is not None and "invalid pattern" in kept.error
    disabled = metrics(run.by_name("test_disabled"))["exact_match"]
    assert (disabled.skipped, disabled.reason, disabled.score) == (
        True,
        "disabled (enabled=False)",
        None,
    )
    assert message(run, "test_every_failure_listed") == (
        "3 qbench checks failed:\n"
        "  metric exact_match: score 0.00 < threshold 1.00\n"
        "  metric token_f1: score 0.67 < threshold 0.90\n"
        "  tools: called [], expected [lookup]"
    )
    assert metrics(run.by_name("test_every_failure_listed"))["rouge_l"].passed is True
    soft = run.by_name("test_soft_score")
    assert message(run, "test_soft_score") == "metric exact_match: score 0.00 < threshold 1.00"
    assert soft.captured is not None and "went on" in soft.captured.stdout
    stopped = run.by_name("test_check_stops")
    assert stopped.failure is not None and stopped.failure.line is not None
    assert "qbench.check(" in stopped.failure.stack_trace
    assert stopped.captured is None or "not reached" not in stopped.captured.stdout
    assert message(run, "test_check_error").startswith("metric regex: error: regex: invalid")
    assert metrics(run.by_name("test_check_passes"))["exact_match"].passed is True
    assert message(run, "test_add") == "metric human_rating: score 3.00 < threshold 4.00"
    assert metrics(run.by_name("test_add"))["human_rating"].scale == 5.0
    assert run.by_name("test_add_error").outcome == "passed"
    own = run.by_name("test_own_assert")
    assert message(run, "test_own_assert").startswith("own failure")
    assert (own.metric_results, own.agent_response) == ([], "Paris")
    assert message(run, "test_nothing_recorded") == (
        "@pytest.mark.qbench on test_fail_rules.py::test_nothing_recorded: the test recorded no "
        "response to evaluate; call qbench.record(response, ...) before it returns"
    )
    assert message(run, "test_close_call") == "metric m: score 0.699 < threshold 0.700"
    run.result.stdout.fnmatch_lines(["E   3 qbench checks failed:"])


# --- marker validation --------------------------------------------------------------------------

BAD_MARKERS = {
    "threshold": (
        "metrics=[{'metric': 'token_f1', 'threshold': 'high'}]",
        "metrics[0].threshold must be a number from 0 to 1, given: 'high'; e.g. 0.7",
    ),
    "threshold_range": (
        "metrics=[{'metric': 'token_f1', 'threshold': 1.5}]",
        "metrics[0].threshold must be a number from 0 to 1, given: 1.5",
    ),
    "retries": (
        "metrics=[{'metric': 'token_f1', 'retry_on_failure': 5}]",
        "metrics[0].retry_on_failure must be an int from 1 to 3, given: 5",
    ),
    "timeout": (
        "metrics=[{'metric': 'token_f1', 'timeout_ms': -1}]",
        "metrics[0].timeout_ms must be a positive number, given: -1",
    ),
    "enabled": (
        "metrics=[{'metric': 'token_f1', 'enabled': 'yes'}]",
        "metrics[0].enabled must be True or False, given: 'yes'",
    ),
    "unknown_metric": (
        "metrics=['token_f2']",
        "metrics[0]: unknown metric 'token_f2' (did you mean 'token_f1'?)",
    ),
    "unknown_param": (
        "metrics=[{'metric': 'exact_match', 'case': True}]",
        "metrics[0]: metric 'exact_match' got unknown param 'case'; it accepts: ignore_case",
    ),
    "missing_param": ("metrics=['json_schema']", "metric 'json_schema' needs param 'schema'"),
    "no_name": (
        "metrics=[{'threshold': 0.5}]",
        "metrics[0].metric must be a metric name, given: None; e.g. {'metric': 'token_f1', ",
    ),
    "entry_type": ("metrics=[3]", "metrics[0] must be a metric name or a dict, given: 3"),
    "metrics_str": ("metrics='token_f1'", "metrics must be a list of metric names or dicts"),
    "model": (
        "metrics=[{'metric': 'token_f1', 'model': 'gpt'}]",
        "metrics[0].model applies to judge metrics only, and 'token_f1' is deterministic",
    ),
    "scale": (
        "metrics=[{'metric': 'token_f1', 'scale': 5}]",
        "metrics[0].scale is 5, but metric 'token_f1' scores from 0 to 1; drop scale",
    ),
    "custom_prompt": (
        "metrics=[{'metric': 'token_f1', 'custom_prompt': 'rate it'}]",
        "metric 'token_f1' got unknown param 'custom_prompt'",
    ),
    "kwarg": ("metric=['token_f1']", "unknown argument 'metric'; it takes metrics, expected_tools"),
    "tools": ("expected_tools='search'", "expected_tools: expected a list of tool calls"),
}


def test_malformed_markers_name_the_test_field_and_fix(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Each malformed marker is a setup error naming the test, the field and the fix, with no
    traceback through qbench; the test body never runs."""
    body = "\n".join(
        f"@pytest.mark.qbench({marker})\ndef test_{name}(qbench):\n    raise RuntimeError\n"
        for name, (marker, _) in BAD_MARKERS.items()
    )
    pytester.makepyfile(
        "import pytest\n\n"
        + body
        + "\n@pytest.mark.qbench('token_f1')\ndef test_positional(qbench):\n    pass\n"
        + "\n@pytest.mark.qbench(metrics=['token_f1'])\ndef test_no_fixture():\n    pass\n"
    )
    run = run_qbench()
    run.result.assert_outcomes(errors=len(BAD_MARKERS) + 2)
    for name, (_, expected) in BAD_MARKERS.items():
        text = message(run, f"test_{name}")
        prefix = "@pytest.mark.qbench on test_malformed_markers_name_the_test_field_and_fix.py::"
        assert text.startswith(f"{prefix}test_{name}"), text
        assert expected in text, (name, text)
        assert run.by_name(f"test_{name}").failure.phase == "setup"  # type: ignore[union-attr]
    assert "takes keyword arguments only, given: ('token_f1',)" in message(run, "test_positional")
    assert "does not use the qbench fixture" in message(run, "test_no_fixture")
    output = run.result.stdout.str()
    assert "agent_config.py" not in output and "RuntimeError" not in output


def test_marker_on_a_class_applies_to_its_tests(pytester: pytest.Pytester) -> None:
    """Marks merge keyword by keyword, the closest first: a class gives the metrics, the
    function its ground truth."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.qbench(metrics=[{"metric": "exact_match", "threshold": 1}], ground_truth="x")
        class TestAgent:
            @pytest.mark.qbench(ground_truth="Paris")
            def test_a(self, qbench):
                qbench.record("Paris")

            def test_b(self, qbench):
                qbench.record("Paris")
        """
    )
    result = pytester.runpytest("-p", "qbench")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*_ TestAgent.test_b _*", "E   metric exact_match: score 0.00 < *"]
    )


def test_a_module_marker_without_the_fixture_is_found(pytester: pytest.Pytester) -> None:
    """A module-wide marker on tests that never use the fixture is refused, not ignored (no
    test of the session uses the fixture, so only the collection scan can find it)."""
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.qbench(metrics=["exact_match"])

        def test_a():
            pass
        """
    )
    result = pytester.runpytest(plugins=[plugin])
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["E   *does not use the qbench fixture*"])


# --- ini thresholds -----------------------------------------------------------------------------


def test_ini_thresholds_apply_unless_given(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """ini qbench_thresholds gives the default threshold; the marker's and the fixture's win."""
    pytester.makeini("[pytest]\nqbench_thresholds =\n    token_f1 = 0.9\n    human=0.5\n")
    pytester.makepyfile(
        """
        import pytest

        def test_ini(qbench):
            qbench.record("It is Paris, I think", ground_truth="Paris")
            qbench.score("token_f1")

        @pytest.mark.qbench(metrics=[{"metric": "token_f1", "threshold": 0.2}], ground_truth="Paris")
        def test_marker_wins(qbench):
            qbench.record("It is Paris, I think")

        def test_fixture_wins(qbench):
            qbench.record("It is Paris, I think", ground_truth="Paris")
            qbench.score("token_f1", threshold=0.3)

        def test_add(qbench):
            qbench.add("human", 0.4)

        def test_no_default(qbench):
            qbench.record("It is Paris, I think", ground_truth="Paris")
            qbench.score("rouge_l")
        """
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=3, failed=2)
    assert message(run, "test_ini") == "metric token_f1: score 0.33 < threshold 0.90"
    assert metrics(run.by_name("test_marker_wins"))["token_f1"].threshold == 0.2
    assert metrics(run.by_name("test_fixture_wins"))["token_f1"].threshold == 0.3
    assert message(run, "test_add") == "metric human: score 0.40 < threshold 0.50"
    assert metrics(run.by_name("test_no_default"))["rouge_l"].threshold is None


@pytest.mark.parametrize("line", ["token_f1", "token_f1=high", "=0.5", "token_f1=-1"])
def test_malformed_ini_thresholds_stop_the_run(pytester: pytest.Pytester, line: str) -> None:
    """A bad qbench_thresholds line is a usage error before any test runs."""
    pytester.makeini(f"[pytest]\nqbench_thresholds = {line}\n")
    pytester.makepyfile("def test_a():\n    raise AssertionError('ran')\n")
    result = pytester.runpytest("-p", "qbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: ini qbench_thresholds must hold metric=value lines *given: {line!r}*"]
    )


# --- retries, timeouts, judges ------------------------------------------------------------------

FLAKY_METRICS = """
    import threading

    from pytest_qbench.evaluation import metric

    ATTEMPTS = {"n": 0}
    RELEASE = threading.Event()  # set at the session's end, so an abandoned attempt ends then

    def pytest_sessionfinish():
        RELEASE.set()

    @metric("flaky_twice", replace=True)
    def flaky_twice(sample):
        ATTEMPTS["n"] += 1
        if ATTEMPTS["n"] <= 2:
            raise ConnectionError(f"attempt {ATTEMPTS['n']}")
        return 0.8

    @metric("slow", replace=True)
    def slow(sample):
        RELEASE.wait(60)
        return 1.0
"""


def test_retries_and_timeouts_are_recorded(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """retry_on_failure re-runs a failing metric, timeout_ms bounds each attempt; the report has
    retry_count, evaluation_time_ms and the last error."""
    pytester.makeconftest(FLAKY_METRICS)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.qbench(metrics=[{"metric": "flaky_twice", "retry_on_failure": 3}])
        def test_retried(qbench):
            qbench.record("x")

        @pytest.mark.qbench(
            metrics=[{"metric": "slow", "timeout_ms": 20, "retry_on_failure": 1,
                      "fail_on_error": True}]
        )
        def test_timed_out(qbench):
            qbench.record("x")
        """
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    retried = metrics(run.by_name("test_retried"))["flaky_twice"]
    assert (retried.score, retried.retry_count, retried.error) == (0.8, 2, None)
    timed = metrics(run.by_name("test_timed_out"))["slow"]
    assert (timed.score, timed.retry_count, timed.error) == (None, 1, "timed out after 20 ms")
    # Two attempts of 20 ms, not waited for (each would take until the session's end, or
    # 60 s): a bound no load reaches, where 300 ms, the sleep it had, was one a loaded machine
    # could.
    assert 40 <= timed.evaluation_time_ms < 60_000
    assert message(run, "test_timed_out") == "metric slow: error: timed out after 20 ms"


def test_judge_metrics_are_skipped_without_a_judge(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """With the default qbench_judge (None), judge metrics are skipped with the reason and fail
    nothing, from the marker, score() and check() alike."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.qbench(metrics=[{"metric": "answer_relevance", "threshold": 0.9,
                                      "fail_on_error": True}])
        def test_judged(qbench):
            qbench.record("Paris", input="capital?")
            assert qbench.check("judge_score", threshold=0.9).skipped
        """
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1)
    judged = run.by_name("test_judged")
    assert [m.metric_name for m in judged.metric_results] == ["judge_score", "answer_relevance"]
    for result in judged.metric_results:
        assert (result.skipped, result.reason, result.score) == (True, NO_JUDGE_REASON, None)
        assert result.passed is False
    assert run.report.summary.metric_stats["answer_relevance"].skipped == 1
    assert "answer_relevance" not in run.report.summary.metrics_evaluated


JUDGE_CONFTEST = """
    import os

    import pytest

    from pytest_qbench.evaluation import ReplayJudge
    from pytest_qbench.evaluation import Verdict

    class FakeJudge:
        model = "fake-1"

        def __call__(self, metric_name, sample, prompt):
            score = 0.25 if "Lyon" in sample.response else 0.75
            return Verdict(score, reason="graded", model=self.model)

    @pytest.fixture
    def qbench_judge():
        mode = os.environ.get("VERDICTS_MODE", "replay")
        inner = FakeJudge() if mode == "record" else None
        return ReplayJudge("verdicts.json", inner=inner, mode=mode)
"""

JUDGED = """
    import pytest

    @pytest.mark.parametrize("answer", ["Paris", "Lyon"])
    @pytest.mark.qbench(metrics=[{"metric": "answer_relevance", "threshold": 0.5}])
    def test_relevance(qbench, answer):
        qbench.record(answer, input="capital of France?")
"""


def test_replay_judge_from_a_conftest(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conftest returns a ReplayJudge: record once with a real judge, then replay offline
    with the same scores; a verdict missing from the file is an error, shown."""
    pytester.makeconftest(JUDGE_CONFTEST)
    pytester.makepyfile(JUDGED)
    monkeypatch.setenv("VERDICTS_MODE", "record")
    recorded = run_qbench("--qbench-run-id=record", run_dir="record")
    monkeypatch.setenv("VERDICTS_MODE", "replay")
    replayed = run_qbench("--qbench-run-id=replay", run_dir="replay")
    for run in (recorded, replayed):
        run.result.assert_outcomes(passed=1, failed=1)
        paris = metrics(run.by_name("test_relevance[Paris]"))["answer_relevance"]
        assert (paris.score, paris.reason, paris.model_used) == (0.75, "graded", "fake-1")
        assert message(run, "test_relevance[Lyon]") == (
            "metric answer_relevance: score 0.25 < threshold 0.50"
        )
    stored = json.loads((pytester.path / "verdicts.json").read_text(encoding="utf-8"))
    assert len(stored["verdicts"]) == 2
    pytester.makepyfile(JUDGED.replace("capital of France?", "capital of Italy?"))
    missing = run_qbench("--qbench-run-id=missing", run_dir="missing")
    missing.result.assert_outcomes(passed=2)
    error = metrics(missing.by_name("test_relevance[Paris]"))["answer_relevance"].error
    assert error is not None and error.startswith("no recorded verdict for metric")


# --- aggregates, Markdown, digest ----------------------------------------------------------------

SCORED = """
    import pytest

    ANSWERS = ["Paris", "paris", "Paris, France", "Lyon", "the city of Paris", "Rome", ""]

    @pytest.mark.parametrize("answer", ANSWERS)
    @pytest.mark.qbench(
        metrics=[
            {"metric": "token_f1", "threshold": 0.5},
            "exact_match",
            {"metric": "regex", "pattern": "(" , "threshold": 0.5},
            "answer_relevance",
        ],
        ground_truth="Paris",
    )
    def test_answer(qbench, answer):
        qbench.record(answer, input="capital of France?", tool_calls=["search"])
"""


def raw_scores(run: QBenchRun) -> dict[str, list[Any]]:
    """Every metric result of the run, by metric name."""
    found: dict[str, list[Any]] = {}
    for result in run.report.results:
        for m in result.metric_results:
            found.setdefault(m.metric_name, []).append(m)
    return found


def test_summary_aggregates_equal_the_raw_scores(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """metrics_evaluated, average_scores and metric_stats agree with statistics over the raw
    scores of the results: zeros count, errors and skips are counted apart."""
    pytester.makepyfile(SCORED)
    run = run_qbench()
    assert_summary_matches_pytest(run)
    summary = run.report.summary
    by_metric = raw_scores(run)
    assert set(summary.metric_stats) == set(by_metric)
    for name, found in by_metric.items():
        scores = [m.score for m in found if m.score is not None]
        stats = summary.metric_stats[name]
        assert stats.n == len(scores)
        assert stats.errors == sum(m.error is not None for m in found)
        assert stats.skipped == sum(m.skipped for m in found)
        assert stats.passed == sum(m.passed for m in found)
        if scores:
            assert summary.metrics_evaluated[name] == len(scores)
            assert summary.average_scores[name] == pytest.approx(statistics.fmean(scores))
            assert stats.mean == summary.average_scores[name]
            assert stats.stdev == pytest.approx(statistics.stdev(scores))
            assert (stats.min, stats.max) == (min(scores), max(scores))
            assert stats.pass_rate == round(100 * stats.passed / (stats.n + stats.errors), 2)
        else:
            assert name not in summary.metrics_evaluated and stats.mean is None
    assert summary.metric_stats["token_f1"].min == 0.0  # "Rome" and "" score 0, and count
    assert summary.metric_stats["regex"].errors == 7
    assert summary.metric_stats["answer_relevance"].skipped == 7


def test_markdown_agent_section(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """report.md has the metrics table and, per agent test up to --qbench-md-max-items, input,
    response, tools and each metric with its mark, errors and skips with their reason."""
    pytester.makepyfile(SCORED)
    run = run_qbench("--qbench-md-max-items=2")
    md = run.markdown
    stats = run.report.summary.metric_stats["token_f1"]
    assert "## Agent evaluation" in md
    assert "| Metric | Mean | Pass rate | n |" in md
    assert f"| `token_f1` | {stats.mean:.3f} | {stats.pass_rate:.1f}% | 7 |" in md
    assert "| `regex` | – | 0.0% | 0 (+7 errored) |" in md
    assert "| `answer_relevance` | – | – | 0 (+7 skipped) |" in md
    assert "### ✅ `test_markdown_agent_section.py::test_answer[Paris]`" in md
    assert "- **Input:** capital of France?" in md
    assert "- **Response:** Paris" in md
    assert "- **Tools:** called `search`" in md
    assert "- `token_f1`: 1.00 / 0.50 ✅" in md
    assert "- `exact_match`: 1.00 (no threshold)" in md
    assert "- `regex`: ⚠️ error: regex: invalid pattern" in md
    assert f"- `answer_relevance`: ⏭️ skipped: {NO_JUDGE_REASON.replace('_', chr(92) + '_')}" in md
    assert "…and 5 more agent tests (all are in report.json)." in md
    assert md.count("### ") - md.count("### ❌") >= 2


def test_digest_names_failing_metrics(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """The digest's failures carry the failing metrics, also when the test failed otherwise."""
    pytester.makepyfile(
        """
        def test_gate(qbench):
            qbench.record("Lyon", ground_truth="Paris")
            qbench.score("exact_match", threshold=1)

        def test_assert_after_score(qbench):
            qbench.record("Lyon", ground_truth="Paris")
            qbench.score("exact_match", threshold=1)
            assert False, "also broken"
        """
    )
    run_qbench("--qbench-digest=digest.json")
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    failures = {f["test_name"].split("::")[1]: f for f in digest["failures"]}
    gate = "metric exact_match: score 0.00 < threshold 1.00"
    assert failures["test_gate"]["error_message"] == gate
    assert failures["test_gate"]["error_type"] == "MetricFailure"
    assert failures["test_assert_after_score"]["error_message"].endswith(f"\nqbench: {gate}")
    assert any(s.startswith("Improve the agent's result in ") for s in digest["next_steps"])


# --- xdist, and qbench switched off ---------------------------------------------------------------


def agent_view(run: QBenchRun) -> dict[str, Any]:
    """Everything about agent evaluation that must not depend on -n (timings aside)."""
    results = {}
    for r in run.report.results:
        dumped = r.model_dump(include={"outcome", "metric_results", "failure", *AGENT_FIELDS})
        for m in dumped["metric_results"]:
            m.pop("evaluation_time_ms")
        if dumped["failure"]:
            dumped["failure"] = dumped["failure"]["error_message"]
        results[r.nodeid] = dumped
    summary = run.report.summary.model_dump(
        include={"metrics_evaluated", "average_scores", "metric_stats"}
    )
    return {"results": results, "summary": summary}


def test_xdist_gives_the_serial_results(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """With -p xdist -n 2 every agent field, metric result and aggregate is identical to the
    serial run's, field by field."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_scored=SCORED, test_rules=FAIL_RULES)
    serial = run_qbench(
        "--qbench-run-id=serial", "-p", "no:xdist", subprocess=True, run_dir="serial"
    )
    parallel = run_qbench(
        "--qbench-run-id=parallel", "-p", "xdist", "-n", "2", subprocess=True, run_dir="parallel"
    )
    assert_summary_matches_pytest(serial)
    assert_summary_matches_pytest(parallel)
    assert {r.worker for r in parallel.report.results} == {"gw0", "gw1"}
    assert agent_view(parallel) == agent_view(serial)
    assert json.dumps(agent_view(parallel)["summary"]) == json.dumps(agent_view(serial)["summary"])


def test_fixture_works_without_reports(pytester: pytest.Pytester) -> None:
    """Loaded but not asked for (an installed plugin), the fixture scores and gates and the
    marker is evaluated; no report is written."""
    pytester.makepyfile(FAIL_RULES)
    result = pytester.runpytest(plugins=[plugin])
    result.assert_outcomes(passed=4, failed=11)
    result.stdout.fnmatch_lines(
        ["*_ test_below_threshold _*", "E   metric token_f1: score 0.33 < *"]
    )
    assert not (pytester.path / ".qbench").exists()


def test_suites_without_agent_tests_stay_free(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without agent tests, qbench registers no agent hook and imports neither the evaluation
    package nor pydantic, with or without reports."""
    pytester.makeconftest(
        """
        import sys

        def pytest_sessionfinish(session):
            has = session.config.pluginmanager.has_plugin("qbench-agent")
            loaded = [m for m in ("pytest_qbench.evaluation", "pydantic") if m in sys.modules]
            print(f"\\nAGENT-HOOKS {has} LOADED {loaded}")
        """
    )
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench", "-s")  # reports asked for
    result.stdout.fnmatch_lines(["AGENT-HOOKS False LOADED []"])
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # installed, loaded, not asked for
    result = pytester.runpytest_subprocess("-s")
    result.stdout.fnmatch_lines(["AGENT-HOOKS False LOADED []"])
    assert "qbench-" in result.stdout.str()  # the plugins line: qbench was loaded


def test_merged_shards_count_each_kept_tests_metrics_once(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """qbench merge of two shards that ran the same agent tests keeps each test once, and its
    metrics once: the merged metric stats are one run's."""
    pytester.makepyfile(SCORED)
    first = run_qbench("--qbench-run-id=one", run_dir="one")
    second = run_qbench("--qbench-run-id=two", run_dir="two")
    merged = merge_reports([Source("one", first.report), Source("two", second.report)])
    summary = merged.summary
    assert summary.metric_stats == second.report.summary.metric_stats
    assert summary.metrics_evaluated == second.report.summary.metrics_evaluated
    assert summary.average_scores == second.report.summary.average_scores


def test_a_metrics_model_goes_to_a_judge_that_can_switch(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metric entry's model reaches the judge through its with_model(model); a judge without
    with_model judges as it is, and model_used says which model did."""
    pytester.makeconftest(
        """
        import os

        import pytest

        from pytest_qbench.evaluation import Verdict

        class Judge:
            def __init__(self, model):
                self.model = model

            def __call__(self, metric_name, sample, prompt):
                return Verdict(0.9)

            if os.environ.get("SWITCHING") == "1":
                def with_model(self, model):
                    return Judge(model)

        @pytest.fixture
        def qbench_judge():
            return Judge("default-model")
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.qbench(metrics=[{"metric": "judge_score", "model": "big-model"}])
        def test_judged(qbench):
            qbench.record("Paris", input="capital?")
        """
    )
    for switching, expected in (("1", "big-model"), ("0", "default-model")):
        monkeypatch.setenv("SWITCHING", switching)
        run = run_qbench(f"--qbench-run-id=s{switching}", run_dir=f"s{switching}")
        assert metrics(run.by_name("test_judged"))["judge_score"].model_used == expected


def test_metric_failure_shows_input_and_response_bounded(pytester: pytest.Pytester) -> None:
    """(issue 11.9) A marker's failing metric shows the check, the input and the response (cut
    to 5 lines), at the test's line, with no hidden-traceback note; a failing qbench.check in
    the body keeps pytest's source line above the same lines."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.qbench(metrics=[{"metric": "exact_match", "threshold": 1}], ground_truth="P")
        def test_marker(qbench):
            qbench.record("line\\n" * 20, input="Capital?")

        def test_check(qbench):
            qbench.record("Lyon", input="Capital?", ground_truth="Paris")
            qbench.check("exact_match", threshold=1.0)
        """
    )
    result = pytester.runpytest("-p", "qbench")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_marker _*",
            "",
            "E   metric exact_match: score 0.00 < threshold 1.00",
            "E   input:        Capital?",
            "E   response:     line",
            "E                 line",
            "E                 line",
            "E                 line",
            "E                 line [[]... 75 more characters in the report]",
            "E   ground truth: P",
            "",
            "test_metric_failure_shows_input_and_response_bounded.py:3: MetricFailure",
            "*_ test_check _*",
            "*",
            ">       qbench.check(*",
            "E   metric exact_match: score 0.00 < threshold 1.00",
            "E   input:        Capital?",
            "E   response:     Lyon",
            "E   ground truth: Paris",
        ]
    )
    assert "traceback entries are hidden" not in result.stdout.str()
