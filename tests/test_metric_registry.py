"""The metric registry: registering, looking up, params, errors, retries, timeouts, entry points
(issue 4)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.evaluation import NO_JUDGE_REASON
from pytest_qbench.evaluation import REGISTRY
from pytest_qbench.evaluation import Judge
from pytest_qbench.evaluation import MetricConfigError
from pytest_qbench.evaluation import MetricError
from pytest_qbench.evaluation import MissingField
from pytest_qbench.evaluation import Registry
from pytest_qbench.evaluation import Sample
from pytest_qbench.evaluation import Verdict
from pytest_qbench.evaluation import check_params
from pytest_qbench.evaluation import evaluate
from pytest_qbench.evaluation import get


pytestmark = pytest.mark.engine


SAMPLE = Sample("Paris", input="Capital of France?", ground_truth="Paris")


@pytest.fixture
def registry() -> Registry:
    """A registry of its own, without entry points."""
    return Registry(entry_point_group=None)


# ---------------------------------------------------------------- registering


def test_decorator_registers_and_returns_the_function(registry: Registry) -> None:
    @registry.metric("length_ok", needs=("response",))
    def length_ok(sample: Sample, *, limit: int = 10) -> float:
        """1 when the response is short."""
        return float(len(sample.response) <= limit)

    assert length_ok(SAMPLE) == 1.0
    spec = registry.get("length_ok")
    assert (spec.params, spec.required_params, spec.needs) == (("limit",), (), ("response",))
    assert spec.description == "1 when the response is short."
    assert registry.evaluate("length_ok", SAMPLE, params={"limit": 2}).score == 0.0


def test_a_taken_name_is_refused_unless_replaced(registry: Registry) -> None:
    registry.metric("m")(lambda sample: 1.0)
    with pytest.raises(MetricConfigError, match=r"metric 'm' is already registered by .*<lambda>"):
        registry.metric("m")(lambda sample: 0.0)
    registry.metric("m", replace=True)(lambda sample: 0.5)
    assert registry.evaluate("m", SAMPLE).score == 0.5


def test_registering_the_same_function_again_is_allowed(registry: Registry) -> None:
    """A module imported twice registers its metrics twice."""

    def same(sample: Sample) -> float:
        return 1.0

    registry.metric("same")(same)
    registry.metric("same")(same)
    assert registry.names() == ["same"]


@pytest.mark.parametrize(
    ("name", "kwargs", "fn", "message"),
    [
        ("", {}, lambda s: 1.0, "a metric name must be a non-empty str"),
        (
            "m",
            {"needs": ("answer",)},
            lambda s: 1.0,
            "needs has unknown field 'answer'; fields: response",
        ),
        ("m", {"kind": "llm"}, lambda s: 1.0, "kind must be 'deterministic' or 'judge'"),
        ("m", {"scale": 0}, lambda s: 1.0, "scale must be a positive number"),
        ("m", {}, lambda: 1.0, "the function must take the sample first"),
        ("m", {"kind": "judge"}, lambda s: 1.0, "judge metric 'm' must accept a judge= keyword"),
    ],
)
def test_unusable_registrations_are_refused(
    registry: Registry, name: str, kwargs: dict[str, Any], fn: Any, message: str
) -> None:
    with pytest.raises(MetricConfigError, match=message):
        registry.metric(name, **kwargs)(fn)


# ---------------------------------------------------------------- lookup and params


def test_unknown_metric_names_the_closest_and_all() -> None:
    with pytest.raises(MetricConfigError) as excinfo:
        get("exact_mach")
    message = str(excinfo.value)
    assert message.startswith("unknown metric 'exact_mach' (did you mean 'exact_match'?); known")
    assert "rouge_l" in message and "tool_calls" in message
    assert isinstance(excinfo.value, QBenchError) and isinstance(excinfo.value, ValueError)


def test_unknown_metric_without_a_close_match(registry: Registry) -> None:
    with pytest.raises(MetricConfigError, match=r"^unknown metric 'zzz'; known metrics: none$"):
        registry.evaluate("zzz", SAMPLE)


def test_unknown_and_missing_params_are_refused() -> None:
    with pytest.raises(MetricConfigError) as excinfo:
        evaluate("exact_match", SAMPLE, params={"case": False})
    assert str(excinfo.value) == (
        "metric 'exact_match' got unknown param 'case'; it accepts: ignore_case, normalize_whitespace"
    )
    with pytest.raises(
        MetricConfigError, match="metric 'token_f1' got unknown param 'x'; it accepts: no params"
    ):
        check_params("token_f1", {"x": 1})
    with pytest.raises(MetricConfigError, match="metric 'json_schema' needs param 'schema'"):
        check_params("json_schema", {})


def test_keyword_catch_all_accepts_any_param(registry: Registry) -> None:
    registry.metric("loose")(lambda sample, **params: float(params["x"]))
    assert registry.evaluate("loose", SAMPLE, params={"x": 1}).score == 1.0


# ---------------------------------------------------------------- evaluation outcomes


def test_missing_field_never_raises(registry: Registry) -> None:
    calls: list[Sample] = []

    def needs_input(sample: Sample) -> float:
        calls.append(sample)
        return 1.0

    registry.metric("needs_input", needs=("input", "cost"))(needs_input)
    evaluation = registry.evaluate("needs_input", Sample("r", input="q"))
    assert evaluation.error == "metric 'needs_input' needs cost; pass cost= to qbench.record(...)"
    assert evaluation.score is None and calls == []


def test_missing_response_message() -> None:
    evaluation = evaluate("json_valid", Sample(None))
    assert (
        evaluation.error
        == "metric 'json_valid' needs response; pass the response to qbench.record(...)"
    )


def test_missing_field_raised_inside_a_metric(registry: Registry) -> None:
    def needs_truth_sometimes(sample: Sample) -> float:
        raise MissingField("ground_truth", "the expected= param")

    registry.metric("sometimes")(needs_truth_sometimes)
    assert registry.evaluate("sometimes", SAMPLE, retries=3).error == (
        "metric 'sometimes' needs ground_truth; pass ground_truth= to qbench.record(...) "
        "or the expected= param"
    )


def test_an_exception_becomes_an_error(registry: Registry) -> None:
    def broken(sample: Sample) -> float:
        raise ValueError("boom")

    registry.metric("broken")(broken)
    evaluation = registry.evaluate("broken", SAMPLE)
    assert (evaluation.score, evaluation.error, evaluation.retry_count) == (
        None,
        "ValueError: boom",
        0,
    )


class Flaky:
    """A metric that fails ``failures`` times, then scores 0.9."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, sample: Sample) -> float:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"attempt {self.calls} failed")
        return 0.9


@pytest.mark.parametrize(
    ("retries", "score", "error", "retry_count", "calls"),
    [
        (0, None, "ConnectionError: attempt 1 failed", 0, 1),
        (1, None, "ConnectionError: attempt 2 failed", 1, 2),
        (2, 0.9, None, 2, 3),
        (3, 0.9, None, 2, 3),
    ],
)
def test_retries_are_made_and_counted(
    registry: Registry,
    retries: int,
    score: float | None,
    error: str | None,
    retry_count: int,
    calls: int,
) -> None:
    """A metric failing twice then succeeding needs two retries; the last error is kept."""
    flaky = Flaky(failures=2)
    registry.metric("flaky")(flaky)
    evaluation = registry.evaluate("flaky", SAMPLE, retries=retries)
    assert (evaluation.score, evaluation.error, evaluation.retry_count) == (
        score,
        error,
        retry_count,
    )
    assert flaky.calls == calls


def test_metric_error_is_not_retried(registry: Registry) -> None:
    calls = []

    def unscorable(sample: Sample) -> float:
        calls.append(1)
        raise MetricError("cannot score this")

    registry.metric("unscorable")(unscorable)
    evaluation = registry.evaluate("unscorable", SAMPLE, retries=3)
    assert (evaluation.error, evaluation.retry_count, len(calls)) == ("cannot score this", 0, 1)


@pytest.mark.parametrize("retries", [-1, 4, True, 1.5, "2"])
def test_retries_are_validated(retries: Any) -> None:
    with pytest.raises(MetricConfigError, match="retries must be an int from 0 to 3"):
        evaluate("exact_match", SAMPLE, retries=retries)


@pytest.mark.parametrize("timeout_ms", [0, -5, float("nan"), float("inf"), "100", True])
def test_timeouts_are_validated(timeout_ms: Any) -> None:
    with pytest.raises(MetricConfigError, match="timeout_ms must be a positive number"):
        evaluate("exact_match", SAMPLE, timeout_ms=timeout_ms)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of the test, so an abandoned slow metric finishes at once."""
    event = threading.Event()
    yield event
    event.set()


def test_timeout_really_applies(registry: Registry, release: threading.Event) -> None:
    """A metric slower than timeout_ms is abandoned after the timeout, not waited for."""

    finished = []

    def slow(sample: Sample) -> float:
        release.wait(60)  # until the test ends
        finished.append(True)
        return 1.0

    registry.metric("slow")(slow)
    evaluation = registry.evaluate("slow", SAMPLE, timeout_ms=50)
    assert (evaluation.score, evaluation.error) == (None, "timed out after 50 ms")
    # The metric still runs: evaluate did not wait for it (an upper bound on the time taken
    # would say the same only on a machine that is not loaded).
    assert finished == []
    assert evaluation.evaluation_time_ms >= 45


def test_timed_out_attempt_is_retried(registry: Registry, release: threading.Event) -> None:
    attempts = []

    def slow_once(sample: Sample) -> float:
        attempts.append(1)
        if len(attempts) == 1:
            release.wait(60)  # until the test ends
        return 0.7

    registry.metric("slow_once")(slow_once)
    # The second attempt must return within the timeout: 1 s, not 30 ms a loaded machine can
    # take to start its thread.
    evaluation = registry.evaluate("slow_once", SAMPLE, timeout_ms=1000, retries=1)
    assert (evaluation.score, evaluation.retry_count) == (0.7, 1)


def test_timeout_keeps_results_and_exceptions(registry: Registry) -> None:
    """Within the timeout a worker thread's score or exception comes back as without one."""

    def fails(sample: Sample) -> float:
        raise KeyError("k")

    registry.metric("fails")(fails)
    assert registry.evaluate("fails", SAMPLE, timeout_ms=1000).error == "KeyError: 'k'"
    assert evaluate("exact_match", SAMPLE, timeout_ms=1000).score == 1.0


def test_a_metric_raising_timeout_error_is_not_a_timeout(registry: Registry) -> None:
    def own_timeout(sample: Sample) -> float:
        raise TimeoutError("upstream API")

    registry.metric("own_timeout")(own_timeout)
    assert registry.evaluate("own_timeout", SAMPLE, timeout_ms=1000).error == (
        "TimeoutError: upstream API"
    )


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        (1.5, "metric 'm' returned 1.5, outside 0..1"),
        (-0.1, "metric 'm' returned -0.1, outside 0..1"),
        (float("nan"), "metric 'm' returned nan, outside 0..1"),
        ("0.5", "metric 'm' returned str, expected a number or a Verdict"),
        (Verdict(2.0), "metric 'm' returned 2.0, outside 0..1"),
    ],
)
def test_scores_outside_the_scale_are_errors(registry: Registry, returned: Any, error: str) -> None:
    registry.metric("m")(lambda sample: returned)
    assert registry.evaluate("m", SAMPLE).error == error


def test_bool_and_int_scores_and_scale(registry: Registry) -> None:
    registry.metric("yes")(lambda sample: True)
    registry.metric("stars", scale=5)(lambda sample, stars=4: stars)
    assert registry.evaluate("yes", SAMPLE).score == 1.0
    four = registry.evaluate("stars", SAMPLE)
    assert (four.score, four.scale) == (4.0, 5)
    assert registry.evaluate("stars", SAMPLE, params={"stars": 6}).error == (
        "metric 'stars' returned 6, outside 0..5"
    )


def test_verdict_carries_reason_and_model(registry: Registry) -> None:
    registry.metric("explained")(lambda sample: Verdict(0.25, reason="too long", model="m-1"))
    evaluation = registry.evaluate("explained", SAMPLE)
    assert (evaluation.score, evaluation.reason, evaluation.model_used) == (0.25, "too long", "m-1")
    assert evaluation.evaluation_time_ms > 0


def test_judge_metric_is_skipped_without_a_judge(registry: Registry) -> None:
    def judged(sample: Sample, *, judge: Judge) -> Verdict:
        return judge("judged", sample, "rate it")

    registry.metric("judged", kind="judge")(judged)
    skipped = registry.evaluate("judged", SAMPLE)
    assert (skipped.score, skipped.error, skipped.skipped_reason) == (None, None, NO_JUDGE_REASON)
    assert NO_JUDGE_REASON == "no judge configured (override the qbench_judge fixture)"


# ---------------------------------------------------------------- entry points


@pytest.fixture
def fresh_default_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default registry as if nothing had looked up a metric yet; restored afterwards."""
    monkeypatch.setattr(REGISTRY, "_specs", dict(REGISTRY._specs))
    monkeypatch.setattr(REGISTRY, "_entry_points_loaded", False)
    monkeypatch.setattr(REGISTRY, "_load_errors", [])
    modules = set(sys.modules)
    yield
    for name in set(sys.modules) - modules:
        if name.startswith("qbench_demo_"):
            del sys.modules[name]


def install_distribution(root: Path, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """A minimal installed distribution: importlib.metadata reads *.dist-info on sys.path."""
    dist_info = root / "qbench_demo_metrics-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: qbench-demo-metrics\nVersion: 1.0\n"
    )
    lines = [f"{name} = {value}" for name, value in entry_points.items()]
    (dist_info / "entry_points.txt").write_text(
        "[pytest_qbench.metrics]\n" + "\n".join(lines) + "\n"
    )
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))


def test_entry_point_module_registers_its_metrics_on_first_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_default_registry: None
) -> None:
    install_distribution(
        tmp_path,
        {"demo": "qbench_demo_plugin"},
        {
            "qbench_demo_plugin": """
                from pytest_qbench.evaluation import metric, metric_names

                assert "exact_match" in metric_names()  # a lookup while loading must not deadlock

                @metric("politeness", needs=("response",))
                def politeness(sample):
                    return float("please" in sample.response)
            """
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "qbench_demo_plugin" not in sys.modules  # lazily: nothing imported yet
    evaluation = evaluate("politeness", Sample("yes please"))
    assert evaluation.score == 1.0
    assert "politeness" in REGISTRY.names()


def test_broken_entry_point_is_named_when_a_metric_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_default_registry: None
) -> None:
    install_distribution(
        tmp_path,
        {"broken": "qbench_demo_broken"},
        {"qbench_demo_broken": "raise ImportError('needs numpy')\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert evaluate("exact_match", SAMPLE).score == 1.0  # built-ins still work
    with pytest.raises(MetricConfigError) as excinfo:
        get("politeness")
    assert str(excinfo.value).endswith(
        "entry point 'broken' = 'qbench_demo_broken' failed to load: ImportError: needs numpy"
    )


def test_evaluation_stays_out_of_pydantic() -> None:
    """The pytest process keeps pydantic out; evaluating a metric must not import it."""
    code = (
        "import sys\n"
        "from pytest_qbench.evaluation import Sample, evaluate\n"
        "assert evaluate('rouge_l', Sample('a b', ground_truth='a b')).score == 1.0\n"
        "print(sorted(m for m in ('pydantic', 'pytest', 'jinja2') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_registry_without_a_group_never_reads_entry_points(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(**kwargs: Any) -> None:
        raise AssertionError("entry points read")

    monkeypatch.setattr("importlib.metadata.entry_points", fail)
    assert registry.names() == []


def test_evaluation_time_is_measured(registry: Registry) -> None:
    def sleepy(sample: Sample) -> float:
        time.sleep(0.02)
        return 1.0

    registry.metric("sleepy")(sleepy)
    assert registry.evaluate("sleepy", SAMPLE).evaluation_time_ms >= 19
