"""``benchmarks/overhead.py --method simultaneous`` (issue 28): the pairs compared, the cores
swapped round by round, the ratio of each round taken between the two runs made at the same
time, the commands pinned to their core, and the ballast that keeps a freed core busy. Nothing
here is timed."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

overhead = importlib.import_module("overhead")  # from the directory put first above
_measure = importlib.import_module("_measure")

PRINT_AFFINITY = "import os; print(sorted(os.sched_getaffinity(0)))"


def config(name: str) -> object:
    return next(c for c in overhead.CONFIGS if c.name == name)


def run(name: str, round_no: int, cpu_s: float, **fields: object) -> object:
    """A measurement with only what the ratios read."""
    return overhead.Measurement(
        config=name,
        size=100,
        round=round_no,
        cpu_s=cpu_s,
        user_s=cpu_s,
        sys_s=0.0,
        wall_s=cpu_s,
        max_rss_mib=50.0,
        exit_code=1,
        **fields,
    )


def beside(name: str, partner: str, round_no: int, cpu_s: float, **fields: object) -> object:
    return run(name, round_no, cpu_s, method="simultaneous", partner=partner, **fields)


def test_pairs_put_plain_pytest_beside_each_other_configuration() -> None:
    """Without --aa each configuration is paired with plain pytest, plain first; with --aa each
    with its own twin, whose name says it is one."""
    configs = [config("plain"), config("junitxml"), config("qbench")]
    pairs = overhead.pairs_of(configs)
    assert [(a.name, b.name) for a, b in pairs] == [("plain", "junitxml"), ("plain", "qbench")]
    twins = overhead.pairs_of(configs, same=True)
    assert [(a.name, b.name) for a, b in twins] == [
        ("plain", "plain'"),
        ("junitxml", "junitxml'"),
        ("qbench", "qbench'"),
    ]
    assert twins[2][1].args is twins[2][0].args  # the same command, another name


def test_the_cores_swap_every_round() -> None:
    """Round 1 puts the pair's first run on the first core, round 2 on the second: over an even
    number of rounds each configuration has each core as often."""
    assigned = [overhead.cores_of(r, [3, 5]) for r in range(1, 5)]
    assert assigned == [(3, 5), (5, 3), (3, 5), (5, 3)]
    firsts = [first for first, _ in assigned]
    assert firsts.count(3) == firsts.count(5)


def test_a_simultaneous_ratio_divides_only_by_the_plain_run_beside_it() -> None:
    """Plain pytest runs once beside each configuration in a round: junitxml's ratio is over
    the plain run made at the same time as junitxml, not over the one beside qbench."""
    measurements = [
        beside("plain", "junitxml", 1, 10.0),
        beside("junitxml", "plain", 1, 11.0),
        beside("plain", "qbench", 1, 20.0),
        beside("qbench", "plain", 1, 21.0),
        run("plain", 1, 100.0),  # the sequential round of the same sitting
        run("junitxml", 1, 150.0),
    ]
    assert overhead.round_ratios(measurements, "simultaneous", "plain", "junitxml") == {1: 1.1}
    assert overhead.round_ratios(measurements, "simultaneous", "plain", "qbench") == {1: 1.05}
    assert overhead.round_ratios(measurements, "sequential", "plain", "junitxml") == {1: 1.5}


def test_a_round_whose_run_failed_has_no_ratio() -> None:
    """A run that failed (wrote nothing, wrong exit) takes its round's ratio out of the median,
    and the median, smallest and largest ratio are of the rounds left."""
    measurements = [
        beside("plain", "qbench", 1, 10.0),
        beside("qbench", "plain", 1, 10.4),
        beside("plain", "qbench", 2, 10.0),
        beside("qbench", "plain", 2, 99.0, problems=["report.json missing"]),
        beside("plain", "qbench", 3, 10.0),
        beside("qbench", "plain", 3, 10.2),
        beside("plain", "qbench", 4, 10.0),
        beside("qbench", "plain", 4, 10.8),
    ]
    [row] = overhead.pair_rows(measurements, [("plain", "qbench")])
    assert row.method == "simultaneous"
    assert sorted(row.ratios) == [1, 3, 4]
    assert (round(row.low, 3), round(row.median, 3), round(row.high, 3)) == (1.02, 1.04, 1.08)


def test_an_aa_run_compares_each_configuration_with_its_twin() -> None:
    """The pairs of a saved run are read back from its configurations' names: the twins when
    it was an A/A run, plain against each other otherwise."""
    aa = [beside("qbench", "qbench'", 1, 10.0), beside("qbench'", "qbench", 1, 10.1)]
    assert overhead.pairs_measured(aa) == [("qbench", "qbench'")]
    rows = overhead.pair_rows(aa, overhead.pairs_measured(aa))
    assert [round(r.median, 3) for r in rows] == [1.01]
    ab = [run("plain", 1, 1.0), run("junitxml", 1, 1.0), run("qbench", 1, 1.0)]
    assert overhead.pairs_measured(ab) == [("plain", "junitxml"), ("plain", "qbench")]


def test_the_ratio_table_lists_every_round_and_the_spread() -> None:
    """One row per pair and method: each round's ratio (a dash for a round left out), the
    median, the smallest and largest, and their difference; then the couples of rounds."""
    row = overhead.PairRow("simultaneous", "plain", "qbench", {1: 1.05, 3: 1.07, 2: 1.06})
    table = overhead.ratio_table(10000, [row], rounds=4)
    assert "| qbench / plain | simultaneous | 1.050 | 1.060 | 1.070 | – | 1.060x " in table
    assert "| 1.050–1.070 | 0.020 | 1.055x | 1.055–1.055 |" in table


def test_couples_of_rounds_cancel_a_core_slower_for_both_rounds() -> None:
    """Rounds 1 and 2 (cores swapped) make one couple, 3 and 4 the next: a core 4 % slower
    than the other in both rounds of a couple reads 1.00 in their geometric mean; a couple
    missing a round (5 alone, 7 without 8) is left out."""
    slow = 1.04
    ratios = {1: slow, 2: 1 / slow, 3: 1.02 * slow, 4: 1.02 / slow, 5: 1.5, 7: 1.0}
    row = overhead.PairRow("simultaneous", "plain", "plain'", ratios)
    assert [round(c, 6) for c in row.couples] == [1.0, 1.02]


def test_the_launcher_pins_the_command_to_the_cores_asked(tmp_path: Path) -> None:
    """measure(cores=...) runs the command on that core alone, and says so; without cores the
    command may run on every core this process may."""
    core = max(os.sched_getaffinity(0))
    out = tmp_path / "affinity.txt"
    with out.open("wb") as handle:
        usage = _measure.measure(
            [sys.executable, "-c", PRINT_AFFINITY], output=handle, cores=(core,)
        )
    assert usage.exit_code == 0
    assert usage.cores == (core,)
    assert out.read_text().strip() == f"[{core}]"
    with out.open("wb") as handle:
        free = _measure.measure([sys.executable, "-c", PRINT_AFFINITY], output=handle)
    assert free.cores == tuple(sorted(os.sched_getaffinity(0)))


def test_ballast_runs_pinned_until_its_partner_is_done_then_is_killed() -> None:
    """The core freed by the first run of a pair to finish runs ballast: started again when it
    ends, killed when the other run finishes, pinned to that core by PIN_AND_EXEC."""
    core = max(os.sched_getaffinity(0))
    argv = [sys.executable, "-c", PRINT_AFFINITY]
    pinned = subprocess.run(
        [sys.executable, "-c", overhead.PIN_AND_EXEC, str(core), *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    assert pinned.stdout.strip() == f"[{core}]"

    partner: Future[object] = Future()
    started: list[subprocess.Popen[bytes]] = []
    second = threading.Event()

    def start() -> subprocess.Popen[bytes]:
        code = "pass" if not started else "import time; time.sleep(600)"
        started.append(subprocess.Popen([sys.executable, "-c", code]))
        if len(started) == 2:
            second.set()
        return started[-1]

    busy = threading.Thread(target=overhead.keep_busy, args=(partner, start))
    busy.start()
    assert second.wait(timeout=120), "the ballast that ended was not started again"
    partner.set_result(None)
    busy.join(timeout=120)
    assert not busy.is_alive()
    assert len(started) == 2
    assert started[0].returncode == 0
    assert started[1].returncode is not None and started[1].returncode < 0  # killed
