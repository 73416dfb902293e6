"""``@pytest.mark.qbench_case(...)`` + docstring -> ``TestCaseMetadata``.

The marker takes keyword arguments only::

    @pytest.mark.qbench_case(
        key="FRAMED-1390",            # str: external id (JIRA, Azure DevOps, TestRail...)
        title="Checkout with coupon",  # str
        priority="High",              # str or int (kept as text)
        tags=["checkout", "smoke"],   # list of str (a single str is one tag)
        platforms=["web", "ios"],     # list of str
        folder="Payments/Coupons",    # str
        steps=[                       # list: a str is an action without expected result,
            "Open the cart",          #   a dict has "action" and optional "expected",
            {"action": "Apply SAVE10", "expected": "Total drops by 10%"},
            ("Pay", "Receipt shown"), #   a 2-item list/tuple is (action, expected)
        ],
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.report.shapes import new


if TYPE_CHECKING:
    from pytest_qbench.report.records import TestCaseMetadataRecord
    from pytest_qbench.report.records import TestStepRecord


CASE_FIELDS = ("key", "title", "priority", "tags", "platforms", "folder", "steps")
TEXT_FIELDS = ("key", "title", "priority", "folder")
LIST_FIELDS = ("tags", "platforms")


class CaseMarkerError(ValueError):
    """The ``qbench_case`` marker's arguments do not have the documented shape."""


def build_metadata(
    case: dict[str, Any] | None, doc: str | None, has_args: bool
) -> TestCaseMetadataRecord | None:
    """Combine the marker's keyword arguments and the docstring into a ``TestCaseMetadata``
    record.

    Raises:
        CaseMarkerError: naming the field and the expected shape.
    """
    if case is None and doc is None:
        return None
    if has_args:
        raise CaseMarkerError(
            "qbench_case takes keyword arguments only, e.g. qbench_case(key='X-1')"
        )
    data = dict(case or {})
    unknown = sorted(set(data) - set(CASE_FIELDS))
    if unknown:
        raise CaseMarkerError(
            f"qbench_case got unknown field(s) {', '.join(unknown)}; known: {', '.join(CASE_FIELDS)}"
        )
    fields: dict[str, Any] = {name: _text(name, data[name]) for name in TEXT_FIELDS if name in data}
    fields.update({name: _texts(name, data[name]) for name in LIST_FIELDS if name in data})
    if "steps" in data:
        fields["steps"] = _steps(data["steps"])
    return new("TestCaseMetadata", **fields, description=doc)


def _text(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # priority=1
    raise CaseMarkerError(f"qbench_case {name} must be a string, got {value!r}")


def _texts(name: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise CaseMarkerError(f"qbench_case {name} must be a list of strings, got {value!r}")


def _steps(raw: Any) -> list[TestStepRecord]:
    if not isinstance(raw, list):
        raise CaseMarkerError("qbench_case steps must be a list of str, dict or (action, expected)")
    steps = []
    for index, step in enumerate(raw, start=1):
        action, expected = _step_parts(step, index)
        steps.append(new("TestStep", index=index, action=action, expected=expected))
    return steps


def _step_parts(step: Any, index: int) -> tuple[str, str | None]:
    if isinstance(step, str):
        return step, None
    if isinstance(step, dict) and set(step) <= {"action", "expected"}:
        action, expected = step.get("action"), step.get("expected")
    elif isinstance(step, list) and len(step) == 2:
        action, expected = step
    else:
        action = expected = None
    if isinstance(action, str) and (expected is None or isinstance(expected, str)):
        return action, expected
    raise CaseMarkerError(
        f"qbench_case steps[{index - 1}] must be a str, a dict with 'action' (and optional "
        f"'expected') as strings, or an (action, expected) pair; got {step!r}"
    )
