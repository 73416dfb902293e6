"""``--qbench-queue=NAME``: pull the units of the suite from a queue in the history database.

After collection the machine plans the units (as ``--qbench-shard`` does, modules kept whole,
cut when longer than half a machine's share) and fills the queue unless another machine did
(``history.queue``). pytest's run loop is then this plugin's: claim a unit, run its tests,
mark it done, claim the next (claimed before the unit's last test, so that fixtures shared
with it are not torn down in between), until the queue is empty. The tests this machine never
ran are reported deselected at the end, so pytest's closing line says "N deselected".
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

import pytest

from pytest_qbench.report import store


if TYPE_CHECKING:
    from pytest_qbench.history.backend import Index
    from pytest_qbench.history.queue import Claim
    from pytest_qbench.plugin.options.shards import ShardSettings
    from pytest_qbench.plugin.session import QBenchSession


LEASE_VAR = "QBENCH_QUEUE_LEASE"
"""Seconds a claimed unit stays its machine's without a sign of life (default ``LEASE``)."""
LEASE = 300.0
POLL = 2.0
"""Seconds at most between looks at a queue whose last units others hold."""
DEFAULT_MACHINES = 4
"""Machines assumed when the CI does not say how many run the queue (sizes the units)."""


def _monotonic(clock: Callable[[], float] = time.monotonic) -> float:
    """``time.monotonic`` as it was when qbench was imported: a test that froze the clock
    (freezegun replaces ``time.monotonic`` and every module attribute holding it, but not a
    default argument) must not stop the renewals of this machine's leases."""
    return clock()


class QueuePlugin:
    """Runs the units this machine claims from the queue."""

    def __init__(self, session: QBenchSession, shard: ShardSettings) -> None:
        from pytest_qbench.report.shapes import new

        self.session = session
        self.shard = shard
        self.name = str(shard.queue)
        self.lease = lease_seconds()
        self.index: Index | None = None
        self.pid = store.process_id()
        """The process that opened the queue: a child a test forked that went on with pytest's
        session claims nothing, marks nothing done and closes nothing of it (``_forked``)."""
        self.created = False
        self.by_count = False
        self.units = 0
        self.expected = 0.0
        self.tests = 0
        self.ran: set[str] = set()
        self.renewed = 0.0
        # which machine of which queue, in the stream's start record: a machine killed
        # mid-run is then known as one, interrupted (its units and times come when it runs)
        session.run["shard"] = new("ShardInfo", index=1, queue=self.name, worker=shard.worker)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        from pytest_qbench.history.database import open_index
        from pytest_qbench.history.queue import create_queue
        from pytest_qbench.history.shardplan import plan_units
        from pytest_qbench.plugin.shards import read_timings

        redact = self.session.redact
        nodeids = [redact(item.nodeid) for item in items]
        self.tests = len(nodeids)
        machines = self.shard.machines or DEFAULT_MACHINES
        units, self.by_count = plan_units(
            nodeids, read_timings(self.session, nodeids, "--qbench-queue"), 1 / (2 * machines)
        )
        settings = self.session.settings
        self.index = open_index(settings.qbench_dir, settings.db, create=True)
        self.created = create_queue(self.index, self.name, units)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        if session.config.option.collectonly or self.index is None:
            return None  # pytest's own loop
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            return None  # pytest's own loop stops for the collection errors
        items = {self.session.redact(item.nodeid): item for item in session.items}
        try:
            self._run(session, items)
        finally:
            rest = [item for nodeid, item in items.items() if nodeid not in self.ran]
            if rest:
                session.config.hook.pytest_deselected(items=rest)
            self._record()
        return True

    def _run(self, session: pytest.Session, items: dict[str, pytest.Item]) -> None:
        claim = self._claim(wait=True)
        while claim is not None:
            mine = [items[nodeid] for nodeid in claim.nodeids if nodeid in items]
            following = None
            for position, item in enumerate(mine):
                last = position == len(mine) - 1
                if last:  # a free unit only: waiting here could wait for a machine waiting on us
                    following = self._claim(wait=False)
                nextitem = mine[position + 1] if not last else _first(following, items)
                self.ran.add(self.session.redact(item.nodeid))
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                if session.shouldfail:
                    raise session.Failed(session.shouldfail)
                if session.shouldstop:
                    raise session.Interrupted(session.shouldstop)
                if self._forked():  # runs no more of the run's tests: they are not its own
                    return
                self._keep_alive()
            self._finish(claim)
            claim = following if following is not None else self._claim(wait=True)

    def _claim(self, *, wait: bool) -> Claim | None:
        """The next unit; with ``wait``, when none is free but others hold some, wait for them
        to finish or for a lease to run out (a machine that died), so that its unit still
        runs."""
        from pytest_qbench.history.queue import claim_next
        from pytest_qbench.history.queue import held_for

        assert self.index is not None
        if self._forked():
            return None
        while True:
            claim = claim_next(
                self.index, self.name, self.shard.worker, self.session.run_id, self.lease
            )
            if claim is not None or not wait:
                break
            held = held_for(self.index, self.name, self.session.run_id)
            if held is None:
                break
            self._keep_alive()
            time.sleep(min(max(held, 0.05), POLL))
        if claim is not None:
            self.units += 1
            self.expected += claim.expected
            self.renewed = _monotonic()
        return claim

    def _finish(self, claim: Claim) -> None:
        from pytest_qbench.history.queue import finish

        assert self.index is not None
        if self._forked():  # its results are not the run's: the unit is not done by it
            return
        # the unit's results on disk before the queue holds it done: a machine killed after
        # this keeps them (the stream's writes are batched)
        self.session.flush_stream()
        finish(self.index, self.name, claim.unit, self.session.run_id)

    def _keep_alive(self) -> None:
        """Renew the leases of the units held, a few times per lease."""
        from pytest_qbench.history.queue import renew

        # a forked child never gets here: _run returns after its test, _claim claims nothing
        if self.index is not None and _monotonic() - self.renewed > self.lease / 4:
            renew(self.index, self.name, self.session.run_id, self.lease)
            self.renewed = _monotonic()

    def _record(self) -> None:
        from pytest_qbench.report.shapes import new

        self.session.run["shard"] = new(
            "ShardInfo",
            index=1,
            queue=self.name,
            worker=self.shard.worker,
            by_count=self.by_count,
            units=self.units,
            expected=None if self.by_count else round(self.expected, 3),
            tests=self.tests,
        )

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._forked():  # its counts are the machine's up to the fork: the session says why
            return
        made = "created" if self.created else "joined"
        terminalreporter.write_line(
            f"qbench: queue {self.name} ({made}): ran {self.units} units, {len(self.ran)} "
            f"tests as {self.shard.worker}"
        )

    def _forked(self) -> bool:
        """Whether this is a child a test forked that went on with pytest's session, not the
        process that opened the queue: it must not claim units (it would run them where the
        run records nothing, and they would be done for every machine), renew their leases,
        mark them done, nor close the connection it shares with the run (PostgreSQL's would
        end the run's session too). ``os.getpid`` as imported: a test that mocks it is not a
        fork."""
        return store.process_id() != self.pid

    @pytest.hookimpl
    def pytest_unconfigure(self) -> None:
        if self.index is not None and not self._forked():
            self.index.close()
        self.index = None


def _first(claim: Claim | None, items: dict[str, pytest.Item]) -> pytest.Item | None:
    if claim is None:
        return None
    return next((items[nodeid] for nodeid in claim.nodeids if nodeid in items), None)


def lease_seconds() -> float:
    """``QBENCH_QUEUE_LEASE``, else ``LEASE``.

    Raises:
        pytest.UsageError: not a number of seconds above 0.
    """
    raw = os.environ.get(LEASE_VAR, "")
    if not raw:
        return LEASE
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise pytest.UsageError(
            f"${LEASE_VAR} must be seconds above 0, given: {raw!r}; e.g. {LEASE_VAR}=300"
        )
    return value
