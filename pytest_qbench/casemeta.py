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

from typing import Any

from pydantic import ValidationError

from pytest_qbench.models import TestCaseMetadata
from pytest_qbench.models import TestStep


CASE_FIELDS = ("key", "title", "priority", "tags", "platforms", "folder", "steps")


class CaseMarkerError(ValueError):
    """The ``qbench_case`` marker's arguments do not have the documented shape."""


def build_metadata(
    case: dict[str, Any] | None, doc: str | None, has_args: bool
) -> TestCaseMetadata | None:
    """Combine the marker's keyword arguments and the docstring.

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
    for name in ("tags", "platforms"):
        if isinstance(data.get(name), str):
            data[name] = [data[name]]
    if "priority" in data and isinstance(data["priority"], int):
        data["priority"] = str(data["priority"])
    try:
        if "steps" in data:
            data["steps"] = _steps(data["steps"])
        return TestCaseMetadata.model_validate({**data, "description": doc})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise CaseMarkerError(f"qbench_case has invalid values: {problems}") from None


def _steps(raw: Any) -> list[TestStep]:
    if not isinstance(raw, list):
        raise CaseMarkerError("qbench_case steps must be a list of str, dict or (action, expected)")
    steps = []
    for index, step in enumerate(raw, start=1):
        if isinstance(step, str):
            steps.append(TestStep(index=index, action=step))
        elif isinstance(step, dict) and isinstance(step.get("action"), str):
            expected = step.get("expected")
            steps.append(TestStep(index=index, action=step["action"], expected=expected))
        elif isinstance(step, list) and len(step) == 2 and all(isinstance(s, str) for s in step):
            steps.append(TestStep(index=index, action=step[0], expected=step[1]))
        else:
            raise CaseMarkerError(
                f"qbench_case steps[{index - 1}] must be a str, a dict with 'action' (and optional "
                f"'expected'), or an (action, expected) pair; got {step!r}"
            )
    return steps
