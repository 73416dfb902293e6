"""The per-test path stays cheap and writes what it wrote before: each result's stream line
made field by field, the start times' text, and the environment looked at for new secrets only
after the phases whose report can hold one (issue 28)."""

from __future__ import annotations

import json
import math
import os
import random
import sys
from datetime import datetime
from datetime import timezone
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from test_makereport import PROFILED_WINDOW

from pytest_qbench.core.limits import Limits
from pytest_qbench.core.numbers import round_micro
from pytest_qbench.core.redact import Redactor
from pytest_qbench.plugin.collectors import ITEM_ATTR
from pytest_qbench.plugin.collectors import NO_FACTS
from pytest_qbench.plugin.collectors import TestAccumulator
from pytest_qbench.plugin.collectors import _frames_of
from pytest_qbench.plugin.collectors import plain_pass_result
from pytest_qbench.report import shapes
from pytest_qbench.report import store
from pytest_qbench.report.shapes import iso
from pytest_qbench.report.shapes import iso_epoch

from conftest import RunQBench


def test_iso_epoch_is_the_text_of_fromtimestamp() -> None:
    """iso_epoch writes what iso(datetime.fromtimestamp(...)) writes: microseconds rounded half
    to even, a carry into the next second, no fraction at a whole second, before 1970 too."""
    draw = random.Random(28)
    seconds = [1764156584.0, 1764156584.9999996, 1764156584.5000005, 1.0000005, 86399.9999995]
    seconds += [draw.uniform(1e9, 2e9) for _ in range(5000)]
    seconds += [math.floor(s) + 0.5e-6 + k / 1e6 for s in seconds[:200] for k in (0, 1, 999999)]
    seconds += [draw.uniform(-1e6, 1e6) for _ in range(500)]
    for value in seconds:
        assert iso_epoch(value) == iso(datetime.fromtimestamp(value, timezone.utc)), value


def test_round_micro_is_round_to_six_places() -> None:
    """round_micro gives round(x, 6)'s value, type and text for the times a run holds and for
    the values its shortcut leaves to round: halves of a microsecond and their neighbours,
    multiples of powers of two (exact ties), zero and -0.0, negatives, ints, not finite."""
    draw = random.Random(28)
    scales = (1e-7, 1e-6, 1e-5, 1e-3, 0.1, 1.0, 100.0, 1e4, 1e7, 1e11, 1e13)
    values: list[float] = [draw.random() * draw.choice(scales) for _ in range(200_000)]
    for _ in range(20_000):
        tie = (draw.randrange(10 ** draw.randrange(1, 12)) + 0.5) / 1e6
        values += [tie, math.nextafter(tie, 0), math.nextafter(tie, 1)]
    values += [k / 128 for k in range(5000)] + [k / 2**20 for k in range(5000)]
    values += [0.0, -0.0, 5e-324, 1e-300, 5e-7, -1e-3, -2.5e-6, 1e12, 999999.9999995]
    values += [math.inf, -math.inf, math.nan, 3, 0, True]
    for value in values:
        want, got = round(value, 6), round_micro(value)
        assert (type(got), repr(got)) == (type(want), repr(want)), value
        assert math.copysign(1, got) == math.copysign(1, want) or math.isnan(want), value


VARIED = """
    import os
    import pytest

    pytestmark = pytest.mark.slow

    @pytest.fixture
    def broken_teardown():
        yield
        raise ValueError("teardown broke")

    def test_pass():
        pass

    def test_print(record_property):
        '''Prints.'''
        record_property("answer", 42)
        print("out")

    def test_fail(broken_teardown):
        assert 0

    @pytest.mark.skip(reason="not today")
    def test_skip():
        pass

    @pytest.mark.xfail(reason="known")
    def test_xfail():
        assert 0

    @pytest.mark.parametrize("n", [1, 2])
    def test_param(n):
        assert n == 1

    @pytest.mark.qbench_case(key="K-1", title="a case")
    def test_case():
        pass

    def test_subtests(subtests):
        for i in range(2):
            with subtests.test(i=i):
                assert i == 0
"""


def test_stream_lines_are_the_compact_results(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Every result line of the stream holds exactly the fields of its result that are not at
    their default, in the model's order: the line made field by field is what compact() makes
    of the whole record."""
    pytester.makepyfile(test_varied=VARIED)
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow tests\n")
    run = run_qbench("-p", "no:cacheprovider", "--qbench-capture=all")
    lines = [r["result"] for r in run.stream_records() if r["kind"] == "result"]
    assert len(lines) == len(run.report.results) == 9
    for line, model in zip(lines, run.report.results, strict=True):
        whole = model.model_dump(mode="json")
        whole["history"] = None  # the failing tests' history: added to report.json at the end
        assert line == shapes.compact("TestResult", whole), line["nodeid"]
        assert list(line) == list(shapes.compact("TestResult", whole))
    fail = next(line for line in lines if line["nodeid"].endswith("test_fail"))
    assert fail["failure"]["error_type"] == "AssertionError"
    assert fail["teardown_failure"]["error_type"] == "ValueError"
    printed = next(line for line in lines if line["nodeid"].endswith("test_print"))
    assert printed["user_properties"] == [["answer", 42]]
    assert printed["captured"]["stdout"] == "out\n"
    assert printed["metadata"]["description"] == "Prints."


LOOKS = """
    import os
    import pytest

    @pytest.fixture
    def secret_then_skip(monkeypatch):
        monkeypatch.setenv("SKIP_TOKEN", "skip-secret-0123456789")
        pytest.skip("skipped with " + os.environ["SKIP_TOKEN"])

    def test_quiet_1():
        pass

    def test_quiet_2():
        pass

    def test_skipped_in_setup(secret_then_skip):
        pass
"""


def test_environment_looked_at_once_per_quiet_test(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passing test without output is looked at for new secrets once (after its call), not
    after each of its three phases; a setup that skips is looked at too, and the secret its
    fixture set is redacted in the skip's reason."""
    looks: list[int] = []
    refresh = Redactor.refresh

    def counted(self: Redactor, environ: object) -> bool:
        looks.append(1)
        return refresh(self, environ)  # type: ignore[arg-type]

    monkeypatch.setattr(Redactor, "refresh", counted)
    pytester.makepyfile(test_looks=LOOKS)
    run = run_qbench("-p", "no:cacheprovider")
    # test_quiet_1 and _2: their calls; test_skipped_in_setup: its skipped setup
    assert len(looks) == 3
    skipped = run.by_name("test_skipped_in_setup")
    assert skipped.reason == "skipped with [redacted]"


SETUP_HOOKS = """
    def test_setup_hooks(request):
        impls = request.config.hook.pytest_runtest_setup.get_hookimpls()
        print("SETUP_HOOKS", [impl.plugin_name for impl in impls])
"""


def test_no_hook_runs_at_each_tests_setup(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """qbench implements no pytest_runtest_setup (a pluggy call at every test's setup, 3.8 k
    instructions): a rerun attempt may attach again through its own qbench fixture instead."""
    pytester.makepyfile(test_hooks=SETUP_HOOKS)
    run = run_qbench("-s")
    line = next(x for x in run.result.outlines if "SETUP_HOOKS" in x)
    assert "qbench" not in line.split("SETUP_HOOKS")[1], line


GENERATE_HOOKS = """
    def test_generate_hooks(request):
        impls = request.config.hook.pytest_generate_tests.get_hookimpls()
        print("GENERATE_HOOKS", [impl.plugin_name for impl in impls])
"""


@pytest.mark.parametrize("repeat", [None, "3"])
def test_test_functions_generated_without_qbench_unless_repeated(
    pytester: pytest.Pytester, run_qbench: RunQBench, repeat: str | None
) -> None:
    """qbench implements pytest_generate_tests (a pluggy call at every test function's
    collection) only with --qbench-repeat above 1, where its agent tests run again."""
    pytester.makepyfile(test_generated_by_hooks=GENERATE_HOOKS)
    run = run_qbench("-s", *([f"--qbench-repeat={repeat}"] if repeat else []))
    line = next(x for x in run.result.outlines if "GENERATE_HOOKS" in x)
    names = line.split("GENERATE_HOOKS")[1]
    assert ("qbench" in names) is (repeat is not None), line


RERUN_ATTACHING = """
    import pytest

    ATTEMPTS = []

    @pytest.fixture
    def late_log(qbench):
        yield
        if len(ATTEMPTS) > 1:  # only the second attempt's fixture attaches
            qbench.attach("second", name="late.log")

    def test_attaches_when_run_again(late_log, qbench):
        ATTEMPTS.append(1)
        if len(ATTEMPTS) > 1:
            qbench.attach(b"shot", name="shot.png")
        assert len(ATTEMPTS) > 1
"""

HOOK_ATTACHING = """
    def pytest_qbench_attachments(item):
        return [{"data": f"teardown of {item.nodeid}", "name": "trace.txt"}]
"""


def test_a_rerun_attaches_though_its_first_attempt_did_not(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An attempt run again after one that attached nothing (and so was ended by its teardown)
    attaches through its qbench fixture, in the test and in a fixture's teardown, and through
    the pytest_qbench_attachments hook at each attempt's teardown."""
    pytest.importorskip("pytest_rerunfailures")
    pytester.makeconftest(HOOK_ATTACHING)
    pytester.makepyfile(test_rerun=RERUN_ATTACHING)
    run = run_qbench("-p", "rerunfailures", "--reruns", "1", "-W", "error::UserWarning")
    assert run.result.parseoutcomes() == {"passed": 1, "rerun": 1}
    attached = run.by_name("test_attaches_when_run_again").attachments
    assert [a.name for a in attached] == ["trace.txt", "shot.png", "late.log", "trace.txt"]
    assert all(a.path is not None and a.note is None for a in attached)


PLUGIN_NAMES = """
    def test_plugin_names(request):
        manager = request.config.pluginmanager
        for name in ("qbench-session", "qbench-verdicts"):
            plugin = manager.get_plugin(name)
            own = [n for n in dir(plugin) if not n.startswith("__")]
            print("PLUGIN_NAMES", name, len(dir(plugin)), *own)
"""


def test_registered_plugins_hold_only_their_hooks(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The objects qbench registers hold their hooks and little else: pluggy and pytest's
    fixture manager look at every name of a registered object (``QBenchSession`` held about
    110), and the session's hooks still run (the report is written, the test counted)."""
    pytester.makepyfile(test_names=PLUGIN_NAMES)
    run = run_qbench("-s")
    lines = [x.split("PLUGIN_NAMES")[1].split() for x in run.result.outlines if "PLUGIN_NAMES" in x]
    assert [line[0] for line in lines] == ["qbench-session", "qbench-verdicts"]
    for name, count, *own in lines:
        assert int(count) <= 41, (name, count)  # 40, and pytest_plugin_registered
        assert all(n.startswith("pytest_") for n in own if n != "plugin"), own
    session_hooks = next(line[2:] for line in lines if line[0] == "qbench-session")
    assert {"pytest_runtest_logreport", "pytest_runtest_makereport"} <= set(session_hooks)
    assert run.by_name("test_plugin_names").outcome == "passed"


class _CountedTraceback:
    """A traceback entry whose ``tb_lineno`` counts its reads (CPython 3.11 works it out of
    the code's line table at each one)."""

    def __init__(self, tb: TracebackType, tb_next: _CountedTraceback | None = None) -> None:
        self.tb_frame = tb.tb_frame
        self.tb_lasti = tb.tb_lasti
        self.tb_next = tb_next
        self.line = tb.tb_lineno
        self.reads = 0

    @property
    def tb_lineno(self) -> int:
        self.reads += 1
        return self.line


def test_a_failing_frame_reads_its_line_once(tmp_path: Path) -> None:
    """A failure's frames read each traceback entry's line number once (its frame and its
    source line alike): each read costs a walk of the code's line table."""
    try:
        raise ValueError("boom")
    except ValueError as exc:
        assert exc.__traceback__ is not None
        counted = _CountedTraceback(exc.__traceback__)
    frames, sources = _frames_of(counted, tmp_path)  # type: ignore[arg-type]
    assert [frame["line"] for frame in frames] == [counted.line]
    assert sources == ['raise ValueError("boom")']
    assert counted.reads == 1


def _recurse(depth: int) -> None:
    if depth:
        _recurse(depth - 1)
    raise ValueError("deep")


def test_a_recursion_reads_its_line_once(tmp_path: Path) -> None:
    """The frames of one function called from one line (a recursion) read the line number and
    the source line once: the sixth round read it at each of them (4 k instructions a read)."""
    try:
        _recurse(5)
    except ValueError as exc:
        entries = []
        tb = exc.__traceback__
        while tb is not None:
            entries.append(tb)
            tb = tb.tb_next
    counted = None
    for entry in reversed(entries):
        counted = _CountedTraceback(entry, counted)
    assert counted is not None
    frames, sources = _frames_of(counted, tmp_path)  # type: ignore[arg-type]
    lines = [entry.tb_lineno for entry in entries]
    assert [frame["line"] for frame in frames] == lines
    assert sources[1:] == ["_recurse(depth - 1)"] * 5 + ['raise ValueError("deep")']
    assert [frame["function"] for frame in frames] == ["test_a_recursion_reads_its_line_once"] + [
        "_recurse"
    ] * 6
    reads = []
    while counted is not None:
        reads.append(counted.reads)
        counted = counted.tb_next
    assert reads == [1, 1, 0, 0, 0, 0, 1]  # the test's line, the recursion's, the raise


FORKING_PLUGIN = """
import os, pickle

import pytest
from _pytest.reports import TestReport
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    # what pytest-forked does: the test runs in a forked child, its reports' attributes come back
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        reports = runtestprotocol(item, log=False)
        data = [report._to_json() for report in reports]
        with os.fdopen(write, "wb") as handle:
            pickle.dump(data, handle)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        data = pickle.load(handle)
    os.waitpid(pid, 0)
    for entry in data:
        item.ihook.pytest_runtest_logreport(report=TestReport._from_json(entry))
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_childs_reports_carry_their_facts(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A test run in a forked child (pytest-forked) sends its reports' attributes: qbench's
    facts travel on them there (not beside them, in a process that never logs them), so its
    markers, docstring and failure frames arrive."""
    pytester.makeconftest(FORKING_PLUGIN)
    pytester.makepyfile(
        test_forked='''
        import pytest

        @pytest.mark.filterwarnings("ignore")
        def test_ok():
            """Documented."""

        def helper():
            raise KeyError("lost")

        def test_bad():
            helper()
        '''
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    ok = run.by_name("test_ok")
    assert "filterwarnings" in ok.markers
    assert ok.metadata is not None and ok.metadata.description == "Documented."
    failure = run.by_name("test_bad").failure
    assert failure is not None and failure.error_type == "KeyError"
    assert [frame.function for frame in failure.frames] == ["test_bad", "helper"]


CALLS_CONFTEST = (
    """
    import json
    import sys

    import pytest

    COUNTS = {}


    def _profile(frame, event, arg):
        code = frame.f_code
        if event == "call" and "/pytest_qbench/plugin/" in code.co_filename.replace("\\\\", "/"):
            COUNTS[code.co_qualname] = COUNTS.get(code.co_qualname, 0) + 1
"""
    + PROFILED_WINDOW
)

PASSING = "\n".join(f"def test_{n}():\n    pass\n" for n in range(20))


def test_a_passing_tests_phases_call_few_functions_of_qbench(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A passing test's three phases, from its reports made to its result written, call at
    most 25 functions of qbench's plugin (24; main 41): a phase's facts are handed beside its
    report, and joined with those on it, without a call when it carries none; nothing is
    reset at a test's first setup; the attachments hook's function is called at the teardown
    only when a plugin implements the hook."""
    pytester.makeconftest(CALLS_CONFTEST)
    pytester.makepyfile(test_passing=PASSING)
    run = run_qbench("-p", "no:cacheprovider")
    run.result.assert_outcomes(passed=20)
    calls = json.loads((pytester.path / "counts.json").read_text(encoding="utf-8"))
    for name in ("joined_facts", "TestAccumulator._reset_attempt", "attach_from_hook"):
        assert name not in calls, calls
    assert sum(calls.values()) <= 25 * 20, calls


ALL_CALLS_CONFTEST = (
    """
    import json
    import sys

    import pytest

    COUNTS = {}


    def _qbench(code):
        return "/pytest_qbench/" in code.co_filename.replace("\\\\", "/")


    def _profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if _qbench(code):
            name = code.co_qualname
        elif code.co_filename.replace("\\\\", "/").endswith("_pytest/stash.py"):
            if frame.f_back is None or not _qbench(frame.f_back.f_code):
                return
            name = "Stash (from qbench)"
        elif code.co_name == "get_hookimpls":
            if frame.f_back is None or not _qbench(frame.f_back.f_code):
                return
            name = "get_hookimpls (from qbench)"
        else:
            return
        COUNTS[name] = COUNTS.get(name, 0) + 1
"""
    + PROFILED_WINDOW
)


def test_a_passing_test_asks_pytest_and_qbench_little(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Issue 28, eleventh round: a passing test's three phases call at most 24 functions of
    qbench's, counting those of ``core`` and ``report`` (23; main 37), and none of pytest's ``Stash`` or
    pluggy's ``get_hookimpls`` (main: 2 and 2): the word pytest filed a report under is read
    without `_category` where it is the one its phase and outcome give; a test is not closed
    for attachments, nor looked at for an agent's state, until a test of the run was opened
    for them (`attach.reopen`); whether a plugin implements a hook called at each test's end
    is asked as plugins are registered; the four times are rounded in one call; the outcome of
    three passing phases, the environment's known secrets and the result's emission are read
    in the caller's frame."""
    pytester.makeconftest(ALL_CALLS_CONFTEST)
    pytester.makepyfile(test_passing=PASSING)
    run = run_qbench("-p", "no:cacheprovider")
    run.result.assert_outcomes(passed=20)
    calls = json.loads((pytester.path / "counts.json").read_text(encoding="utf-8"))
    for name in (
        "QBenchSession._category",
        "close",
        "Stash (from qbench)",
        "get_hookimpls (from qbench)",
        "Redactor.known",
        "TestAccumulator.final_outcome",
        "in_installed_package",
        "repeat_index",
        "QBenchSession._emit_stored",
    ):
        assert name not in calls, (name, calls)
    assert calls["round_micros"] == 20, calls
    # `round_micros` hands a test's four times to `round_micro` only when one of them is within
    # 0.001 us of a half microsecond (0.2 % of times) or not below a second (a loaded machine):
    # a test in seven runs has one; four calls a test, every test, before the eleventh round.
    # Named among the absent, this test failed 2 runs of 9 (main and realsuite alike).
    assert calls.get("round_micro", 0) <= 12, calls
    assert sum(calls.values()) <= 24 * 20, calls


def test_a_passing_tests_accumulator_holds_few_attributes(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passing test's accumulator sets 12 attributes of its own (main: 23, with nine lists
    and dicts made for every test; three now): what most tests never set (attempts, subtests,
    failures, a reason, attachments) is read from the class until a report sets it. Its
    result is the same (the stream's lines, `test_stream_lines_are_the_compact_results`)."""
    sizes: list[int] = []
    add = TestAccumulator.add

    def counted(self: TestAccumulator, *args: Any, **kwargs: Any) -> bool:
        finished = add(self, *args, **kwargs)
        if finished:
            sizes.append(len(vars(self)))
        return finished

    monkeypatch.setattr(TestAccumulator, "add", counted)
    pytester.makepyfile(test_passing=PASSING)
    # passing tests' output kept: their reports go through an accumulator (else none is made,
    # `test_a_plain_passing_test_makes_no_accumulator`)
    run = run_qbench("-p", "no:cacheprovider", "--qbench-capture=all")
    run.result.assert_outcomes(passed=20)
    assert sizes == [12] * 20


def test_a_plain_passing_test_makes_no_accumulator(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28, "Fewer bytecodes a test": a plain passing test's three reports are held until
    its teardown, which makes its result in one call (`plain_pass_result`): no
    ``TestAccumulator`` is made for it (main: one a test, with three calls of its ``add``); a
    test that fails, skips or prints where output is kept still gets one, and every stream
    line is what ``compact`` makes of the whole record."""
    made: list[str] = []
    init = TestAccumulator.__init__

    def counted(self: TestAccumulator, report: Any, *args: Any) -> None:
        made.append(report.nodeid)
        init(self, report, *args)

    monkeypatch.setattr(TestAccumulator, "__init__", counted)
    pytester.makepyfile(test_passing=PASSING, test_varied=VARIED)
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow tests\n")
    run = run_qbench("-p", "no:cacheprovider")
    assert not [nodeid for nodeid in made if nodeid.startswith("test_passing.py")], made
    assert len(made) >= 5, made  # the varied module's failures, skips, xfails, subtests
    lines = [r["result"] for r in run.stream_records() if r["kind"] == "result"]
    assert len(lines) == len(run.report.results) == 29
    for line, model in zip(lines, run.report.results, strict=True):
        whole = model.model_dump(mode="json")
        whole["history"] = None
        assert list(line.items()) == list(shapes.compact("TestResult", whole).items())


def _report(when: Any, duration: float, start: float, location: Any) -> pytest.TestReport:
    return pytest.TestReport(
        "tests/test_x.py::test_x[1]", location, {}, "passed", None, when, [], duration, start
    )


def test_a_plain_pass_is_the_accumulators_result() -> None:
    """`plain_pass_result` of three passing reports is, field for field and in order, the
    result a ``TestAccumulator`` makes of them, and its stream line the same text, for times
    of every kind (whole microseconds, halves, zero, ints, above a second, not finite), with
    markers or none, with a line or none, with a start or none; ``None`` for what it leaves
    to the accumulator (item facts but markers, a test of an installed package)."""
    draw = random.Random(28)
    times: list[float] = [draw.random() / draw.choice((1, 10, 1000)) for _ in range(300)]
    times += [0.0, 0, 2, 1.5, 3e-7, 2.5e-6, 0.5, 1e-6, math.inf, 12345.678]
    limits = Limits()
    redact = Redactor({})
    for n in range(600):
        first, middle, last = (draw.choice(times) for _ in range(3))
        start = draw.choice((0.0, 1764156584.25, draw.uniform(1e9, 2e9)))
        location = ("tests/test_x.py", draw.choice((None, 0, 41)), "test_x[1]")
        item = {"markers": draw.choice(([], ["parametrize"], ["slow", "parametrize"]))}
        reports = [
            _report("setup", first, start, location),
            _report("call", middle, start + 1, location),
            _report("teardown", last, start + 2, location),
        ]
        acc = TestAccumulator(reports[0], limits, redact)
        acc.add(reports[0], "", {ITEM_ATTR: item})
        acc.add(reports[1], "passed", NO_FACTS)
        assert acc.add(reports[2], "", NO_FACTS)
        want = acc.result(None, "passed")
        got = plain_pass_result(reports[0], reports[1], reports[2], item)
        assert got is not None
        assert list(got.items()) == list(want.items()), n
        assert repr(got) == repr(want), n
        for stored in (want, got):
            stored["counted_as"] = list(stored["counted_as"])
        assert store.passing_line(got) == store.passing_line(want), n
    setup, call, teardown = reports
    assert plain_pass_result(setup, call, teardown, {"markers": [], "doc": "Docs."}) is None
    installed = ("/venv/lib/site-packages/plug/steps.py", 3, "test_x[1]")
    setup = _report("setup", 0.1, 0.0, installed)
    assert plain_pass_result(setup, call, teardown, {"markers": []}) is None


def test_a_quiet_environment_look_is_short() -> None:
    """Issue 28, "Fewer bytecodes a test": the look at the environment after a test's call,
    when only pytest's ``PYTEST_CURRENT_TEST`` changed, runs at most 45 bytecodes of
    ``Redactor.refresh`` (main 64): the one form of the variable's name that ``os.environ``
    holds as a test runs (POSIX's bytes) is synced first, the other only when it is absent."""
    if os.name == "nt":
        pytest.skip("os.environ holds str names on Windows: both forms are looked at")
    redact = Redactor(os.environ)
    counted: list[int] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is Redactor.refresh.__code__:
            frame.f_trace_opcodes = True
            if event == "opcode":
                counted.append(1)
            return tracer
        return None

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_x (call)")
        sys.settrace(tracer)
        try:
            changed = redact.refresh(os.environ)
        finally:
            sys.settrace(None)
    assert not changed
    assert 0 < len(counted) <= 45, len(counted)


LATE_PLUGINS = """
    import pytest


    class Marks:
        def pytest_qbench_modify_result(self, result, config):
            result.markers = [*result.markers, "modified"]

        def pytest_qbench_attachments(self, item):
            return [{"data": b"late", "name": "late.txt"}]


    def test_before():
        pass


    def test_registers(request):
        request.config.pluginmanager.register(Marks(), "late-marks")


    def test_after():
        pass
"""

CUSTOM_WORD = """
    import pytest


    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(report, config):
        if report.when == "call" and report.passed and "custom" in report.nodeid:
            return "custom", "C", "CUSTOM"
        if report.when == "setup" and report.passed and "quiet" in report.nodeid:
            return "quiet", "q", "QUIET"
"""


def test_a_plugin_registered_while_the_tests_run_is_asked_at_their_end(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Whether a plugin implements the hooks called at each test's end (a result's change, a
    teardown's attachments) is asked as plugins are registered: a plugin a test registers
    changes the results and attaches to the tests that end after it, and not before."""
    pytester.makepyfile(test_late=LATE_PLUGINS)
    run = run_qbench("-p", "no:cacheprovider")
    run.result.assert_outcomes(passed=3)
    assert run.by_name("test_before").markers == []
    assert run.by_name("test_before").attachments == []
    for name in ("test_registers", "test_after"):
        result = run.by_name(name)
        assert result.markers == ["modified"], name
        assert [a.name for a in result.attachments] == ["late.txt"], name


def test_a_report_filed_under_another_word_keeps_it(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A report that a plugin's ``pytest_report_teststatus`` files under a word of its own (not
    the one its phase and outcome give) is counted under that word, as pytest's terminal
    counts it: the report is found in the terminal's lists (`QBenchSession._category`)."""
    pytester.makeconftest(CUSTOM_WORD)
    pytester.makepyfile("def test_custom(): pass\ndef test_quiet(): pass\ndef test_plain(): pass\n")
    run = run_qbench("-p", "no:cacheprovider")
    assert run.by_name("test_custom").counted_as == ["custom"]
    assert run.by_name("test_quiet").counted_as == ["quiet", "passed"]
    assert run.by_name("test_plain").counted_as == ["passed"]


def test_a_passing_tests_phases_with_nothing_to_hand_on_are_not_annotated(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Issue 28, twelfth round: a passing phase without output, properties or exception,
    nothing attached, opened or waiting, is not handed to ``annotate``: qbench's makereport
    hands the item's facts on at the setup, looks at the environment for secrets after the
    call and sets the phase mark itself (main: ``annotate`` called for each of a test's three
    phases, 60 calls for 20 passing tests). The results keep their markers and docstrings
    (`test_stream_lines_are_the_compact_results`)."""
    pytester.makeconftest(ALL_CALLS_CONFTEST)
    pytester.makepyfile(test_passing=PASSING)
    run = run_qbench("-p", "no:cacheprovider")
    run.result.assert_outcomes(passed=20)
    calls = json.loads((pytester.path / "counts.json").read_text(encoding="utf-8"))
    assert "QBenchWorker.annotate" not in calls, calls
    assert calls["item_facts"] == 20, calls
    assert calls["QBenchWorker.make_report"] == 3 * 20, calls
    assert calls["Redactor.refresh"] == 20, calls
