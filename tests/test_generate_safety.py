"""``qbench generate`` cannot touch the project (issue 20): the target's code runs only in a
disposable copy, functions that delete, kill or shell out are never run with generated inputs,
every child's output is bounded, a dying probe hides no function, and no process of the target
outlives the generation. Real generations (``qbench generate`` in the test's process, the target's
code in its real children), on throwaway projects."""

from __future__ import annotations

import ast
import hashlib
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_here import Done
from cli_here import qbench_here
from generation_setup import quick_env

from pytest_qbench.core.supervise import OUTPUT_CAP
from pytest_qbench.core.supervise import run
from pytest_qbench.generate.candidate import Candidate
from pytest_qbench.generate.functions import Function
from pytest_qbench.generate.functions import describe
from pytest_qbench.generate.hazards import hazard
from pytest_qbench.generate.models import GenerateResult
from pytest_qbench.generate.process import child_env
from pytest_qbench.generate.sandbox import Sandbox
from pytest_qbench.generate.target import resolve_target
from pytest_qbench.generate.verify import Verdict
from pytest_qbench.generate.verify import verify
from pytest_qbench.generate.verify import verify_batch


pytestmark = pytest.mark.generation
TIMEOUT = 15
"""--test-timeout of the runs (a safety net: no verdict here depends on it)."""


def qbench(cwd: Path, *args: str) -> Done:
    """``qbench ARGS`` in ``cwd``, in this process (``qbench_here``; what the generation's
    children do to the project and the machine is the subject, and they are real processes)."""
    return qbench_here(*args, cwd=cwd, env=quick_env())


def generate(root: Path, target: str, *args: str) -> GenerateResult:
    """``qbench generate TARGET --json`` in ``root``: its validated result."""
    done = qbench(
        root, "generate", target, "--json", "--test-timeout", str(TIMEOUT), "--max-examples", "10"
    )
    assert done.out, done.err
    return GenerateResult.model_validate_json(done.out)


def snapshot(root: Path, skip: str = "tests/generated") -> dict[str, str]:
    """Every file under ``root`` but ``skip``: its relative path and a hash of its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(skip):
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


DESTRUCTIVE = """
import os
import shutil


HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "data")


def clear(sub: str) -> None:
    shutil.rmtree(os.path.join(BASE, sub))


def wipe(sub: str = "../canary") -> None:
    shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)


def save(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def reset(level: int) -> int:
    # hidden from the AST: only the copy protects the project from this one
    getattr(shutil, "rm" + "tree")(BASE, ignore_errors=True)
    getattr(shutil, "rm" + "tree")(HERE, ignore_errors=True)
    return level + 1


def keep(x: int) -> int:
    if x > 3:
        return x - 3
    return x
"""


def test_a_destructive_module_leaves_the_project_untouched(tmp_path: Path) -> None:
    """20.1: the target's code (probe, candidates, verification, coverage) runs in a copy of the
    project: data/, the sources and a canary beside the project are untouched byte for byte; the
    functions that delete or write to a path from an argument are listed in needs_llm_review
    with why, never run with generated inputs; the harmless one still gets its test."""
    root = tmp_path / "proj"
    (root / "data" / "sub").mkdir(parents=True)
    (root / "data" / "sub" / "keep.txt").write_text("precious\n", encoding="utf-8")
    (root / "data" / "top.txt").write_text("also precious\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "destroy.py").write_text(DESTRUCTIVE, encoding="utf-8")
    (tmp_path / "canary").mkdir()
    (tmp_path / "canary" / "alive.txt").write_text("tweet\n", encoding="utf-8")
    before = snapshot(root)
    result = generate(root, "destroy.py")
    assert snapshot(root) == before, result.problems
    assert (tmp_path / "canary" / "alive.txt").read_text(encoding="utf-8") == "tweet\n"
    review = {item.function: item.reason for item in result.needs_llm_review}
    for name, call in (("clear", "shutil.rmtree"), ("wipe", "shutil.rmtree"), ("save", "open")):
        assert name in review, result.needs_llm_review
        assert "not run with generated inputs" in review[name] and call in review[name]
    kept = "\n".join((root / f).read_text(encoding="utf-8") for f in result.auto_generated.files)
    assert "keep(" in kept
    for name in ("clear", "wipe", "save"):
        assert f"{name}(" not in kept


def test_a_child_flooding_its_output_keeps_only_its_head_and_tail(tmp_path: Path) -> None:
    """20.2: a child writing without end is read through a bounded sink: what is kept is its
    first and last bytes with a note of what was cut, never the whole flood, on disk or in
    memory."""
    flood = (
        "import sys\n"
        "sys.stdout.write('FIRST\\n')\n"
        "for _ in range(800):\n"
        "    sys.stdout.write('x' * 65535 + '\\n')\n"
        "sys.stdout.write('LAST\\n')\n"
    )
    finished = run(
        [sys.executable, "-c", flood], cwd=tmp_path, env=child_env(tmp_path), timeout=300
    )
    assert finished.returncode == 0
    assert len(finished.output) <= OUTPUT_CAP + 200
    assert finished.output.startswith("FIRST\n") and finished.output.endswith("LAST\n")
    assert "bytes of output cut" in finished.output
    assert list(tmp_path.iterdir()) == []


def test_a_resource_error_is_no_finding(tmp_path: Path) -> None:
    """20.2: a property test that fails on "no space left on device" (or a MemoryError) is a
    resource error of the run, dropped with that reason, never a finding (a strict xfail that
    would rerun it in every later suite run); any other error stays a finding."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "loud.py").write_text(
        "import errno\n\n\n"
        "def fill(n: int) -> int:\n"
        "    if n > 2:\n"
        "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "    return n\n\n\n"
        "def halve(n: int) -> int:\n"
        "    if n > 2:\n"
        "        raise ValueError('too big')\n"
        "    return n\n",
        encoding="utf-8",
    )
    target = resolve_target("loud.py", root)
    verdicts = {}
    for name in ("fill", "halve"):
        body = (
            "@settings(max_examples=50, deadline=None, derandomize=True)\n"
            "@given(n=st.integers())\n"
            f"def test_fuzz_{name}(n):\n"
            f"    loud.{name}(n=n)\n"
        )
        imports = ["import loud", "from hypothesis import given, settings, strategies as st"]
        candidate = Candidate(name, "hypothesis", "loud", [name], imports, body)
        verdicts[name] = verify(candidate, target, tmp_path / "scratch", 600)
    assert verdicts["halve"].outcome == "finding", verdicts["halve"]
    assert verdicts["fill"].outcome == "failed", verdicts["fill"]
    assert verdicts["fill"].detail.startswith("resource error, not a finding: OSError")


def marked_processes(marker: str) -> list[int]:
    """The processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in command:
                found.append(int(entry.name))
    return found


DOUBLE_FORK = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(300)\n"
    "    os._exit(0)\n"
)
"""A daemon: forks, the child leaves the session (``setsid``) and forks again; the grandchild
sleeps, reparented to init, in no process group or tree of its starter."""


def cgroup_here() -> bool:
    from pytest_qbench.core.cgroup import cgroup_base

    return sys.platform == "linux" and cgroup_base() is not None


SLEEPER = """

def start(n: int) -> int:
    if n > 0:
        sleep = 'import time; time.sleep(300)'
        subprocess.Popen(['setsid', sys.executable, '-c', sleep, {marker!r}])
    return n
"""
"""A function that starts a sleeper in a session of its own (``setsid``)."""
DAEMON = """

def serve(n: int) -> int:
    if n > 0:
        argv = [sys.executable, '-c', CODE, {marker!r}]
        subprocess.run(argv, env={{'PATH': '/usr/bin:/bin'}}, check=True)
    return n
"""
"""A function that starts a daemon (double fork, ``setsid``) with an environment of its own, so
that no variable qbench set reaches it."""


class Outlived:
    """One generation of spawn.py (``start``, and ``serve`` where a cgroup can hold its daemon:
    without one, a daemon that drops its environment and double-forks can escape, the
    supervisor's documented limit): its result, its kept tests, and the processes of each
    function still alive once ``qbench generate`` had returned."""

    def __init__(self, root: Path) -> None:
        self.markers = {"start": f"qbench-orphan-{uuid.uuid4().hex}"}
        source = "import subprocess\nimport sys\n\n" + f"CODE = {DOUBLE_FORK!r}\n"
        source += SLEEPER.format(marker=self.markers["start"])
        if cgroup_here():
            self.markers["serve"] = f"qbench-daemon-{uuid.uuid4().hex}"
            source += DAEMON.format(marker=self.markers["serve"])
        (root / "spawn.py").write_text(source, encoding="utf-8")
        self.result = generate(root, "spawn.py")
        files = self.result.auto_generated.files
        self.kept = "\n".join((root / f).read_text(encoding="utf-8") for f in files)
        self.left = {name: marked_processes(m) for name, m in self.markers.items()}

    def kill_left(self) -> None:
        for marker in self.markers.values():
            for pid in marked_processes(marker):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def outlived(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outlived]:
    """The generation of spawn.py, shared by the two tests of what outlives it."""
    if not Path("/proc/self").is_dir():
        pytest.skip("reads /proc")
    root = tmp_path_factory.mktemp("outlived") / "proj"
    root.mkdir()
    made = Outlived(root)
    try:
        yield made
    finally:
        made.kill_left()


OUTLIVED = pytest.mark.xdist_group("test_generate_safety.outlived")


@OUTLIVED
def test_no_process_of_the_target_outlives_the_generation(outlived: Outlived) -> None:
    """20.4: a function that starts a sleeper in a session of its own (``setsid``) leaves no
    process behind once ``qbench generate`` has returned, on a normal end (its tests were kept:
    it was called)."""
    assert "spawn.start(" in outlived.kept, outlived.result.problems
    assert outlived.left["start"] == []


@OUTLIVED
@pytest.mark.skipif(
    not cgroup_here(),
    reason="no writable cgroup v2 here: without one, a daemon that drops its environment "
    "and double-forks can escape (the supervisor's documented limit)",
)
def test_a_daemon_with_a_fresh_environment_dies_with_the_generation(outlived: Outlived) -> None:
    """A function that starts a daemon (double fork, ``setsid``) with an environment of its own
    (so no variable qbench set reaches it) leaves no process behind once ``qbench generate`` has
    returned: every child of the generation runs in a cgroup of its own."""
    assert "spawn.serve(" in outlived.kept, outlived.result.problems
    assert outlived.left["serve"] == []


FATAL = (
    "import os\n\n\n"
    "def chatty(x: int) -> int:\n    print('chatter of chatty')\n    return x\n\n\n"
    "def wipe(x: int) -> int:\n    getattr(os, 'un' + 'link')(__file__)\n    return x\n\n\n"
    "def die(code: int) -> None:\n    os._exit(code)\n\n\n"
    "def after(x: int) -> int:\n    return x + 1\n"
)
"""fatal.py: ``die`` ends the probe child (``os._exit``); before it are probed one function
that prints and one that deletes its module's copy (through ``getattr``, which the hazards do
not read), after it one that does neither."""


@pytest.fixture(scope="module")
def fatal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GenerateResult, str]:
    """One generation of fatal.py, shared by the two tests of what ``die`` leaves: its project,
    result and kept tests."""
    root = tmp_path_factory.mktemp("fatal") / "proj"
    root.mkdir()
    (root / "fatal.py").write_text(FATAL, encoding="utf-8")
    result = generate(root, "fatal.py")
    kept = "\n".join((root / f).read_text(encoding="utf-8") for f in result.auto_generated.files)
    return root, result, kept


FATAL_GROUP = pytest.mark.xdist_group("test_generate_safety.fatal")


@FATAL_GROUP
def test_a_function_killing_the_probe_hides_no_other_function(
    fatal: tuple[Path, GenerateResult, str],
) -> None:
    """20.3: ``die`` ends the shared probe child (``os._exit``); the functions after it are
    still probed (each in a child of its own, in the project's copy made again: ``wipe``
    deleted its module there, which left ``die`` and ``after`` "not probed") and get their
    tests; the project's own module is untouched."""
    root, result, kept = fatal
    assert "fatal.after(" in kept, (result.problems, result.dropped)
    assert not [d for d in result.dropped if "not probed" in d.reason], result.dropped
    assert not [p for p in result.problems if "would not import" in p], result.problems
    assert (root / "fatal.py").read_text(encoding="utf-8") == FATAL


@FATAL_GROUP
def test_the_line_of_the_function_killing_the_probe_quotes_its_own_child(
    fatal: tuple[Path, GenerateResult, str],
) -> None:
    """20.3: the line about ``die`` quotes its own child's output, not what another function
    (``chatty``, probed before it in the shared child) printed."""
    _, result, _ = fatal
    (line,) = [p for p in result.problems if p.startswith("fatal.die: ended the child")]
    assert "chatter" not in line, line
    assert not [p for p in result.problems if "chatter" in p], result.problems


@pytest.mark.parametrize(
    ("body", "call"),
    [
        ("os.system(cmd)", "os.system"),
        ("subprocess.run(cmd, shell=True)", "subprocess.run(shell=True)"),
        ("run(cmd, shell=flag)", "run(shell=True)"),
        ("os.kill(pid, 9)", "os.kill"),
        ("os.remove(DATA)", "os.remove"),
        ("Path(cmd).unlink()", "Path(...).unlink"),
        ("p = os.path.join(BASE, cmd)\n    open(p, 'a').write('x')", "open"),
        ("Path(cmd).write_text('x')", "Path(...).write_text"),
        ("shutil.copy(SRC, cmd)", "shutil.copy"),
        ("helper(cmd)", "os.remove through helper"),
    ],
)
def test_a_dangerous_call_is_named(body: str, call: str) -> None:
    """20.1: what makes a function unsafe to run with generated inputs, read from its AST (a
    helper of the same module it calls included)."""
    source = f"def helper(x):\n    os.remove(x)\n\n\ndef f(cmd, pid):\n    {body}\n"
    functions = {f.name: f for f in functions_of(source)}
    why = hazard(functions["f"], list(functions.values()))
    assert why is not None and f"it calls {call} (" in why


@pytest.mark.parametrize(
    "body",
    [
        "return cmd.replace('a', pid)",
        "items = [cmd]\n    items.remove(cmd)",
        "open(cmd).read()",
        "open(CONFIG, 'w').write(cmd)",
        "subprocess.run([cmd], shell=False)",
        "return os.path.join(BASE, cmd)",
    ],
)
def test_a_harmless_call_is_not_flagged(body: str) -> None:
    """20.1: replacing in a string, removing from a list, reading a file, writing to a fixed
    path and running a command without a shell keep a function generated."""
    source = f"def f(cmd, pid):\n    {body}\n"
    (function,) = functions_of(source)
    assert hazard(function, [function]) is None


def functions_of(source: str) -> list[Function]:
    """The functions of ``source``, read as qbench generate reads a module."""
    path = Path("module_under_test.py")
    tree = ast.parse(source)
    lines = source.splitlines()
    return [
        describe(node, None, None, path, lines)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    ]


def test_the_copy_holds_no_way_out_and_reads_no_special_file(tmp_path: Path) -> None:
    """20.1: the project's copy has no symbolic link out of it (a link to an outside file is a
    copy of the file, one to an outside directory or a loop is left out), no FIFO (never read),
    nothing of .git or .venv; it is made again when a child deleted a file of it."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref\n", encoding="utf-8")
    (root / "mod.py").write_text("def f(x: int) -> int:\n    return x\n", encoding="utf-8")
    (root / "inner.txt").write_text("inner\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n", encoding="utf-8")
    (root / "to_file").symlink_to(outside / "secret.txt")
    (root / "to_dir").symlink_to(outside, target_is_directory=True)
    (root / "to_inner").symlink_to("inner.txt")
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    os.mkfifo(root / "fifo")
    box = Sandbox(root, resolve_target("mod.py", root), tmp_path / "scratch")
    copy = box.fresh()
    names = sorted(p.name for p in copy.iterdir())
    assert names == ["inner.txt", "mod.py", "to_file", "to_inner"]
    assert not (copy / "to_file").is_symlink()
    assert (copy / "to_file").read_text(encoding="utf-8") == "outside\n"
    assert (copy / "to_inner").is_symlink()
    assert box.target.modules[0].path == copy / "mod.py"
    assert box.target.modules[0].real == root / "mod.py"
    (copy / "mod.py").unlink()
    assert (box.fresh() / "mod.py").is_file()


BATCHED = (
    "import time\n\n\n"
    "def spin(n: int) -> int:\n    while n > 1000:\n        time.sleep(1)\n    return n\n\n\n"
    "def half(n: int) -> int:\n    if n > 10:\n        return n // 2\n    return n\n\n\n"
    "def ratio(a: int, b: int) -> float:\n    return a / b\n"
)


def test_one_child_judges_the_candidates_and_a_hang_stops_only_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidates run in one child pytest: half's test passes there with the lines it ran;
    spin's hangs and is stopped at its own timeout, inside the child, and the run goes on (its
    verdict says so); ratio's Hypothesis test fails (b=0) and gets no verdict there: it runs
    alone, where its output tells a finding from a failure; a failing template call is failed.
    The child loads qbench alone (``quick_env``), as the generations of this module do."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    (tmp_path / "mod.py").write_text(BATCHED, encoding="utf-8")
    target = resolve_target("mod.py", tmp_path)
    imports = ["import mod", "from hypothesis import given, settings, strategies as st"]
    candidates = [
        Candidate(
            name,
            "hypothesis",
            "mod",
            [name],
            imports,
            "@settings(max_examples=20, deadline=None, derandomize=True)\n"
            f"@given({args})\ndef test_fuzz_{name}({args.replace('=st.integers()', '')}):\n"
            f"    mod.{name}({args.replace('=st.integers()', '')})\n",
        )
        for name, args in (
            ("half", "n=st.integers()"),
            ("spin", "n=st.integers()"),
            ("ratio", "a=st.integers(), b=st.integers()"),
        )
    ]
    wrong = "def test_half_wrong():\n    assert mod.half(n=20) == 20\n"
    candidates.append(Candidate("half_wrong", "template", "mod", ["half"], ["import mod"], wrong))
    verdicts = verify_batch(candidates, target, tmp_path / "scratch", 3, 600)
    assert verdicts["half"].outcome == "passed", verdicts
    assert verdicts["half"].executed == {(tmp_path / "mod.py").resolve(): {11, 12, 13}}
    assert verdicts["spin"] == Verdict("hung", {}, "hung: stopped after 3s (--test-timeout)")
    assert "ratio" not in verdicts, verdicts
    assert verdicts["half_wrong"].outcome == "failed"
    assert verdicts["half_wrong"].detail.startswith("AssertionError"), verdicts
