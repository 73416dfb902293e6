"""Generations held between the rounds of one ``generate_tests_workflow`` call (issue 23).

On the MCP protocol 2026-07-28 the server cannot send ``sampling/createMessage`` during a tool
call: the tool returns the prompts it needs (an ``InputRequiredResult``) and the client calls it
again with the answers and the request state it was given. The generation's child keeps running
meanwhile; it is held here under its run id (the request state) until the client comes back.
A client that never comes back does not keep it forever: at the run's own deadline (the
call's timeout) its process group is killed, its output kept, and the one-run slot freed.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from dataclasses import field

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp.process import POLL_SECONDS
from pytest_qbench.mcp.process import PytestProcess
from pytest_qbench.mcp.service import RunService


@dataclass
class Held:
    """A generation waiting for the client's answers to its prompts."""

    process: PytestProcess
    asked: list[str]
    """The stems of the prompts sent in the last round, in order."""
    claimed: threading.Event = field(default_factory=threading.Event)


class HeldGenerations:
    """The generations waiting for their client, by run id."""

    def __init__(self, service: RunService) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._held: dict[str, Held] = {}

    def hold(self, process: PytestProcess, asked: list[str]) -> str:
        """Keep ``process`` until ``claim``, or stop it at its deadline; the request state."""
        key = process.plan.run_id
        held = Held(process, asked)
        with self._lock:
            self._held[key] = held
        watchdog = threading.Thread(
            target=self._expire, args=(key, held), name=f"qbench-held-{key}", daemon=True
        )
        watchdog.start()
        return key

    def claim(self, state: str) -> Held:
        """The generation ``state`` names, taken back for the next round.

        Raises:
            ToolFailure: no generation waits under that state (it ended at its timeout).
        """
        with self._lock:
            held = self._held.pop(state, None)
        if held is None:
            raise ToolFailure(
                f"no generation waits for these answers (request state {state[:80]!r}): it was "
                "stopped at its timeout or has ended; call generate_tests_workflow again"
            )
        held.claimed.set()
        return held

    def stop_all(self) -> None:
        """Stop every generation still waiting (the server is shutting down)."""
        with self._lock:
            waiting = list(self._held.items())
        for key, held in waiting:
            self._stop(key, held)

    def _expire(self, key: str, held: Held) -> None:
        """At the run's deadline, stop the generation if its client has not come back. Looked at
        every ``POLL_SECONDS``, as ``RunService.step`` looks at a running child: a deadline
        moved meanwhile (by a test, once the client has been refused) counts."""
        while not held.claimed.wait(POLL_SECONDS):
            if held.process.overdue():
                self._stop(key, held)
                return

    def _stop(self, key: str, held: Held) -> None:
        """Kill the waiting generation's process group, keep its output, free the slot."""
        with self._lock:
            if self._held.get(key) is not held:
                return
            del self._held[key]
        process = held.process
        try:
            process.stop("timeout", self.service.config.stop_grace)
            with contextlib.suppress(Exception):  # the run's own files stay the record
                self.service.wrap_up(process)
        finally:
            self.service.release(process)
