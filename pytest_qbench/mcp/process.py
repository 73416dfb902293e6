"""The pytest child: its own process group, no stdin, output to files, progress, stop and kill.

The child runs through the one supervisor (``core/supervise.py``): it leads a new session, so
everything it starts (xdist workers, servers a test launched) is in its process group, and
stopping the run interrupts the group first, so that pytest writes its reports marked
``interrupted``, then kills the whole tree: its cgroup where one can be made (else its process
tree), its process group, and every process carrying its cookie (a daemon a test started that
double-forked into a session of its own). When the run ends normally the same sweep runs:
nothing a test started outlives the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import IO

from pytest_qbench.core.supervise import Child
from pytest_qbench.core.supervise import Containment
from pytest_qbench.mcp.command import RunPlan
from pytest_qbench.report import store
from pytest_qbench.report.models import RunMeta


COLLECTED = re.compile(rb"collected (\d+) items?|\[(\d+) items?\]")
POLL_SECONDS = 0.25
STREAM_SETTLE = store.BATCH_SECONDS + 1.0
"""Seconds a run found overdue with results missing gets once, before it is judged: its
stream's writes are batched (``store.BATCH_SECONDS``), so results already made can still wait
in its memory; the second covers a busy machine's delay of the writer's thread."""
OUTPUT_NAMES = {"stdout": "stdout.txt", "stderr": "stderr.txt"}
DESELECTED = b'{"kind":"deselected"'
END = b'{"kind":"end"'


@dataclass(frozen=True)
class Progress:
    """How far a run is."""

    done: int
    """Tests finished."""
    failed: int
    """Of which failed or errored."""
    total: int | None
    """Tests selected (collected, less those deselected), once pytest has said."""
    ended: bool = False
    """pytest wrote the stream's end record: its session end is under way or done."""

    @property
    def complete(self) -> bool:
        """Every selected test has its result (what is left is pytest's session end)."""
        return self.ended or (self.total is not None and self.done >= self.total)

    @property
    def message(self) -> str:
        """``12/40 tests, 2 failed``."""
        of = f"/{self.total}" if self.total is not None else ""
        return f"{self.done}{of} tests, {self.failed} failed"


class PytestProcess:
    """One pytest run in its own process group."""

    def __init__(self, plan: RunPlan) -> None:
        self.plan = plan
        self.started = time.monotonic()
        self.started_at = datetime.now(timezone.utc)
        self.stopped_by: str | None = None
        """``timeout`` or ``cancelled`` when this server stopped the run."""
        self.deadline = self.started + plan.timeout
        """When the run is overdue (``extend`` moves it once)."""
        self.extended = False
        self.settled = False
        """Whether the deadline was moved once for the stream's last batch (``STREAM_SETTLE``)."""
        self.complete_when_stopped = False
        """Every test had its result when this server stopped the run (in its session end)."""
        self._stream_offset = 0
        self._collected_count: int | None = None
        self._deselected = 0
        self._ended = False
        self._pytest_start: datetime | None = None
        self._progress = Progress(0, 0, None)
        plan.staging.mkdir(parents=True, exist_ok=True)
        self._outputs: list[IO[bytes]] = [
            (plan.staging / name).open("wb") for name in OUTPUT_NAMES.values()
        ]
        try:
            self.child = Child(
                plan.argv,
                cwd=plan.cwd,
                env={**os.environ, **plan.env},
                stdout=self._outputs[0],
                stderr=self._outputs[1],
                name=plan.run_id,
            )
        except BaseException:
            self._close_outputs()
            raise

    @property
    def containment(self) -> Containment | None:
        """What holds every process of the run, beyond its process group (Linux)."""
        return self.child.containment

    @property
    def pid(self) -> int:
        """The pytest process (and its process group) id."""
        return self.child.pid

    def poll(self) -> int | None:
        """pytest's exit status, or ``None`` while it runs (the run's processes are noted, so
        that those a test detached are found at the end even without a cgroup)."""
        return self.child.poll()

    def overdue(self) -> bool:
        """Whether the run has had its time."""
        return time.monotonic() > self.deadline

    def extend(self, grace: float) -> None:
        """Give the run ``grace`` seconds more, once."""
        if not self.extended:
            self.extended = True
            self._give(grace)

    def settle(self) -> None:
        """Give the run ``STREAM_SETTLE`` seconds more, once: its stream's last batch may still
        wait in its memory."""
        if not self.settled:
            self.settled = True
            self._give(STREAM_SETTLE)

    def _give(self, seconds: float) -> None:
        """Move the deadline to ``seconds`` from now, unless it is later already."""
        self.deadline = max(self.deadline, time.monotonic() + seconds)

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.started

    def progress(self) -> Progress:
        """Tests finished so far (read from the result stream), and the number selected."""
        stream = self.plan.run_dir / store.STREAM_NAME
        done, failed = self._progress.done, self._progress.failed
        with contextlib.suppress(OSError), stream.open("rb") as handle:
            handle.seek(self._stream_offset)
            chunk = handle.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]  # a line being written waits
            self._stream_offset += len(complete)
            for line in complete.splitlines():
                if line.startswith(store.RESULT_PREFIX.encode()):
                    test, failing = _result(line)
                    done += test
                    failed += failing
                else:
                    self._other_record(line)
        if self._collected_count is None:
            self._collected_count = self._collected()
        total = None if self._collected_count is None else self._collected_count - self._deselected
        self._progress = Progress(done, failed, total, self._ended)
        return self._progress

    def _other_record(self, line: bytes) -> None:
        """Note a deselection or the end record of the stream."""
        if line.startswith(DESELECTED):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                self._deselected += int(json.loads(line)["count"])
        elif line.startswith(END):
            self._ended = True

    def _collected(self) -> int | None:
        with contextlib.suppress(OSError):
            head = (self.plan.staging / OUTPUT_NAMES["stdout"]).read_bytes()[:65536]
            match = COLLECTED.search(head)
            if match:
                return int(match.group(1) or match.group(2))
        return None

    def stop(self, reason: str, grace: float) -> None:
        """Interrupt the run (pytest then writes its reports), and after ``grace`` seconds kill
        its whole tree. Blocks until the tree is gone."""
        self.stopped_by = self.stopped_by or reason
        self.child.stop(grace)
        self.finish()

    def finish(self) -> int:
        """Kill what is left of the run (every process a test started), reap pytest, close the
        output files."""
        ending = self.child.finish()
        self._close_outputs()
        return ending.exit_status

    def meta(self, exit_code: int | None) -> RunMeta:
        """The run as this server ran it: the real argument list, the exit status (``None``
        while it runs); its start as pytest recorded it (the history index has the same), the
        server's clock only until pytest has written it."""
        return RunMeta(
            run_id=self.plan.run_id,
            started_at=self.pytest_started_at() or self.started_at,
            completed_at=None if exit_code is None else datetime.now(timezone.utc),
            exit_code=exit_code,
            cwd=str(self.plan.cwd),
            command=self.plan.argv,
            interrupted=self.stopped_by is not None,
        )

    def pytest_started_at(self) -> datetime | None:
        """When the session started, from the start record of pytest's result stream."""
        if self._pytest_start is None:
            self._pytest_start = _stream_start(self.plan.run_dir / store.STREAM_NAME)
        return self._pytest_start

    def move_outputs(self) -> Path:
        """Put the output files into the run directory (created if pytest never did)."""
        self.plan.run_dir.mkdir(parents=True, exist_ok=True)
        for name in OUTPUT_NAMES.values():
            staged = self.plan.staging / name
            if staged.exists():
                staged.replace(self.plan.run_dir / name)
        with contextlib.suppress(OSError):
            self.plan.staging.rmdir()
        return self.plan.run_dir

    def _close_outputs(self) -> None:
        for handle in self._outputs:
            handle.close()


def _stream_start(stream: Path) -> datetime | None:
    """``run.started_at`` of a stream's start record, when it is there and complete."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
        with stream.open("rb") as handle:
            first = handle.readline(1 << 20)
        if first.endswith(b"\n"):
            started = json.loads(first)["run"]["started_at"]
            return datetime.fromisoformat(started.replace("Z", "+00:00"))
    return None


def _result(line: bytes) -> tuple[int, int]:
    """Whether a result line is a test's (a module skipped at collection is a result, but
    neither collected nor a test: its node id has no ``::``), and whether it failed."""
    try:
        result = json.loads(line)["result"]
        nodeid, outcome = result["nodeid"], result["outcome"]
    except (ValueError, KeyError, TypeError):
        return 0, 0
    if "::" not in nodeid:
        return 0, 0
    return 1, 1 if outcome in ("failed", "error") else 0
