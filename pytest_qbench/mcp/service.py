"""The run lifecycle, without the SDK: starting, watching, stopping and finishing the child
processes the tools start (a pytest run, a collection for the catalog, a generation), and the
one-run slot a check run holds too. Each tool's own logic lives in its module.

A child is a ``PytestProcess``: a tool builds its ``RunPlan`` and calls ``start``; the caller
then calls ``step`` until it returns False (the SDK layer from its event loop, ``supervise``
here with ``time.sleep``), reporting ``progress`` as it goes; the tool finishes it
(``wrap_up``, ``release``). On cancellation the caller calls ``abandon``, which kills the
process group. One run at a time: a second ``start`` while one goes on is refused.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pytest_qbench.core.errors import ToolFailure
from pytest_qbench.mcp import runs
from pytest_qbench.mcp.command import RunPlan
from pytest_qbench.mcp.command import is_generation
from pytest_qbench.mcp.config import ServerConfig
from pytest_qbench.mcp.process import POLL_SECONDS
from pytest_qbench.mcp.process import Progress
from pytest_qbench.mcp.process import PytestProcess


class RunService:
    """The run lifecycle of one project's server: one run (a test run, a collection, a
    generation, a check run) at a time, started, watched, stopped and finished."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self.active: PytestProcess | None = None
        self.active_check: str | None = None
        """The id of the check run going on (issue 13.7)."""

    def start(self, plan: RunPlan) -> PytestProcess:
        """Start the child ``plan`` describes, holding the one-run slot until ``release``.

        Raises:
            ToolFailure: a run already going on, or the child cannot be started.
        """
        if not self._lock.acquire(blocking=False):
            raise self._busy()
        try:
            self.config.qbench_dir.mkdir(parents=True, exist_ok=True)
            process = PytestProcess(plan)
        except OSError as exc:
            self._lock.release()
            raise ToolFailure(
                f"cannot start pytest ({' '.join(plan.argv[:3])}): {exc}; check the run store "
                f"{self.config.qbench_dir} and the interpreter"
            ) from None
        except BaseException:
            self._lock.release()
            raise
        self.active = process
        return process

    def _busy(self) -> ToolFailure:
        """The refusal of a second run (a test run or a check run) while one goes on."""
        active = self.active
        if active is not None and is_generation(active.plan.run_id):
            return ToolFailure(
                f"a generation is running (run id {active.plan.run_id}, "
                f"{active.elapsed():.0f}s so far); one at a time: wait for it, or cancel it"
            )
        if active is not None:
            what = f" ({active.plan.run_id}, {active.elapsed():.0f}s so far)"
        else:
            what = f" (check run {self.active_check})" if self.active_check else ""
        return ToolFailure(
            f"a run is going on{what}; one runs at a time: wait for it, or cancel it"
        )

    @contextmanager
    def check_run(self) -> Iterator[Callable[[Path], None]]:
        """Hold the one-run slot for a check run (issue 13.7); the check run is named (in
        ``active_check``) once the callback given gets its directory.

        Raises:
            ToolFailure: a run already going on.
        """
        if not self._lock.acquire(blocking=False):
            raise self._busy()
        self.active_check = "starting"
        try:
            yield lambda directory: setattr(self, "active_check", directory.name)
        finally:
            self.active_check = None
            self._lock.release()

    def wait_for_checks(self, seconds: float = 30.0) -> None:
        """Wait (at most ``seconds``) until no check run goes on: a cancelled
        ``run_build_workflow`` returns once its checkers are gone."""
        deadline = time.monotonic() + seconds
        while self.active_check is not None and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS / 5)

    def step(self, process: PytestProcess) -> bool:
        """One look at a run: False once it has ended (stopped when overdue). A run overdue
        after every test had its result is in its session end: it gets ``finish_grace`` more
        seconds once, and when stopped after all is noted complete."""
        if process.poll() is not None:
            return False
        if not process.overdue():
            return True
        tests = self._runs_tests(process)
        complete = tests and process.progress().complete
        if tests and not complete and not process.settled:
            # the run's stream is written in batches: its last results reach the file within
            # store.BATCH_SECONDS; look again once they can have, before judging the run
            process.settle()
            return True
        if complete and not process.extended:
            process.extend(self.config.finish_grace)
            return True
        process.complete_when_stopped = complete
        process.stop("timeout", self.config.stop_grace)
        return False

    @staticmethod
    def _runs_tests(process: PytestProcess) -> bool:
        """Whether ``process`` is a test run (whose result stream says when all tests ended),
        not a collection or a generation."""
        return not process.plan.collection and not is_generation(process.plan.run_id)

    def supervise(
        self,
        process: PytestProcess,
        on_progress: Callable[[Progress], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Wait for a run to end, reporting progress (the blocking twin of the SDK loop)."""
        while True:
            running = self.step(process)
            if on_progress is not None:  # once more after the end: the last tests count too
                on_progress(process.progress())
            if not running:
                return
            sleep(POLL_SECONDS)

    def abandon(self, process: PytestProcess) -> None:
        """The client cancelled: kill the run's process group and keep what it wrote (a
        collection keeps nothing)."""
        try:
            process.stop("cancelled", self.config.stop_grace)
            if process.plan.collection:
                remove_staging(process.plan.staging)
            else:
                self.wrap_up(process)
        finally:
            self.release(process)

    def wrap_up(self, process: PytestProcess) -> tuple[int, Path]:
        """Sweep the process group, move the output into the run directory, record the run,
        repair the reports of a killed run."""
        code = process.finish()
        run_dir = process.move_outputs()
        runs.write_meta(run_dir, process.meta(code))
        if process.stopped_by is not None and not is_generation(process.plan.run_id):
            with contextlib.suppress(Exception):  # the run's own files stay the record
                runs.repair(self.config, run_dir)
        return code, run_dir

    def release(self, process: PytestProcess) -> None:
        """Give the one-run slot back (once ``process`` has ended)."""
        if self.active is process:
            self.active = None
            self._lock.release()


def remove_staging(staging: Path) -> None:
    """Remove a staging directory and what is left in it."""
    shutil.rmtree(staging, ignore_errors=True)
