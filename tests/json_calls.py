"""Counting what ``json.loads`` parses: the session end's readers leave lines unparsed."""

from __future__ import annotations

import json
from typing import Any

import pytest


def parsed_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``json.loads`` parses from now on (until ``monkeypatch.undo()``), in order."""
    parsed: list[str] = []
    loads = json.loads

    def counted(text: str, **options: Any) -> Any:
        parsed.append(text)
        return loads(text, **options)

    monkeypatch.setattr(json, "loads", counted)
    return parsed
