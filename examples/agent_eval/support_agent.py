"""A tiny, deterministic customer-support "agent": keyword rules instead of a model, so the
example runs offline and gives the same scores every time.

``SUPPORT_AGENT_VERSION=2`` switches to a worse version (terse answers, a missed tool call), to
show what the baseline gate says about a regression.
"""

from __future__ import annotations

import csv
import io
import os


HOURS = "We are open Monday to Friday, 9am to 5pm CET."


def answer(question: str, files: dict[str, str] | None = None) -> dict[str, object]:
    """Answer a customer: the response, the tools called, and the tokens spent."""
    worse = os.environ.get("SUPPORT_AGENT_VERSION") == "2"
    files = files or {}
    text = question.lower()
    if "hours" in text or "open" in text:
        response, tools = HOURS, ["get_hours"]
    elif "order" in text:
        response, tools = _order_status(text, files), ["lookup_order"]
    elif "refund" in text or "return" in text:
        policy = next((t for p, t in files.items() if p.endswith(".md")), "")
        response = _first_sentence(policy) if policy else "Returns are accepted within 30 days."
        tools = ["read_policy"] if not worse else []
    else:
        response, tools = "Let me connect you with a colleague.", ["handoff"]
    if worse and "order" not in text:
        response = " ".join(response.split()[:4])  # version 2 cuts its answers short
    return {"response": response, "tool_calls": tools, "tokens": len(response.split()) * 4}


def _order_status(text: str, files: dict[str, str]) -> str:
    table = next((t for p, t in files.items() if p.endswith(".csv")), "")
    for row in csv.DictReader(io.StringIO(table)):
        if row["order"] in text:
            return f"Order {row['order']} is {row['status']}."
    return "I could not find that order."


def _first_sentence(markdown: str) -> str:
    lines = [line for line in markdown.splitlines() if line and not line.startswith("#")]
    return lines[0].split(". ")[0].rstrip(".") + "." if lines else ""
