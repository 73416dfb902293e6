"""``--qbench-shard=I/N`` and ``--qbench-queue=NAME``: CI shards planned from the history, or
pulled from a queue in the history database.

Standard library and pytest only (imported whenever pytest starts). The values are read and
checked in ``pytest_configure`` (``read_shard_settings``), each problem a ``pytest.UsageError``
naming the option, the value and the fix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import pytest

from pytest_qbench.core.records import dataclass
from pytest_qbench.plugin.options.values import OptionReader


SHARD = r"^\s*(\d+)\s*/\s*(\d+)\s*$"
QUEUE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"
CI_MATRIX = (
    ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),  # GitLab CI (parallel:), also Travis-style runners
    ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),  # CircleCI (parallelism:)
    ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),  # Buildkite (parallelism:)
    ("SEMAPHORE_JOB_INDEX", "SEMAPHORE_JOB_COUNT", 1),  # Semaphore (parallelism:)
)
"""Environment variables of CI providers' parallel jobs: index, total, and the first index.
``--qbench-shard=auto`` reads the first pair set (GitHub Actions has none: pass
``${{ matrix.shard }}/N``)."""
QUEUE_WORKER_VAR = "QBENCH_QUEUE_WORKER"
"""Names this machine in a queue; else the CI job's index (``CI_MATRIX``), else host and pid."""


# no __eq__/__hash__/__repr__: a dataclass compiles each method at import, in every pytest run
@dataclass(frozen=True, eq=False, repr=False)
class ShardSettings:
    """What was asked: a planned shard, a queue, or neither."""

    index: int = 0
    """This shard, from 1 (0: not a planned shard)."""
    count: int = 0
    """How many shards."""
    queue: str | None = None
    """The queue's name."""
    worker: str = ""
    """This machine's identity in the queue."""
    machines: int = 0
    """The CI job's number of machines, when its environment says (sizes the queue's units)."""

    @property
    def active(self) -> bool:
        """Whether the run is a shard or pulls from a queue."""
        return bool(self.count or self.queue)


def add_shard_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    """Declare ``--qbench-shard`` and ``--qbench-queue`` with their ini twins."""
    for name, metavar, text in (
        (
            "shard",
            "I/N",
            "Run shard I of N, planned from the history so that the shards take about the same "
            "time (modules kept whole, fixtures counted once); 'auto' reads the CI's parallel "
            "job index and total (GitLab, CircleCI, Buildkite, Semaphore)",
        ),
        (
            "queue",
            "NAME",
            "Pull the tests from the queue NAME in the history database (e.g. the CI "
            "pipeline's id): every machine runs the same command and takes the next module, "
            "longest first, until none is left",
        ),
    ):
        flag = f"--qbench-{name}"
        group.addoption(flag, dest=f"qbench_{name}", metavar=metavar, default=None, help=text)
        parser.addini(f"qbench_{name}", f"{text} ({flag})", default="")


def shards_asked(reader: OptionReader) -> bool:
    """Whether a shard or a queue was asked for (command line or ini)."""
    return any(reader.cli(name) or reader.ini(name) for name in ("shard", "queue"))


def read_shard_settings(
    reader: OptionReader, environ: Mapping[str, str] = os.environ
) -> ShardSettings:
    """The shard or queue asked for, checked.

    Raises:
        pytest.UsageError: a malformed value, both at once, or a queue under pytest-xdist.
    """
    shard, shard_source = _given(reader, "shard")
    queue, queue_source = _given(reader, "queue")
    if shard and queue:
        raise pytest.UsageError(
            f"{shard_source} and {queue_source} exclude each other, given: {shard!r} and "
            f"{queue!r}; plan shards (--qbench-shard) or pull from a queue (--qbench-queue)"
        )
    if queue:
        return _queue(queue, queue_source, reader, environ)
    if not shard:
        return ShardSettings()
    _refuse_xdist(reader, shard_source, "deselects on the controller, which xdist's workers do not")
    if shard.strip().lower() == "auto":
        found = ci_matrix(environ)
        if found is None:
            names = ", ".join(f"{index}/{total}" for index, total, _base in CI_MATRIX)
            raise pytest.UsageError(
                f"{shard_source}=auto found no CI parallel job variables ({names}); pass the "
                "shard yourself, e.g. --qbench-shard=${{ matrix.shard }}/4 on GitHub Actions"
            )
        return ShardSettings(index=found[0], count=found[1])
    match = re.match(SHARD, shard)
    index, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if not match or not 1 <= index <= count:
        raise pytest.UsageError(
            f"{shard_source} must be I/N with 1 <= I <= N (this shard, of how many), given: "
            f"{shard!r}; e.g. {shard_source.split()[-1]}=1/4, or 'auto' on a CI with parallel "
            "job variables"
        )
    return ShardSettings(index=index, count=count)


def _given(reader: OptionReader, name: str) -> tuple[str, str]:
    value = reader.cli(name)
    if value is not None and not str(value).strip():  # read as none: every test on each machine
        raise pytest.UsageError(
            f"--qbench-{name} is empty, given: {value!r} (an empty variable?); give "
            f"{'I/N' if name == 'shard' else 'a queue name'}, or leave --qbench-{name} out"
        )
    if value is not None:
        return str(value), f"--qbench-{name}"
    return str(reader.ini(name) or ""), f"ini qbench_{name}"


def _queue(
    name: str, source: str, reader: OptionReader, environ: Mapping[str, str]
) -> ShardSettings:
    if not re.match(QUEUE_NAME, name):
        raise pytest.UsageError(
            f"{source} must be 1-128 letters, digits or . _ : / -, starting with a letter or "
            f"digit, given: {name!r} (an empty variable?); e.g. --qbench-queue=$CI_PIPELINE_ID"
        )
    _refuse_xdist(reader, source, "pulls tests one module at a time in this process")
    matrix = ci_matrix(environ)
    worker = environ.get(QUEUE_WORKER_VAR) or (
        f"job-{matrix[0]}" if matrix else f"{os.uname().nodename}-{os.getpid()}"
    )
    return ShardSettings(queue=name, worker=worker, machines=matrix[1] if matrix else 0)


def _refuse_xdist(reader: OptionReader, source: str, why: str) -> None:
    workers = getattr(reader.config.option, "numprocesses", None)
    if workers:
        raise pytest.UsageError(
            f"{source} {why}, so it cannot run under pytest-xdist, given: -n {workers}; use "
            "-n 0 (or more CI machines) with it"
        )


def ci_matrix(environ: Mapping[str, str]) -> tuple[int, int] | None:
    """This CI job's shard and the number of shards (from 1), from the first provider's
    variables that are set and make sense."""
    for index_var, total_var, base in CI_MATRIX:
        index, total = environ.get(index_var, ""), environ.get(total_var, "")
        if index.isdigit() and total.isdigit():
            shard = int(index) + 1 - base
            if 1 <= shard <= int(total):
                return shard, int(total)
    return None
