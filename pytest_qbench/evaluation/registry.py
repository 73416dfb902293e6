"""The metric registry: ``@metric`` to add one, `get` to find one, `evaluate` to run one.

A metric is a function ``fn(sample, **params)`` that returns a number (``bool`` counts as 0 or
1) or a `Verdict` (a score with a reason and a model). Scores are in 0..1, or 0..scale for a
metric registered with a ``scale``. Judge metrics (``kind="judge"``) also receive ``judge=``.

Inside a metric, raise `MetricError` when the sample cannot be scored (its message becomes the
evaluation's error, as is, and is not retried) or `MissingField` when a field it needs is
missing. Any other exception becomes an error ``"TypeName: message"`` and is retried when
``retries`` allows.

Third-party metrics: an entry point in the group ``pytest_qbench.metrics`` names a module;
the registry imports it the first time a metric is looked up, and the module registers its
metrics with ``@metric`` on import.
"""

from __future__ import annotations

import difflib
import inspect
import math
import threading
import time
from collections.abc import Callable
from collections.abc import Mapping
from concurrent import futures
from dataclasses import dataclass
from importlib import metadata
from typing import Any
from typing import Literal
from typing import TypeVar
from typing import final
from typing import get_args

from pytest_qbench.core.errors import QBenchError
from pytest_qbench.evaluation.sample import Judge
from pytest_qbench.evaluation.sample import Sample
from pytest_qbench.evaluation.sample import Verdict


MetricKind = Literal["deterministic", "judge"]
"""``deterministic`` metrics compute a score themselves; ``judge`` metrics ask a judge."""

SampleField = Literal[
    "response",
    "input",
    "ground_truth",
    "tool_calls",
    "expected_tools",
    "latency_ms",
    "tokens",
    "cost",
]
"""A field of `Sample` a metric may need."""

SAMPLE_FIELDS: tuple[SampleField, ...] = get_args(SampleField)

MetricFn = Callable[..., "float | Verdict"]
F = TypeVar("F", bound=MetricFn)

ENTRY_POINT_GROUP = "pytest_qbench.metrics"
"""The entry-point group whose modules register metrics on import."""

NO_JUDGE_REASON = "no judge configured (override the qbench_judge fixture)"
"""The ``skipped_reason`` of a judge metric evaluated without a judge."""

MAX_RETRIES = 3
"""The most retries `evaluate` allows."""


class MetricConfigError(QBenchError, ValueError):
    """A metric is used wrongly: unknown name, unknown or missing param, bad retries or timeout.

    Raised by `get`, `check_params` and `evaluate`, never stored as an evaluation error: the
    call itself must change.
    """


class MetricError(Exception):
    """Raised inside a metric when the sample cannot be scored (invalid regex, no number...).

    The message becomes the evaluation's error as is, and the metric is not retried.
    """


class MissingField(MetricError):
    """Raised inside a metric that needs a sample field that was not recorded.

    ``alternative`` names another way to provide it, e.g. ``"the substrings= param"``.
    """

    def __init__(self, field: SampleField, alternative: str | None = None) -> None:
        super().__init__(field)
        self.field = field
        self.alternative = alternative

    def message(self, metric_name: str) -> str:
        """The error, e.g. "metric 'exact_match' needs ground_truth; pass ground_truth= to
        qbench.record(...)"."""
        how = "the response" if self.field == "response" else f"{self.field}="
        text = f"metric {metric_name!r} needs {self.field}; pass {how} to qbench.record(...)"
        return f"{text} or {self.alternative}" if self.alternative else text


@final
@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: its function and what it needs and accepts."""

    name: str
    fn: MetricFn
    needs: tuple[SampleField, ...] = ()
    kind: MetricKind = "deterministic"
    scale: float | None = None
    params: tuple[str, ...] = ()
    """Keyword params the function accepts (besides the sample, and ``judge`` for judges)."""
    required_params: tuple[str, ...] = ()
    """Params without a default."""
    any_params: bool = False
    """Whether the function takes ``**params``, so any name is accepted."""

    @property
    def description(self) -> str:
        """The first line of the function's docstring."""
        return (inspect.getdoc(self.fn) or "").partition("\n")[0]


@final
@dataclass(frozen=True)
class Evaluation:
    """The outcome of evaluating one metric on one sample.

    Exactly one of ``score``, ``error`` and ``skipped_reason`` is set: a score, why there is
    none, or why the metric did not run (a judge metric with no judge).
    """

    metric_name: str
    score: float | None = None
    error: str | None = None
    retry_count: int = 0
    """Retries made after a failed first attempt."""
    evaluation_time_ms: float = 0.0
    """Milliseconds over all attempts."""
    model_used: str | None = None
    """The judge's model, for judge metrics."""
    skipped_reason: str | None = None
    reason: str | None = None
    """The metric's or judge's explanation of the score, when it gave one."""
    scale: float | None = None
    """The top of the score's scale when not 1."""


@dataclass(frozen=True)
class _Attempt:
    value: float | Verdict | None = None
    error: str | None = None
    retryable: bool = False


@final
class Registry:
    """Metrics by name. The module-level functions use the default registry, `REGISTRY`."""

    def __init__(self, entry_point_group: str | None = ENTRY_POINT_GROUP) -> None:
        self._specs: dict[str, MetricSpec] = {}
        self._group = entry_point_group
        self._entry_points_loaded = entry_point_group is None
        self._load_errors: list[str] = []
        # Re-entrant: an entry-point module may look metrics up while it is being imported.
        self._lock = threading.RLock()

    def metric(
        self,
        name: str,
        *,
        needs: tuple[SampleField, ...] = (),
        kind: MetricKind = "deterministic",
        scale: float | None = None,
        replace: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(sample, **params) -> float | Verdict`` as metric ``name``.

        Args:
            name: the name tests use, e.g. ``qbench.score("my_metric")``.
            needs: sample fields that must not be ``None``; when one is missing, evaluation yields
                an error naming it instead of calling the function.
            kind: ``"judge"`` metrics receive ``judge=`` and are skipped when there is no judge.
            scale: the top of the score's range when it is not 1 (e.g. 5 for a 0-5 score).
            replace: allow taking a name another function already registered.
        """

        def register(fn: F) -> F:
            self.register(make_spec(name, fn, needs=needs, kind=kind, scale=scale), replace=replace)
            return fn

        return register

    def register(self, spec: MetricSpec, *, replace: bool = False) -> None:
        """Add a metric. A name already taken by another function is refused unless ``replace``;
        registering the same function again (a re-imported module) is allowed."""
        old = self._specs.get(spec.name)
        if old is not None and not replace and _origin(old.fn) != _origin(spec.fn):
            raise MetricConfigError(
                f"metric {spec.name!r} is already registered by {_qualname(old.fn)}; "
                "pick another name or pass replace=True"
            )
        self._specs[spec.name] = spec

    def names(self) -> list[str]:
        """Every registered metric name, sorted (entry points loaded first)."""
        self.load_entry_points()
        return sorted(self._specs)

    def get(self, name: str) -> MetricSpec:
        """The metric called ``name``; `MetricConfigError` lists the known ones and the closest."""
        self.load_entry_points()
        spec = self._specs.get(name)
        if spec is None:
            raise MetricConfigError(self._unknown_message(name))
        return spec

    def load_entry_points(self) -> None:
        """Import the entry-point group's modules, once. A module that fails to import is
        remembered and named when an unknown metric is looked up."""
        with self._lock:
            if self._entry_points_loaded:
                return
            self._entry_points_loaded = True
            assert self._group is not None
            for entry_point in metadata.entry_points(group=self._group):
                try:
                    entry_point.load()
                except Exception as exc:
                    self._load_errors.append(
                        f"entry point {entry_point.name!r} = {entry_point.value!r} failed to "
                        f"load: {_describe(exc)}"
                    )

    def check_params(self, name: str, params: Mapping[str, Any]) -> MetricSpec:
        """The metric, after checking ``params`` against its signature (e.g. when a marker is
        read); `MetricConfigError` names an unknown or missing param and lists the accepted
        ones."""
        spec = self.get(name)
        unknown = sorted(set(params) - set(spec.params)) if not spec.any_params else []
        if unknown:
            accepted = ", ".join(spec.params) or "no params"
            raise MetricConfigError(
                f"metric {name!r} got unknown param {', '.join(map(repr, unknown))}; "
                f"it accepts: {accepted}"
            )
        missing = [p for p in spec.required_params if p not in params]
        if missing:
            raise MetricConfigError(f"metric {name!r} needs param {', '.join(map(repr, missing))}")
        return spec

    def evaluate(
        self,
        name: str,
        sample: Sample,
        *,
        params: Mapping[str, Any] | None = None,
        retries: int = 0,
        timeout_ms: float | None = None,
        judge: Judge | None = None,
    ) -> Evaluation:
        """Evaluate metric ``name`` on ``sample``. Problems with the sample never raise.

        - A needed field that is ``None`` gives an error such as "metric 'exact_match' needs
          ground_truth; pass ground_truth= to qbench.record(...)".
        - A judge metric with ``judge=None`` gives ``skipped_reason`` = `NO_JUDGE_REASON`.
        - An exception in the metric gives the error ``"TypeName: message"`` and is retried up to
          ``retries`` times (0 to 3), each retry counted in ``retry_count``; a `MetricError` is not
          retried.
        - ``timeout_ms`` bounds each attempt: the metric runs in a worker thread, and after the
          timeout the attempt fails with "timed out after N ms" (and may be retried). The abandoned
          call cannot be killed and finishes in the background.
        - A score outside 0..1 (0..scale) is an error.

        Raises `MetricConfigError` for an unknown metric, unknown or missing params, or invalid
        ``retries`` / ``timeout_ms``: those are mistakes in the call, not in the sample.
        """
        params = dict(params or {})
        spec = self.check_params(name, params)
        _check_retries(retries)
        _check_timeout(timeout_ms)
        missing = next((f for f in spec.needs if getattr(sample, f) is None), None)
        if missing is not None:
            return Evaluation(name, error=MissingField(missing).message(name), scale=spec.scale)
        if spec.kind == "judge":
            if judge is None:
                return Evaluation(name, skipped_reason=NO_JUDGE_REASON, scale=spec.scale)
            params["judge"] = judge
        start = time.perf_counter()
        attempt, retry_count = _attempt(spec, sample, params, timeout_ms), 0
        while attempt.retryable and retry_count < retries:
            retry_count += 1
            attempt = _attempt(spec, sample, params, timeout_ms)
        model = getattr(judge, "model", None) if spec.kind == "judge" else None
        elapsed_ms = (time.perf_counter() - start) * 1000
        return _evaluation(spec, attempt, retry_count, elapsed_ms, model)

    def _unknown_message(self, name: str) -> str:
        known = sorted(self._specs)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        text = f"unknown metric {name!r}{hint}; known metrics: {', '.join(known) or 'none'}"
        return "; ".join([text, *self._load_errors])


def make_spec(
    name: str,
    fn: MetricFn,
    *,
    needs: tuple[SampleField, ...] = (),
    kind: MetricKind = "deterministic",
    scale: float | None = None,
) -> MetricSpec:
    """A `MetricSpec` for ``fn``, its params read from its signature; `MetricConfigError` when
    the name, needs, kind, scale or signature is not usable."""
    if not isinstance(name, str) or not name or name != name.strip():
        raise MetricConfigError(f"a metric name must be a non-empty str, given: {name!r}")
    bad = [f for f in needs if f not in SAMPLE_FIELDS]
    if bad:
        raise MetricConfigError(
            f"metric {name!r}: needs has unknown field {bad[0]!r}; fields: {', '.join(SAMPLE_FIELDS)}"
        )
    if kind not in ("deterministic", "judge"):
        raise MetricConfigError(f"metric {name!r}: kind must be 'deterministic' or 'judge'")
    if scale is not None and not (isinstance(scale, (int, float)) and scale > 0):
        raise MetricConfigError(
            f"metric {name!r}: scale must be a positive number, given: {scale!r}"
        )
    params, required, any_params = _read_params(name, fn, kind)
    return MetricSpec(name, fn, tuple(needs), kind, scale, params, required, any_params)


def _read_params(
    name: str, fn: MetricFn, kind: MetricKind
) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    parameters = list(inspect.signature(fn).parameters.values())
    if not parameters or parameters[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise MetricConfigError(f"metric {name!r}: the function must take the sample first")
    keywords = [
        p
        for p in parameters[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    any_params = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    if kind == "judge" and not any_params and all(p.name != "judge" for p in keywords):
        raise MetricConfigError(f"judge metric {name!r} must accept a judge= keyword")
    keywords = [p for p in keywords if not (kind == "judge" and p.name == "judge")]
    required = tuple(p.name for p in keywords if p.default is inspect.Parameter.empty)
    return tuple(p.name for p in keywords), required, any_params


def _check_retries(retries: object) -> None:
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise MetricConfigError(
            f"retries must be an int from 0 to {MAX_RETRIES}, given: {retries!r}"
        )


def _check_timeout(timeout_ms: object) -> None:
    if timeout_ms is None:
        return
    if (
        isinstance(timeout_ms, bool)
        or not isinstance(timeout_ms, (int, float))
        or not math.isfinite(timeout_ms)
        or timeout_ms <= 0
    ):
        raise MetricConfigError(f"timeout_ms must be a positive number, given: {timeout_ms!r}")


def _attempt(
    spec: MetricSpec, sample: Sample, params: dict[str, Any], timeout_ms: float | None
) -> _Attempt:
    try:
        value = _call(spec, sample, params, timeout_ms)
    except _AttemptTimeout as exc:
        return _Attempt(error=str(exc), retryable=True)
    except MissingField as exc:
        return _Attempt(error=exc.message(spec.name))
    except MetricError as exc:
        return _Attempt(error=str(exc))
    except Exception as exc:
        return _Attempt(error=_describe(exc), retryable=True)
    return _Attempt(value=value)


class _AttemptTimeout(Exception):  # not the builtin TimeoutError, which a metric may raise
    """A metric attempt ran past its ``timeout_ms``."""


def _call(
    spec: MetricSpec, sample: Sample, params: dict[str, Any], timeout_ms: float | None
) -> float | Verdict:
    """Run the metric, in a worker thread when there is a timeout.

    A Python thread cannot be killed: after a timeout the call is abandoned and finishes in the
    background. The thread is a daemon (not a ThreadPoolExecutor worker, which the interpreter
    joins at exit), so a metric that never returns cannot hold up the end of the run.
    """
    if timeout_ms is None:
        return spec.fn(sample, **params)
    future: futures.Future[float | Verdict] = futures.Future()

    def work() -> None:
        try:
            future.set_result(spec.fn(sample, **params))
        except BaseException as exc:  # handed to the caller, who decides
            future.set_exception(exc)

    threading.Thread(target=work, name=f"qbench-metric-{spec.name}", daemon=True).start()
    done, _ = futures.wait([future], timeout=timeout_ms / 1000)
    if not done:
        raise _AttemptTimeout(f"timed out after {timeout_ms:g} ms")
    return future.result()


def _evaluation(
    spec: MetricSpec, attempt: _Attempt, retry_count: int, time_ms: float, model: object
) -> Evaluation:
    judge_model = model if isinstance(model, str) else None
    common: dict[str, Any] = {
        "retry_count": retry_count,
        "evaluation_time_ms": time_ms,
        "scale": spec.scale,
    }
    if attempt.error is not None:
        return Evaluation(spec.name, error=attempt.error, model_used=judge_model, **common)
    value = attempt.value
    verdict = value if isinstance(value, Verdict) else None
    score, error = _check_score(spec, verdict.score if verdict else value)
    return Evaluation(
        spec.name,
        score=score,
        error=error,
        model_used=(verdict.model if verdict else None) or judge_model,
        reason=verdict.reason if verdict else None,
        **common,
    )


def _check_score(spec: MetricSpec, score: object) -> tuple[float | None, str | None]:
    """The score as a float, or why it is not one (an error, not retried: the metric is wrong)."""
    top = spec.scale or 1
    if not isinstance(score, (int, float)):
        kind = type(score).__name__
        return None, f"metric {spec.name!r} returned {kind}, expected a number or a Verdict"
    if not (math.isfinite(score) and 0 <= score <= top):
        return None, f"metric {spec.name!r} returned {score!r}, outside 0..{top:g}"
    return float(score), None


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _origin(fn: Callable[..., Any]) -> object:
    """Where a function is defined: the same after its module is imported again."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return id(fn)
    return (_qualname(fn), code.co_filename, code.co_firstlineno)


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


REGISTRY = Registry()
"""The default registry: built-in metrics, ``@metric`` and the entry-point group. The
module-level `metric`, `get`, `metric_names`, `check_params` and `evaluate` are its methods."""


metric = REGISTRY.metric
get = REGISTRY.get
metric_names = REGISTRY.names
check_params = REGISTRY.check_params
evaluate = REGISTRY.evaluate
