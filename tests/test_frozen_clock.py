"""A clock frozen or moved for the whole session (freezegun's or time-machine's ``start()`` in
a ``conftest.py``, a session fixture): the run's id, dates and duration are the real clock's
(``core.clock``), and a note says the tests' own times are pytest's, read from that clock."""

from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone

import pytest


TESTS = """
import time


def test_a():
    time.sleep(0.01)


def test_b():
    assert False
"""
FROZEN = {
    "freezegun": 'from freezegun import freeze_time\nfreeze_time("2012-01-14").start()\n',
    "freezegun-fixture": (
        "import pytest\nfrom freezegun import freeze_time\n\n\n"
        '@pytest.fixture(scope="session", autouse=True)\n'
        'def frozen():\n    with freeze_time("2012-01-14"):\n        yield\n'
    ),
    "time-machine": "import time_machine\ntime_machine.travel(0, tick=False).start()\n",
}


@pytest.mark.parametrize("how", list(FROZEN))
def test_a_frozen_clock_does_not_date_the_run(pytester: pytest.Pytester, how: str) -> None:
    """Before, the run was `20120114T000000Z-...`, started and completed on 2012-01-14 with a
    duration of 0 (freezegun), or on 1970-01-01 (time-machine), and `qbench runs` and the
    history ordered it there; a freeze started in a session fixture (pytest's clock moved
    in the first test's setup) left the run's dates right but a test 42 years long."""
    pytest.importorskip(how.split("-fixture")[0].replace("-", "_"))
    pytester.makeconftest(FROZEN[how])
    pytester.makepyfile(test_clock=TESTS)
    before = datetime.now(timezone.utc)
    result = pytester.runpytest_subprocess("-p", "qbench", "-p", "no:randomly")
    after = datetime.now(timezone.utc)
    result.assert_outcomes(passed=1, failed=1)
    (run_dir,) = (pytester.path / ".qbench/runs").iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    started = datetime.fromisoformat(report["run"]["started_at"].replace("Z", "+00:00"))
    completed = datetime.fromisoformat(report["run"]["completed_at"].replace("Z", "+00:00"))
    assert before <= started <= completed <= after
    # the id is made as qbench is configured, before the session starts (the second may turn
    # between them on a busy machine): dated by the real clock, between the two
    named = datetime.strptime(run_dir.name.split("-")[0], "%Y%m%dT%H%M%SZ")
    named = named.replace(tzinfo=timezone.utc)
    assert before.replace(microsecond=0) <= named <= started
    assert 0 < report["summary"]["duration"] <= (after - before).total_seconds()
    assert [w["code"] for w in report["warnings"]] == ["clock-moved"]
    result.stdout.fnmatch_lines(["qbench: the clock was frozen or moved during the run *"])


def test_an_unfrozen_run_has_no_clock_note(pytester: pytest.Pytester) -> None:
    """The real clock: no note."""
    pytester.makepyfile(test_clock=TESTS)
    result = pytester.runpytest("-p", "qbench", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    assert "clock was frozen" not in result.stdout.str()
