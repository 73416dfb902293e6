"""The one process supervisor (``core/supervise.py``) on real processes: a timeout kills the
child's grandchildren, those in its process group and a daemon that double-forked into a
session of its own; a normal end kills what the child left behind; the ending says how it
ended. Each way a tree is held is tried: a cgroup where one can be made here, else the process
tree and the cookie."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pytest_qbench.core import supervise


pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux /proc and cgroups")

DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
"""
"""Double fork and ``setsid``: the grandchild sleeps, reparented to init."""


def marked(marker: str) -> list[int]:
    """The live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in command and state != "Z":
            found.append(int(entry.name))
    return found


def gone(marker: str) -> bool:
    """Whether no process with ``marker`` lives, waiting 60 s at most (init reaps the dead; the
    wait ends as soon as none lives)."""
    deadline = time.monotonic() + 60
    while marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not marked(marker)


@pytest.fixture(params=["cgroup", "process tree"])
def held_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from pytest_qbench.core import cgroup

    if request.param == "cgroup" and cgroup.cgroup_base() is None:
        pytest.skip("no writable cgroup v2 here")
    if request.param == "process tree":
        monkeypatch.setattr(cgroup, "cgroup_base", lambda: None)
    return str(request.param)


def parent(marker: str, then: str) -> list[str]:
    """A child that starts a sleeper in its group and a daemon (both named by ``marker``),
    says so, then runs ``then``."""
    code = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}])\n"
        f"subprocess.run([sys.executable, '-c', {DAEMON!r}, {marker!r}], check=True)\n"
        "print('started', flush=True)\n"
        f"{then}\n"
    )
    return [sys.executable, "-c", code]


def test_a_timeout_kills_every_grandchild(tmp_path: Path, held_by: str) -> None:
    """The child hangs: at its timeout it, its sleeper and its daemon are killed, and the
    ending says it timed out, with its leftovers. Its timeout (600 s) is moved to now once the
    child said its grandchildren started (a loaded machine may take any time for that), then
    waited for as ``run`` waits."""
    marker = f"qbench-sup-{uuid.uuid4().hex}"
    argv = parent(marker, "import time; time.sleep(600)")
    with (tmp_path / "out.txt").open("wb") as out:
        child = supervise.start(argv, cwd=tmp_path, stdout=out, timeout=600)
        deadline = time.monotonic() + 120  # a safety net: it ends at "started"
        while b"started" not in (tmp_path / "out.txt").read_bytes():
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        assert child.deadline is not None and child.deadline > time.monotonic() + 300
        child.deadline = time.monotonic()
        assert child.wait() is False  # it sleeps until its timeout
        ending = child.stop()
    assert (ending.timed_out, ending.stopped, ending.returncode) == (True, True, None)
    assert ending.exit_status < 0 and ending.held_by == held_by
    assert ending.leftovers >= 1  # as below: a race for 2
    assert gone(marker)


def test_a_normal_end_kills_what_the_child_left(tmp_path: Path, held_by: str) -> None:
    """The child exits 3 after starting a sleeper and a daemon: the ending has its status, not
    timed out, and both are killed."""
    marker = f"qbench-sup-{uuid.uuid4().hex}"
    ending = supervise.run(parent(marker, "raise SystemExit(3)"), cwd=tmp_path, timeout=120)
    assert (ending.returncode, ending.exit_status, ending.timed_out) == (3, 3, False)
    # The daemon (out of the group) is always counted; the sleeper only when it outlives the
    # group's kill, which is a race: what must hold is that neither survives.
    assert ending.leftovers >= 1 and ending.output == "started\n"
    assert gone(marker)


def test_a_clean_child_leaves_nothing(tmp_path: Path) -> None:
    """A child that starts nothing: no leftovers, its output and stdin as given."""
    code = "import sys; sys.stdout.write(sys.stdin.read().upper())"
    ending = supervise.run([sys.executable, "-c", code], cwd=tmp_path, timeout=120, stdin=b"hello")
    assert (ending.returncode, ending.leftovers, ending.output) == (0, 0, "HELLO")


def test_the_non_blocking_child_stops_on_request(tmp_path: Path) -> None:
    """start, wait with a deadline, stop: output to a file, the interrupt seen by the child
    within the grace, its daemon killed."""
    marker = f"qbench-sup-{uuid.uuid4().hex}"
    then = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGINT, lambda *a: sys.exit(7))\n"
        "time.sleep(300)"
    )
    with (tmp_path / "out.txt").open("wb") as out:
        child = supervise.start(
            parent(marker, then), cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT
        )
        assert child.wait(0.2) is False  # it sleeps until stopped
        deadline = time.monotonic() + 60
        while b"started" not in (tmp_path / "out.txt").read_bytes():
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        ending = child.stop(grace=30)
    assert (ending.exit_status, ending.stopped, ending.timed_out) == (7, True, False)
    assert child.finish() is ending
    assert gone(marker)


def test_a_supervisor_inside_a_supervised_child_leaves_no_cgroup(tmp_path: Path) -> None:
    """A supervised child that supervises its own child (``qbench generate`` under the MCP
    server) and is killed at its timeout: the inner child dies with it, and both cgroups are
    removed, the inner one left behind by the killed supervisor included."""
    from pytest_qbench.core import cgroup

    base = cgroup.cgroup_base()
    if sys.platform != "linux" or base is None:
        pytest.skip("no writable cgroup v2 here")
    marker = f"qbench-sup-{uuid.uuid4().hex}"
    # The child is in the outer cgroup before its program begins, so the inner supervisor makes
    # its cgroup inside it, however late the outer supervisor gets past the start.
    inner = (
        "import sys, time\n"
        "from pytest_qbench.core import supervise\n"
        "child = supervise.start(\n"
        f"    [sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}], cwd='.'\n"
        ")\n"
        "print(child.held_by, flush=True)\n"
        "time.sleep(300)\n"
    )
    with (tmp_path / "out.txt").open("wb") as out:
        child = supervise.start([sys.executable, "-c", inner], cwd=tmp_path, stdout=out)
        assert child.held_by == "cgroup"
        jail = child.containment
        assert isinstance(jail, cgroup.CgroupJail)
        deadline = time.monotonic() + 60
        while b"cgroup" not in (tmp_path / "out.txt").read_bytes():
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        assert [p for p in jail.path.iterdir() if p.is_dir()]  # the inner cgroup
        ending = child.stop()
    assert ending.leftovers >= 1
    assert gone(marker)
    assert not jail.path.exists()


RACER = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    argv = [sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1] + '-grandchild']
    os.execve(sys.executable, argv, {})
if sys.argv[2] == 'sleeps':
    time.sleep(600)
"""
"""A child whose first act is to fork a grandchild that leaves its session and drops its
environment (so neither the process group nor the cookie holds it), then sleeps forever or
exits at once."""


def popen_returns_late(monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    """``Popen`` returns only once the grandchild named by ``marker`` lives: the supervisor
    held past the child's start, as a busy machine may hold it for any time."""

    class LatePopen(subprocess.Popen[bytes]):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[call-overload]
            deadline = time.monotonic() + 120  # a safety net: it ends when the grandchild lives
            while not marked(f"{marker}-grandchild") and time.monotonic() < deadline:
                time.sleep(0.01)

    monkeypatch.setattr(subprocess, "Popen", LatePopen)


def kill_marked(marker: str) -> None:
    """Kill what a failed test left."""
    for pid in marked(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_a_grandchild_forked_at_once_dies_at_the_timeout(
    tmp_path: Path, held_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grandchild forked before the supervisor gets past the child's start: at the timeout
    the child and the grandchild are both killed. Before the child moved itself into its
    cgroup before its program began, the supervisor moved it after ``Popen``: the grandchild
    was born outside the cgroup and outlived the run. The timeout is short (0.05 s): the
    grandchild lives before ``Popen`` returns and the child sleeps on, so nothing is left to
    happen before it, however loaded the machine."""
    marker = f"qbench-sup-{uuid.uuid4().hex}"
    popen_returns_late(monkeypatch, marker)
    try:
        argv = [sys.executable, "-c", RACER, marker, "sleeps"]
        ending = supervise.run(argv, cwd=tmp_path, timeout=0.05, capture=False)
        assert ending.timed_out and ending.held_by == held_by
        assert gone(marker)
    finally:
        kill_marked(marker)  # nothing, unless the test failed


def test_a_grandchild_of_a_child_that_exits_at_once_dies_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child forks the grandchild and exits at once, gone before the supervisor looks: the
    cgroup still holds the grandchild, killed at the child's end. (Without a cgroup such a
    grandchild escapes: the process tree's documented limit.)"""
    from pytest_qbench.core import cgroup

    if cgroup.cgroup_base() is None:
        pytest.skip("no writable cgroup v2 here")
    marker = f"qbench-sup-{uuid.uuid4().hex}"
    popen_returns_late(monkeypatch, marker)
    try:
        ending = supervise.run(
            [sys.executable, "-c", RACER, marker, "exits"], cwd=tmp_path, timeout=600
        )
        assert (ending.returncode, ending.held_by, ending.leftovers) == (0, "cgroup", 1)
        assert gone(marker)
    finally:
        kill_marked(marker)


def test_a_cgroup_the_child_could_not_join_falls_back_to_its_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child whose move into its cgroup failed (the write refused) is started again, held by
    its process tree, and the empty cgroup is removed."""
    from pytest_qbench.core import cgroup

    base = cgroup.cgroup_base()
    if base is None:
        pytest.skip("no writable cgroup v2 here")

    def refused(self: cgroup.CgroupJail) -> None:
        raise PermissionError("refused")

    monkeypatch.setattr(cgroup.CgroupJail, "join", refused)
    before = set(base.glob(f"qbench-{os.getpid()}-*"))
    ending = supervise.run([sys.executable, "-c", "print('ran')"], cwd=tmp_path, timeout=120)
    assert (ending.returncode, ending.held_by, ending.output) == (0, "process tree", "ran\n")
    assert set(base.glob(f"qbench-{os.getpid()}-*")) == before
