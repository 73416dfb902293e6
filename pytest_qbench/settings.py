"""Options and ini values -> validated ``Settings``, before any test runs.

Every problem raises ``pytest.UsageError`` as ``<option> <problem>, given: <value>; <fix>``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import pytest

from pytest_qbench.collectors import Limits
from pytest_qbench.options import CAPTURE_DEFAULT
from pytest_qbench.options import DEFAULT_MAX_OUTPUT
from pytest_qbench.options import DEFAULT_MAX_TRACE
from pytest_qbench.options import DEFAULT_MD_MAX_ITEMS
from pytest_qbench.options import OptionReader
from pytest_qbench.options import parse_cap
from pytest_qbench.options import parse_capture
from pytest_qbench.options import parse_count
from pytest_qbench.options import parse_run_id
from pytest_qbench.options import parse_template_spec


@dataclass(frozen=True)
class Settings:
    """Everything the plugin was asked to do, validated."""

    qbench_dir: Path
    run_id: str | None
    json_path: Path | None = None
    md_path: Path | None = None
    digest_path: Path | None = None
    templates: tuple[tuple[str, Path], ...] = ()
    template_dir: Path | None = None
    capture: frozenset[str] = frozenset({"failed", "error"})
    limits: Limits = field(default_factory=Limits)
    md_max_items: int = DEFAULT_MD_MAX_ITEMS


def read_settings(config: pytest.Config) -> Settings:
    """Validate every option; raise ``UsageError`` on the first problem."""
    reader = OptionReader(config)
    qbench_dir, dir_source = reader.path("dir")
    if qbench_dir is None:
        qbench_dir = config.rootpath / ".qbench"
    ensure_writable_dir(qbench_dir, dir_source)
    run_id = reader.parsed("run_id", parse_run_id, None)
    if run_id is not None and (qbench_dir / "runs" / run_id).exists():
        raise pytest.UsageError(
            f"--qbench-run-id {run_id!r} already exists in {qbench_dir / 'runs'}; "
            "choose a new id (run ids are never reused, so no run is overwritten)"
        )
    outputs: dict[str, Path | None] = {}
    for name in ("json", "md", "digest"):
        path, source = reader.path(name)
        if path is not None:
            ensure_writable_file(path, source)
        outputs[name] = path
    template_dir, tdir_source = reader.path("template_dir")
    if template_dir is not None and not template_dir.is_dir():
        raise pytest.UsageError(
            f"{tdir_source} is not a directory, given: {template_dir}; create it or fix the path"
        )
    return Settings(
        qbench_dir=qbench_dir,
        run_id=run_id,
        json_path=outputs["json"],
        md_path=outputs["md"],
        digest_path=outputs["digest"],
        templates=_templates(reader, template_dir),
        template_dir=template_dir,
        capture=reader.parsed("capture", parse_capture, parse_capture(CAPTURE_DEFAULT)),
        limits=Limits(
            max_output=reader.parsed("max_output", parse_cap, DEFAULT_MAX_OUTPUT),
            max_trace=reader.parsed("max_trace", parse_cap, DEFAULT_MAX_TRACE),
        ),
        md_max_items=reader.parsed("md_max_items", parse_count, DEFAULT_MD_MAX_ITEMS),
    )


def _templates(reader: OptionReader, template_dir: Path | None) -> tuple[tuple[str, Path], ...]:
    from pytest_qbench.errors import TemplateError
    from pytest_qbench.render import find_template
    from pytest_qbench.render import make_environment

    specs: list[tuple[str, Path, str]] = [
        (tmpl, reader.cli_dir / out, "--qbench-template")
        for tmpl, out in reader.cli("templates") or []
    ]
    if not specs:
        for line in reader.ini("templates") or []:
            try:
                tmpl, target = parse_template_spec(line)
            except argparse.ArgumentTypeError as exc:
                raise pytest.UsageError(f"ini qbench_templates {exc}") from None
            specs.append((tmpl, reader.ini_dir / target, "ini qbench_templates"))
    env = make_environment(template_dir)
    resolved = []
    for tmpl, out, source in specs:
        base = reader.cli_dir if source.startswith("--") else reader.ini_dir
        name = str(base / tmpl) if (base / tmpl).is_file() else tmpl
        try:
            find_template(env, name)
        except TemplateError as exc:
            raise pytest.UsageError(f"{source} {exc}") from None
        ensure_writable_file(out, source)
        resolved.append((name, out))
    return tuple(resolved)


def ensure_writable_dir(path: Path, source: str) -> None:
    """Refuse a directory that cannot be created or written."""
    if path.exists() and not path.is_dir():
        raise pytest.UsageError(
            f"{source} must be a directory, given: {path} (a file); choose another path"
        )
    _check_creatable(path, source)


def ensure_writable_file(path: Path, source: str) -> None:
    """Refuse an output file that cannot be written: a directory, or a read-only location."""
    if path.is_dir():
        raise pytest.UsageError(
            f"{source} must be a file path, given: {path} (a directory); e.g. {path / 'report.json'}"
        )
    _check_creatable(path.parent, source, shown=path)


def _check_creatable(directory: Path, source: str, shown: Path | None = None) -> None:
    existing = directory
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise pytest.UsageError(
            f"{source} cannot be created, given: {shown or directory} ({existing} is a file); "
            "choose another path"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise pytest.UsageError(
            f"{source} is not writable, given: {shown or directory} (no write permission on "
            f"{existing}); choose a writable path"
        )
