"""What an agent did, as metrics see it: `Sample`, `ToolCall` and a metric's `Verdict`.

Standard library only: these types travel through the pytest process, which keeps pydantic out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from numbers import Real
from typing import Any
from typing import Protocol
from typing import final


TOOL_CALL_SHAPE = "a tool name (str) or a mapping {'name': str, 'arguments': {...}}"
"""How a tool call may be written, quoted in error messages."""


@final
@dataclass(frozen=True)
class ToolCall:
    """One tool call: the tool's name and, when known, its arguments.

    ``arguments`` is ``None`` when the call was written as a bare name. In an expected call that
    means "any arguments"; in an actual call it is compared as ``{}``.
    """

    name: str
    arguments: Mapping[str, Any] | None = None


@final
@dataclass(frozen=True)
class Verdict:
    """A score with its explanation: what a judge returns, and what a metric may return.

    ``score`` is in 0..1 (0..scale for a metric registered with a ``scale``); ``reason`` says why
    and ``model`` names the model that judged, when there is one.
    """

    score: float
    reason: str | None = None
    model: str | None = None


def normalize_tool_call(value: object, where: str = "tool call") -> ToolCall:
    """One tool call from a `ToolCall`, a name, or a mapping with ``name`` and ``arguments``.

    The mapping's arguments may be under ``arguments`` or ``args``, as a mapping or a JSON
    object in a string (the shape OpenAI-style APIs return). Other keys (``id``, ``type``) are
    ignored. Anything else raises ``ValueError`` naming ``where`` and the expected shape.
    """
    if isinstance(value, ToolCall):
        return value
    if isinstance(value, str):
        return ToolCall(_check_name(value, where))
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected {TOOL_CALL_SHAPE}, got {type(value).__name__}")
    if "arguments" in value and "args" in value:
        raise ValueError(f"{where}: give 'arguments' or 'args', not both")
    arguments = value.get("arguments", value.get("args"))
    return ToolCall(_check_name(value.get("name"), where), _parse_arguments(arguments, where))


def normalize_tool_calls(
    values: Iterable[object] | None, where: str = "tool_calls"
) -> tuple[ToolCall, ...]:
    """A tuple of `ToolCall` from a list of names, mappings or tool calls (``None`` gives ``()``).

    A malformed entry raises ``ValueError`` naming its index, e.g. ``tool_calls[2]: ...``.
    """
    if values is None:
        return ()
    if isinstance(values, (str, bytes, Mapping)):
        raise ValueError(
            f"{where}: expected a list of tool calls, got a {type(values).__name__}; "
            f"wrap it in a list: [{values!r}]"
        )
    return tuple(normalize_tool_call(value, f"{where}[{i}]") for i, value in enumerate(values))


def _check_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}: expected {TOOL_CALL_SHAPE}; the name must be a non-empty str")
    return name


def _parse_arguments(arguments: object, where: str) -> Mapping[str, Any] | None:
    if arguments is None or isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError as exc:
            raise ValueError(f"{where}: arguments is a str but not JSON: {exc}") from None
        if isinstance(parsed, dict):
            return parsed
    raise ValueError(
        f"{where}: arguments must be a mapping (or a JSON object in a str), "
        f"got {type(arguments).__name__}"
    )


@final
@dataclass(frozen=True)
class Sample:
    """One agent interaction, as recorded by ``qbench.record(...)``; the input of every metric.

    ``tool_calls`` and ``expected_tools`` are normalised to tuples of `ToolCall` on creation
    (``expected_tools`` stays ``None`` when not given: "nothing expected" is ``[]``).
    ``latency_ms``, ``tokens`` and ``cost`` are non-negative numbers when given. ``extra`` holds
    any other keyword passed to ``record``.
    """

    response: Any
    input: Any = None
    ground_truth: Any = None
    tool_calls: tuple[ToolCall, ...] = ()
    expected_tools: tuple[ToolCall, ...] | None = None
    latency_ms: float | None = None
    tokens: int | None = None
    cost: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Normalising in place keeps one constructor for users and for `from_record`.
        object.__setattr__(self, "tool_calls", normalize_tool_calls(self.tool_calls))
        if self.expected_tools is not None:
            expected = normalize_tool_calls(self.expected_tools, "expected_tools")
            object.__setattr__(self, "expected_tools", expected)
        _check_amount("latency_ms", self.latency_ms)
        _check_amount("cost", self.cost)
        _check_amount("tokens", self.tokens, integer=True)
        object.__setattr__(self, "extra", dict(self.extra))

    @classmethod
    def from_record(
        cls,
        response: Any,
        *,
        input: Any = None,
        ground_truth: Any = None,
        tool_calls: Iterable[object] | None = (),
        expected_tools: Iterable[object] | None = None,
        latency_ms: float | None = None,
        tokens: int | None = None,
        cost: float | None = None,
        **extra: Any,
    ) -> Sample:
        """A sample from exactly the arguments of ``qbench.record(...)``; unknown keywords go to
        ``extra``."""
        return cls(
            response,
            input=input,
            ground_truth=ground_truth,
            tool_calls=normalize_tool_calls(tool_calls),
            expected_tools=(
                None
                if expected_tools is None
                else normalize_tool_calls(expected_tools, "expected_tools")
            ),
            latency_ms=latency_ms,
            tokens=tokens,
            cost=cost,
            extra=extra,
        )


def _check_amount(name: str, value: object, *, integer: bool = False) -> None:
    if value is None:
        return
    kind = "a non-negative int" if integer else "a non-negative number"
    valid_type = isinstance(value, int) if integer else isinstance(value, Real)
    if isinstance(value, bool) or not valid_type:
        raise ValueError(f"{name} must be {kind}, got {type(value).__name__}: {value!r}")
    number = float(value)  # type: ignore[arg-type]  # a Real, checked above
    if math.isnan(number) or number < 0:
        raise ValueError(f"{name} must be {kind}, got {value!r}")


def as_text(value: object) -> str:
    """The text a text metric compares: a str as is, a dict or list as sorted JSON, else str()."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return str(value)


class Judge(Protocol):
    """Scores a sample for a judge metric; called as ``judge(metric_name, sample, prompt)``.

    A judge may have a ``model`` attribute (str): it becomes ``model_used`` when the verdict
    names none.
    """

    def __call__(self, metric_name: str, sample: Sample, prompt: str, /) -> Verdict:
        """The verdict on ``sample`` for ``metric_name``; ``prompt`` is the metric's question."""
        ...
