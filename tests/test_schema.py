"""The report format's JSON Schema, checked into docs/, stays in step with the models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_qbench.cli import main
from pytest_qbench.cli.schemas import MODELS
from pytest_qbench.report import models


SCHEMA_FILE = Path(__file__).parent.parent / "docs" / "report-schema.json"
REGENERATE = "regenerate it with: qbench schema > docs/report-schema.json"
SCHEMAS_DIR = SCHEMA_FILE.parent / "schemas"
"""The other models' schemas: the digest, the stream, check.json and each command's --json."""


def test_checked_in_schema_matches_qbench_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/report-schema.json equals what ``qbench schema`` prints now."""
    assert SCHEMA_FILE.is_file(), f"{SCHEMA_FILE} is missing; {REGENERATE}"
    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    checked_in = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert checked_in == printed, f"docs/report-schema.json is stale; {REGENERATE}"


def test_schema_is_the_models_serialization_schema() -> None:
    """The checked-in schema is TestReport's serialization schema (pass_rate included)."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema == models.TestReport.model_json_schema(mode="serialization")
    summary = schema["$defs"]["ReportSummary"]
    assert "pass_rate" in summary["properties"]
    assert schema["$defs"]["ReportMeta"]["properties"]["schema_version"]["default"] == (
        models.SCHEMA_VERSION
    )


def test_schema_forbids_unknown_fields() -> None:
    """Every object in the schema says additionalProperties: false (extra='forbid')."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    open_objects = [
        name
        for name, definition in schema["$defs"].items()
        if definition.get("type") == "object"
        and definition.get("additionalProperties") is not False
    ]
    assert open_objects == []
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize("name", [name for name in MODELS if name != "report"])
def test_checked_in_model_schemas_match_qbench_schema(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/schemas/NAME.json equals what ``qbench schema --model NAME`` prints now, for every
    model it exports (the report's is docs/report-schema.json)."""
    path = SCHEMAS_DIR / f"{name}.json"
    regenerate = f"regenerate it with: qbench schema --model {name} > docs/schemas/{name}.json"
    assert path.is_file(), f"{path} is missing; {regenerate}"
    assert main(["schema", "--model", name]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(path.read_text(encoding="utf-8")) == printed, f"{path} is stale; {regenerate}"


def test_no_schema_file_without_a_model() -> None:
    """Every file in docs/schemas/ is a model qbench schema exports (none left behind)."""
    assert sorted(p.stem for p in SCHEMAS_DIR.glob("*.json")) == sorted(set(MODELS) - {"report"})
