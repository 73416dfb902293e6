"""``--qbench-shard=I/N``: run this machine's part of the suite, planned from the history.

After collection (and after ``-k``, ``-m`` and other plugins' deselection), every shard reads
the same history (runs of other commits than this one's), plans the same shards
(``history.shardplan``), keeps its own units and deselects the rest through pytest's
``pytest_deselected`` hook, so pytest's closing line says "N deselected". The plan's one-line
summary follows pytest's "collected N items"; the run records its shard (``RunMeta.shard``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.plugin.options.shards import ShardSettings


if TYPE_CHECKING:
    from pytest_qbench.history.shardplan import Plan
    from pytest_qbench.history.shardplan import Timing
    from pytest_qbench.plugin.session import QBenchSession
    from pytest_qbench.report.records import ShardInfoRecord


HISTORY_RUNS = 5
"""A test's last results (that passed or failed) whose median is its expected time."""


class ShardPlugin:
    """Keeps this shard's tests, deselects the others."""

    def __init__(self, session: QBenchSession, shard: ShardSettings) -> None:
        from pytest_qbench.report.shapes import new

        self.session = session
        self.shard = shard
        self.summary: str | None = None
        # which shard this is, in the stream's start record (planned after collection): a shard
        # killed mid-run is then known as that shard, interrupted, and not a missing one
        session.run["shard"] = new("ShardInfo", index=shard.index, count=shard.count)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        from pytest_qbench.history.shardplan import plan_shards

        redact = self.session.redact
        nodeids = [redact(item.nodeid) for item in items]
        plan = plan_shards(nodeids, read_timings(self.session, nodeids), self.shard.count)
        mine = set(plan.nodeids(self.shard.index - 1))
        kept = [item for item, nodeid in zip(items, nodeids, strict=True) if nodeid in mine]
        dropped = [item for item, nodeid in zip(items, nodeids, strict=True) if nodeid not in mine]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        self.summary = plan.summary(self.shard.index - 1)
        self.session.run["shard"] = shard_record(self.shard, plan)

    @pytest.hookimpl
    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        if not self.summary or config.get_verbosity() < 0:
            return []
        return [f"qbench: {self.summary}"]

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if self.summary and config.get_verbosity() < 0:  # -q prints no "collected" lines
            terminalreporter.write_line(f"qbench: {self.summary}")


def read_timings(
    session: QBenchSession, nodeids: list[str], source: str = "--qbench-shard"
) -> dict[str, list[Timing]]:
    """The recorded phase times of ``nodeids`` (none without an index yet); ``source``: the
    option that plans, for the message.

    Raises:
        pytest.UsageError: the index exists but cannot be read: a shard planned without it
            would not match the other shards' plans.
    """
    from pytest_qbench.core.errors import HistoryError
    from pytest_qbench.history import INDEX_NAME
    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.queries import phase_timings

    settings = session.settings
    if settings.db is None and not (settings.qbench_dir / INDEX_NAME).is_file():
        return {}
    ci = session.environment["ci"]
    try:
        index = open_index(settings.qbench_dir, settings.db)
        try:
            return phase_timings(index, nodeids, HISTORY_RUNS, ci["commit"] if ci else None)
        finally:
            index.close()
    except HistoryError as exc:
        if exc.slug == "index-missing":  # a database without runs yet: no history
            return {}
        raise pytest.UsageError(
            f"{source} cannot read the history it plans from: {exc}; every machine must read "
            f"the same history, so fix it (or run without {source})"
        ) from None


def shard_record(shard: ShardSettings, plan: Plan) -> ShardInfoRecord:
    """The ``ShardInfo`` record of this shard of ``plan``."""
    from pytest_qbench.report.shapes import new

    mine = shard.index - 1
    return new(
        "ShardInfo",
        index=shard.index,
        count=shard.count,
        by_count=plan.by_count,
        units=len(plan.shards[mine]),
        expected=None if plan.by_count else round(plan.expected[mine], 3),
        plan=[] if plan.by_count else [round(value, 3) for value in plan.expected],
        tests=sum(len(unit.nodeids) for units in plan.shards for unit in units),
    )
