"""A pytest plugin that writes the collected tests for the catalog (``ingest_tests``).

Loaded by ``pytest --collect-only -p no:qbench -p pytest_qbench.plugin.collect_dump``
with ``QBENCH_CATALOG_DUMP`` naming the output: one JSON line per test (node id, location,
markers, ``qbench_case`` arguments, docstring) and one per collection error. The qbench plugin
is blocked, so collecting writes no run; this plugin declares qbench's options and markers in
its place, so a configuration that sets them (and ``--strict-config``) still works. The run's
state lives in a `CollectionDump` registered at ``pytest_configure``, never in the module.

The MCP server loads it into its test runs too, with ``QBENCH_COLLECT_ROOT`` naming the project
root: then a file or directory that resolves outside the root (a symlink out of the project) is
not collected, with a warning naming it, so a run never imports code from outside the project.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from pytest_qbench.core.redact import Redactor
from pytest_qbench.plugin import registered
from pytest_qbench.plugin.collectors import in_installed_package
from pytest_qbench.plugin.collectors import item_facts
from pytest_qbench.plugin.options.declare import add_options


DUMP_VARIABLE = "QBENCH_CATALOG_DUMP"
ROOT_VARIABLE = "QBENCH_COLLECT_ROOT"
PLUGIN_NAME = "qbench-collect-dump"


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser) -> None:
    with contextlib.suppress(ValueError):  # the qbench plugin was loaded after all
        add_options(parser)


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    for line in (
        "qbench_case(key, title, priority, tags, platforms, folder, steps): test-case metadata",
        "qbench(metrics, expected_tools, ground_truth): agent-evaluation metrics",
    ):
        config.addinivalue_line("markers", line)
    target = os.environ.get(DUMP_VARIABLE)
    if target:
        registered.register(config, CollectionDump(Path(target)), PLUGIN_NAME)


@pytest.hookimpl
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Refuse a path that resolves outside ``QBENCH_COLLECT_ROOT``, with a warning."""
    root = os.environ.get(ROOT_VARIABLE)
    outside = outside_root(collection_path, Path(root)) if root else None
    if outside is None:
        return None
    warnings.warn(
        pytest.PytestCollectionWarning(
            f"qbench did not collect {collection_path}: it leads outside the project root {root} "
            f"(to {outside}); move it into the project"
        ),
        stacklevel=1,
    )
    return True


def outside_root(path: Path, root: Path) -> Path | None:
    """Where ``path`` really is, when that is outside ``root`` (``None`` inside it)."""
    try:
        real = path.resolve()
        inside = real.is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop leads nowhere in the root
        return path
    return None if inside else real


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    registered.unregister_all(config)


class CollectionDump:
    """One run's dump: the collection errors as they come, then every test and error written to
    ``target`` when collection ends. Nothing is kept in the module, so runs never share state."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.errors: list[dict[str, Any]] = []

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append({"error": {"nodeid": report.nodeid, "message": report.longreprtext}})

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        redact = Redactor(os.environ)  # a secret in a parametrized id never reaches the catalog
        with self.target.open("w", encoding="utf-8") as handle:
            for item in session.items:
                record = redact.data(_item_record(item))
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            for error in self.errors:
                handle.write(json.dumps(redact.data(error), ensure_ascii=False) + "\n")


def _item_record(item: pytest.Item) -> dict[str, Any]:
    path, line, name = item.location
    if in_installed_package(path):  # a plugin made it (pytest-bdd's scenarios())
        path, line = item.nodeid.split("::", 1)[0], None
    return {
        "nodeid": item.nodeid,
        "path": Path(path).as_posix(),
        "line": None if line is None else line + 1,
        "name": name,
        **item_facts(item, None),
    }
