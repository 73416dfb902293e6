"""The tool-call metric ``tool_calls``: one metric, an explicit ``mode``, optional argument matching.

Modes compare the calls the agent made (``actual``) with the expected ones:

- ``set``: the same tools, ignoring order and repeats;
- ``multiset``: the same calls, each as many times, in any order;
- ``exact``: the same calls in the same order;
- ``ordered``: the expected calls appear in this order among the actual ones (others may come
  between);
- ``precision``, ``recall``, ``f1``: matched calls over actual, over expected, and their
  harmonic mean, each call matched at most once;
- ``forbidden``: 0 when any call matches one of ``forbidden=[...]``, else 1.

Expected calls that carry arguments are compared with ``arguments``: ``"subset"`` (default; the
expected arguments are contained in the actual ones, recursively for mappings), ``"exact"``
(equal), or ``"ignore"``. An expected call without arguments matches any call of that tool.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import get_args

from pytest_qbench.evaluation.registry import MetricError
from pytest_qbench.evaluation.registry import MissingField
from pytest_qbench.evaluation.registry import metric
from pytest_qbench.evaluation.sample import Sample
from pytest_qbench.evaluation.sample import ToolCall
from pytest_qbench.evaluation.sample import Verdict
from pytest_qbench.evaluation.sample import normalize_tool_calls


ToolMode = Literal["set", "multiset", "exact", "ordered", "precision", "recall", "f1", "forbidden"]
"""How ``tool_calls`` compares actual and expected calls."""

ArgumentMatch = Literal["subset", "exact", "ignore"]
"""How the arguments of an expected call are compared with the actual call's."""

TOOL_MODES: tuple[ToolMode, ...] = get_args(ToolMode)
ARGUMENT_MATCHES: tuple[ArgumentMatch, ...] = get_args(ArgumentMatch)


def is_subset(expected: object, actual: object) -> bool:
    """Whether ``expected`` is contained in ``actual``: mappings key by key, recursively; any
    other value must be equal."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return all(k in actual and is_subset(v, actual[k]) for k, v in expected.items())
    return bool(expected == actual)


def call_matches(expected: ToolCall, actual: ToolCall, arguments: ArgumentMatch = "subset") -> bool:
    """Whether ``actual`` is a call ``expected`` describes (same name; arguments per
    ``arguments``)."""
    if expected.name != actual.name:
        return False
    if arguments == "ignore" or expected.arguments is None:
        return True
    actual_arguments = actual.arguments or {}
    if arguments == "exact":
        return dict(expected.arguments) == dict(actual_arguments)
    return is_subset(expected.arguments, actual_arguments)


def count_matched(
    expected: Sequence[ToolCall], actual: Sequence[ToolCall], arguments: ArgumentMatch
) -> int:
    """The most expected calls that can be paired with distinct actual calls.

    A bipartite matching (Kuhn's augmenting paths): with argument subsets, one actual call may
    fit several expected ones, so greedy pairing can undercount.
    """
    fits = [[j for j, a in enumerate(actual) if call_matches(e, a, arguments)] for e in expected]
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(assign(i, set()) for i in range(len(expected)))


def _is_subsequence(
    expected: Sequence[ToolCall], actual: Sequence[ToolCall], arguments: ArgumentMatch
) -> bool:
    calls = iter(actual)  # taking the earliest fitting call never loses a later match
    return all(any(call_matches(e, a, arguments) for a in calls) for e in expected)


def _ratio(matched: int, total: int, empty: float) -> float:
    return matched / total if total else empty


def score_tool_calls(
    actual: Iterable[object],
    expected: Iterable[object],
    *,
    mode: ToolMode = "set",
    arguments: ArgumentMatch = "subset",
) -> float:
    """The score in 0..1 of ``actual`` calls against ``expected`` ones (the forbidden list for
    ``mode="forbidden"``). Calls may be names, mappings or `ToolCall`.

    With no expected calls, recall is 1; with no actual calls, precision is 1 only when none
    were expected. ``ValueError`` for an unknown mode or argument match.
    """
    if mode not in TOOL_MODES:
        raise ValueError(
            f"tool_calls: mode must be one of {', '.join(TOOL_MODES)}, given: {mode!r}"
        )
    if arguments not in ARGUMENT_MATCHES:
        raise ValueError(
            f"tool_calls: arguments must be one of {', '.join(ARGUMENT_MATCHES)}, given: {arguments!r}"
        )
    done = normalize_tool_calls(actual, "tool_calls")
    wanted = normalize_tool_calls(
        expected, "forbidden" if mode == "forbidden" else "expected_tools"
    )
    return _SCORERS[mode](wanted, done, arguments)


def _set(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    covered = all(any(call_matches(x, y, args) for y in a) for x in e)
    explained = all(any(call_matches(x, y, args) for x in e) for y in a)
    return float(covered and explained)


def _multiset(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    return float(len(e) == len(a) and count_matched(e, a, args) == len(e))


def _exact(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    pairs = zip(e, a, strict=False)
    return float(len(e) == len(a) and all(call_matches(x, y, args) for x, y in pairs))


def _ordered(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    return float(_is_subsequence(e, a, args))


def _precision(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    return _ratio(count_matched(e, a, args), len(a), 0.0 if e else 1.0)


def _recall(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    return _ratio(count_matched(e, a, args), len(e), 1.0)


def _f1(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    precision, recall = _precision(e, a, args), _recall(e, a, args)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _forbidden(e: Sequence[ToolCall], a: Sequence[ToolCall], args: ArgumentMatch) -> float:
    return float(not any(call_matches(x, y, args) for x in e for y in a))


Scorer = Callable[[Sequence[ToolCall], Sequence[ToolCall], ArgumentMatch], float]

_SCORERS: dict[str, Scorer] = {
    "set": _set,
    "multiset": _multiset,
    "exact": _exact,
    "ordered": _ordered,
    "precision": _precision,
    "recall": _recall,
    "f1": _f1,
    "forbidden": _forbidden,
}


def tools_matched(
    actual: Iterable[object],
    expected: Iterable[object],
    mode: ToolMode = "set",
    arguments: ArgumentMatch = "subset",
) -> bool:
    """Whether the tool calls match fully (score 1 in ``mode``): a test result's
    ``tools_matched``."""
    return score_tool_calls(actual, expected, mode=mode, arguments=arguments) == 1.0


@metric("tool_calls", needs=("tool_calls",))
def tool_calls(
    sample: Sample,
    *,
    mode: ToolMode = "set",
    arguments: ArgumentMatch = "subset",
    forbidden: Sequence[Any] | None = None,
) -> Verdict:
    """Tool calls made against the expected ones (or the forbidden ones), in ``mode``."""
    if (mode == "forbidden") != (forbidden is not None):
        raise MetricError(
            "tool_calls: forbidden=[...] goes with mode='forbidden', and only with it"
        )
    expected = forbidden if forbidden is not None else sample.expected_tools
    if expected is None:
        raise MissingField("expected_tools")
    try:
        score = score_tool_calls(sample.tool_calls, expected, mode=mode, arguments=arguments)
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    called = [call.name for call in sample.tool_calls]
    return Verdict(score, reason=None if score == 1 else f"called {called}")
