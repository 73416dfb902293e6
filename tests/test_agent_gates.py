"""Metric gates (--qbench-metric-min, --qbench-baseline with --qbench-max-regression) and
--qbench-repeat with pass@k: verdicts, exit status, terminal lines, report, Markdown, digest and
the statistics behind them (issue 4)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from pytest_qbench.core.repeat import repeated_test_id
from pytest_qbench.report.gates.stats import paired_interval
from pytest_qbench.report.gates.stats import pass_at_k
from pytest_qbench.report.gates.stats import t_quantile

from conftest import RunQBench
from conftest import assert_summary_matches_pytest


# --- the statistics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.7062047), (2, 4.3026527), (4, 2.7764451), (9, 2.2621572), (29, 2.0452296)],
)
def test_t_quantile_matches_the_tables(df: int, expected: float) -> None:
    """The 97.5% quantile of Student's t equals the published table values."""
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-6)
    assert t_quantile(0.025, df) == pytest.approx(-expected, abs=1e-6)


def test_pass_at_k_by_hand() -> None:
    """n=5 runs, c=3 passed: pass@1 = 3/5, pass@2 = 1 - C(2,2)/C(5,2) = 0.9, pass@3.. = 1;
    c=0 gives 0 and c=n gives 1 for every k."""
    assert [pass_at_k(5, 3, k) for k in range(1, 6)] == [0.6, 0.9, 1.0, 1.0, 1.0]
    assert pass_at_k(10, 2, 3) == pytest.approx(1 - math.comb(8, 3) / math.comb(10, 3))
    assert {pass_at_k(4, 0, k) for k in range(1, 5)} == {0.0}
    assert {pass_at_k(4, 4, k) for k in range(1, 5)} == {1.0}
    with pytest.raises(ValueError, match="pass_at_k needs"):
        pass_at_k(3, 4, 1)


def test_paired_interval_by_hand() -> None:
    """mean ± t(0.975, n-1) * s / sqrt(n); no spread gives a point; fewer than 2 gives none."""
    diffs = [0.1, -0.1, 0.05, 0.0]
    interval = paired_interval(diffs)
    assert interval is not None
    half = 3.1824463 * 0.0853912 / 2
    assert interval.mean == pytest.approx(0.0125)
    assert interval.n == 4
    assert interval.low == pytest.approx(0.0125 - half, abs=1e-6)
    assert interval.high == pytest.approx(0.0125 + half, abs=1e-6)
    point = paired_interval([0.2, 0.2, 0.2])
    assert point is not None and point.low == pytest.approx(0.2) == point.high
    assert paired_interval([0.3]) is None


def test_repeated_test_id() -> None:
    """The repeat id is dropped, whether alone in the brackets or after the test's own id."""
    assert repeated_test_id("t.py::f[repeat-2]", 2) == "t.py::f"
    assert repeated_test_id("t.py::f[a-repeat-12]", 12) == "t.py::f[a]"
    assert repeated_test_id("a.yaml::case[repeat-1]", 1) == "a.yaml::case"
    assert repeated_test_id("t.py::f[x]", 1) == "t.py::f[x]"


# --- --qbench-metric-min -------------------------------------------------------------------------

SCORED = """
    import pytest

    @pytest.mark.parametrize("score", [0.5, 0.7, 0.9])
    def test_agent(qbench, score):
        qbench.record("answer")
        qbench.add("quality", score)

    def test_plain():
        pass
"""


def test_metric_min_below_fails_the_run(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A mean below its minimum: exit status 1 with every test passed, a red terminal line with
    the numbers, a GateResult, the Markdown headline and the digest's next step."""
    pytester.makepyfile(SCORED)
    run = run_qbench("--qbench-metric-min", "quality=0.8", "--qbench-digest=digest.json")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    run.result.assert_outcomes(passed=4)
    assert_summary_matches_pytest(run)
    run.result.stdout.fnmatch_lines(
        ["qbench: metric gate quality: mean 0.70 is below the required 0.80 (3 scores)"]
    )
    (gate,) = run.report.gates
    assert (gate.kind, gate.name, gate.passed, gate.threshold, gate.n) == (
        "metric_min",
        "quality",
        False,
        0.8,
        3,
    )
    assert gate.value == pytest.approx(0.7)
    assert run.report.run.exit_code == 1
    assert "# ❌ Test report" in run.markdown
    assert "**❌ Not green:** metric gate quality failed: mean 0.70 is below the required 0.80" in (
        run.markdown
    )
    assert "| metric mean quality | ❌ failed |" in run.markdown
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["success"] is False
    assert digest["next_steps"][0].startswith(
        "Raise the mean of metric quality to the required 0.8 (--qbench-metric-min)"
    )


def test_metric_min_met_and_unknown_metric(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A met minimum passes (green line); a registered metric with no scores cannot be
    decided, so its gate fails the run, saying so (it passed before: agent tests all skipped
    went green); ini lines add to the command line's (which win for the same name)."""
    pytester.makepyfile(SCORED)
    pytester.makeini("[pytest]\nqbench_metric_min =\n    quality = 0.9\n    rouge_l = 0.5\n")
    run = run_qbench("--qbench-metric-min=quality=0.7")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    run.result.stdout.fnmatch_lines(
        [
            "qbench: metric gate quality: mean 0.7 meets the required 0.7 (3 scores)",
            "qbench: metric gate rouge_l: no scores for metric rouge_l in this run "
            "(scored: quality); the gate cannot decide, so it fails; score it in a test, or "
            "leave rouge_l out of --qbench-metric-min",
        ]
    )
    assert [(g.name, g.passed) for g in run.report.gates] == [
        ("quality", True),
        ("rouge_l", False),
    ]
    assert "# ❌ Test report" in run.markdown


def test_metric_min_unknown_name_fails(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """(issue 11.8) A name no test scored and no registered metric has fails the gate, with the
    nearest known name: a typo never silently disables it."""
    pytester.makepyfile(SCORED)
    run = run_qbench("--qbench-metric-min", "tokenf1=0.5", "--qbench-digest=digest.json")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    run.result.assert_outcomes(passed=4)
    run.result.stdout.fnmatch_lines(
        [
            "qbench: metric gate tokenf1: unknown metric 'tokenf1': no test scored it and no "
            "registered metric has that name; did you mean 'token_f1'? fix --qbench-metric-min "
            "tokenf1=... (known: *quality*"
        ]
    )
    assert [(g.name, g.passed) for g in run.report.gates] == [("tokenf1", False)]
    digest = json.loads((pytester.path / "digest.json").read_text(encoding="utf-8"))
    assert digest["next_steps"][0].startswith("Fix the metric name in --qbench-metric-min")


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (
            ["--qbench-metric-min=quality"],
            "",
            "*--qbench-metric-min: must be NAME=VALUE with a number of 0 or more, given: "
            "'quality'; e.g. token_f1=0.7",
        ),
        (
            [],
            "qbench_metric_min = quality=-1",
            "ERROR: ini qbench_metric_min must be NAME=VALUE with a number of 0 or more, "
            "given: 'quality=-1'*",
        ),
        (
            ["--qbench-max-regression=0.1"],
            "",
            "ERROR: --qbench-max-regression needs a baseline to compare with; add "
            "--qbench-baseline=REPORT*",
        ),
        (
            ["--qbench-baseline=missing.json"],
            "",
            "ERROR: --qbench-baseline cannot be used as the baseline: cannot read report "
            "*missing.json*; give the report.json of an earlier run*",
        ),
        (
            ["--qbench-baseline=plain.json"],
            "",
            "ERROR: --qbench-baseline has no metric scores to compare with, given: *plain.json; "
            "give the report.json of a run with agent tests",
        ),
        (
            ["--qbench-baseline=plain.json", "--qbench-max-regression=-0.1"],
            "",
            "*--qbench-max-regression: must be a score drop of 0 or more, given: '-0.1'*",
        ),
        (["--qbench-repeat=0"], "", "*--qbench-repeat: must be a whole number of 1 or more*"),
    ],
    ids=["no-value", "ini-negative", "no-baseline", "unreadable", "no-metrics", "neg", "repeat"],
)
def test_bad_gate_options_stop_before_tests_run(
    pytester: pytest.Pytester, args: list[str], ini: str, message: str
) -> None:
    """Malformed values, a baseline that cannot be read or has no scores, and a tolerance
    without a baseline are usage errors before any test runs."""
    pytester.makepyfile("def test_a():\n    print('RAN')\n")
    pytester.runpytest("-p", "qbench", "--qbench-json=plain.json")
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("-p", "qbench", "-s", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "RAN" not in result.stdout.str()


# --- --qbench-baseline ---------------------------------------------------------------------------

BASE = [round(0.3 + 0.06 * i, 2) for i in range(10)]
NOISE = [0.05, -0.04, 0.03, -0.05, 0.02, -0.03, 0.04, -0.02, 0.01, -0.03]

BASELINE_SUITE = """
    import os

    import pytest

    BASE = {base}
    NOISE = {noise}

    @pytest.mark.parametrize("i", range(10))
    def test_case(qbench, i):
        mode = os.environ.get("AGENT_MODE", "base")
        score = BASE[i] + (NOISE[i] if mode == "noise" else 0.0) - (0.15 if mode == "drop" else 0.0)
        qbench.record("answer")
        if mode == "error" and i < 4:  # a replayed judge with no verdict for this answer
            qbench.add("quality", None, error=f"no recorded verdict for answer {{i}}")
            return
        qbench.add("quality", round(score, 4), threshold=float(os.environ.get("MIN", "0")))
"""


@pytest.fixture
def baseline(pytester: pytest.Pytester, run_qbench: RunQBench) -> Path:
    """A suite of 10 agent cases and the report of its baseline run (threshold 0.3)."""
    pytester.makepyfile(test_cases=BASELINE_SUITE.format(base=BASE, noise=NOISE))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MIN", "0.3")
        first = run_qbench("--qbench-run-id=base", run_dir="base")
    first.result.assert_outcomes(passed=10)
    path = pytester.path / "baseline.json"
    shutil.copy(first.run_dir / "report.json", path)
    return path


def test_baseline_noise_is_not_a_regression(
    baseline: Path, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scores that move up and down around the baseline (mean drop 0.002) pass the gate: the
    interval holds 0, so the drop is noise, even with no tolerance at all."""
    monkeypatch.setenv("AGENT_MODE", "noise")
    monkeypatch.setenv("MIN", "0.3")
    run = run_qbench(f"--qbench-baseline={baseline}", "--qbench-run-id=noise", run_dir="noise")
    assert run.result.ret == pytest.ExitCode.OK
    (gate,) = run.report.gates
    assert (gate.kind, gate.name, gate.passed, gate.n) == ("baseline", "quality", True, 10)
    assert gate.value == pytest.approx(-sum(NOISE) / 10)
    assert gate.ci_low is not None and gate.ci_high is not None
    assert gate.ci_low < 0 < gate.ci_high
    assert gate.newly_failing == []
    run.result.stdout.fnmatch_lines(["qbench: baseline gate quality: mean 0.570 -> 0.568, *noise"])


def test_baseline_real_drop_fails_and_lists_new_failures(
    baseline: Path, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every case 0.15 lower: the interval excludes 0 and the drop exceeds the tolerance, so the
    run fails; the cases that now miss their threshold are listed."""
    monkeypatch.setenv("AGENT_MODE", "drop")
    monkeypatch.setenv("MIN", "0.3")
    run = run_qbench(
        f"--qbench-baseline={baseline}",
        "--qbench-max-regression=0.1",
        "--qbench-digest=digest.json",
        "--qbench-run-id=drop",
        run_dir="drop",
    )
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert_summary_matches_pytest(run)
    (gate,) = run.report.gates
    assert gate.passed is False
    assert gate.value == pytest.approx(0.15)
    assert gate.ci_low == pytest.approx(0.15) == gate.ci_high  # the same drop everywhere
    expected = [f"test_cases.py::test_case[{i}]" for i in (0, 1, 2)]
    assert gate.newly_failing == expected
    run.result.stdout.fnmatch_lines(
        [
            "qbench: baseline gate quality: mean 0.570 -> 0.420, a drop of 0.150 (95% CI 0.150 "
            "to 0.150 over 10 tests in both runs): more than the 0.1 allowed",
            f"qbench:   from pass to fail: {', '.join(expected)}",
        ]
    )
    assert "| baseline quality | ❌ failed |" in run.markdown
    assert "from pass to fail against the baseline (3)" in run.markdown
    digest = json.loads(Path("digest.json").read_text(encoding="utf-8"))
    assert any(
        s.startswith("Metric quality regressed against the baseline")
        and s.endswith(f"start with {expected[0]}, which passed in the baseline")
        for s in digest["next_steps"]
    )


def test_baseline_errored_tests_are_told_apart(
    baseline: Path, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(issue 11.10) Tests whose metric errored (no score) are not "from pass to fail": the gate
    names them, with the error, on a line of their own."""
    monkeypatch.setenv("AGENT_MODE", "error")
    monkeypatch.setenv("MIN", "0.3")
    run = run_qbench(f"--qbench-baseline={baseline}", "--qbench-run-id=err", run_dir="err")
    assert run.result.ret == pytest.ExitCode.OK
    (gate,) = run.report.gates
    assert (gate.passed, gate.n, gate.newly_failing) == (True, 6, [])
    assert gate.detail.endswith(
        "no drop; errored in this run, so left out: test_cases.py::test_case[0] (no recorded "
        "verdict for answer 0), test_cases.py::test_case[1] (no recorded verdict for answer 1), "
        "test_cases.py::test_case[2] (no recorded verdict for answer 2) (+1 more)"
    )
    lines = run.result.stdout.lines
    verdict = next(i for i, line in enumerate(lines) if "baseline gate quality" in line)
    assert lines[verdict].endswith("over 6 tests in both runs): no drop")
    assert lines[verdict + 1].startswith(
        "qbench:   errored in this run (no score, left out): test_cases.py::test_case[0] (no "
        "recorded verdict for answer 0), "
    )
    assert "from pass to fail" not in run.result.stdout.str()


def test_baseline_drop_within_the_tolerance_passes(
    baseline: Path, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real drop of 0.15 with --qbench-max-regression 0.2 (ini) passes, and says so."""
    monkeypatch.setenv("AGENT_MODE", "drop")
    Path("pytest.ini").write_text(
        f"[pytest]\nqbench_baseline = {baseline.name}\nqbench_max_regression = 0.2\n",
        encoding="utf-8",
    )
    run = run_qbench("--qbench-run-id=ini", run_dir="ini")
    assert run.result.ret == pytest.ExitCode.OK
    (gate,) = run.report.gates
    assert (gate.passed, gate.threshold) == (True, 0.2)
    assert gate.detail.endswith("within the 0.2 allowed")


def test_baseline_with_a_metric_missing_on_one_side(
    baseline: Path, pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A metric of the baseline that this run did not score cannot be decided: its gate fails
    the run, saying so (it failed nothing before); a metric new since the baseline has nothing
    to be compared with and fails nothing."""
    pytester.makepyfile(
        test_cases="""
        def test_other(qbench):
            qbench.record("x")
            qbench.add("style", 0.5)
        """
    )
    run = run_qbench(f"--qbench-baseline={baseline}", "--qbench-run-id=other", run_dir="other")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert [(g.name, g.passed, g.detail) for g in run.report.gates] == [
        (
            "quality",
            False,
            "no scores in this run; the gate cannot decide, so it fails; run the tests that "
            "score it, or give another baseline",
        ),
        (
            "style",
            None,
            "not in the baseline, so nothing to compare it with (new since the baseline)",
        ),
    ]


# --- --qbench-repeat ----------------------------------------------------------------------------

REPEATED = """
    import pytest

    def test_flaky(qbench, qbench_repeat):
        qbench.record("answer")
        qbench.add("quality", qbench_repeat / 5)
        assert qbench_repeat % 2 == 1

    @pytest.mark.parametrize("x", ["a"])
    def test_param(qbench, x):
        qbench.record(x)

    def test_plain():
        pass
"""


def test_repeat_runs_agent_tests_n_times(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """--qbench-repeat 5 runs each agent test 5 times (ids after the test's own), other tests
    once; pytest counts every run, and the report gives passes, pass@k and the mean scores."""
    pytester.makepyfile(REPEATED)
    (pytester.path / "agent.yaml").write_text(
        "agent: helper:agent\ntest_cases: [{name: case, input: hi}]\n", encoding="utf-8"
    )
    pytester.makepyfile(helper="def agent(question):\n    return 'hello'\n")
    pytester.makeini("[pytest]\npythonpath = .\n")
    run = run_qbench("--qbench-repeat=5", "-v")
    run.result.assert_outcomes(passed=14, failed=2)
    assert_summary_matches_pytest(run)
    run.result.stdout.fnmatch_lines(
        [
            "agent.yaml::case[[]repeat-3[]] PASSED*",
            "*test_repeat_runs_agent_tests_n_times.py::test_flaky[[]repeat-1[]] PASSED*",
            "*test_repeat_runs_agent_tests_n_times.py::test_param[[]a-repeat-5[]] PASSED*",
            "*test_plain PASSED*",
        ]
    )
    assert [r.repeat for r in run.report.results if "test_flaky" in r.nodeid] == [1, 2, 3, 4, 5]
    assert run.by_name("test_plain").repeat is None
    stats = {s.nodeid.rpartition("::")[2]: s for s in run.report.repeats}
    assert set(stats) == {"test_flaky", "test_param[a]", "case"}
    flaky = stats["test_flaky"]
    assert (flaky.runs, flaky.passed) == (5, 3)
    assert flaky.pass_at_k == [0.6, 0.9, 1.0, 1.0, 1.0]
    assert flaky.metric_means == {"quality": pytest.approx(0.6)}
    assert stats["case"].pass_at_k == [1.0] * 5
    assert "### Repeated tests" in run.markdown
    assert "| 3/5 | 0.60 | 0.60 · 0.90 · 1.00 · 1.00 · 1.00 | `quality` 0.600 |" in run.markdown


def test_repeat_under_xdist_equals_a_serial_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The same repeats, pass@k and gates with pytest-xdist."""
    pytest.importorskip("xdist")
    pytester.makepyfile(REPEATED)
    args = ("--qbench-repeat=3", "--qbench-metric-min=quality=0.1")
    serial = run_qbench(*args, "--qbench-run-id=serial", run_dir="serial")
    parallel = run_qbench(
        *args, "-p", "xdist", "-n", "2", "--qbench-run-id=x", subprocess=True, run_dir="x"
    )
    assert_summary_matches_pytest(parallel)
    assert sorted(parallel.report.repeats, key=lambda s: s.nodeid) == sorted(
        serial.report.repeats, key=lambda s: s.nodeid
    )
    assert parallel.report.gates == serial.report.gates


def test_coverage_gate_is_recorded_with_the_metric_gates(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """--qbench-cov-fail-under's verdict is a GateResult too, beside a metric gate."""
    pytester.makepyfile(
        mod="def used():\n    return 1\n\n\ndef unused():\n    return 2\n",
        test_mod=(
            "from mod import used\n\n\ndef test_used(qbench):\n"
            "    qbench.record('x')\n    qbench.add('quality', 0.9)\n    assert used() == 1\n"
        ),
    )
    pytester.makeini("[pytest]\npythonpath = .\n")
    run = run_qbench(
        "--qbench-cov=mod", "--qbench-cov-fail-under=90", "--qbench-metric-min=quality=0.5"
    )
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    gates = {g.kind: g for g in run.report.gates}
    assert set(gates) == {"coverage", "metric_min"}
    coverage = gates["coverage"]
    assert (coverage.name, coverage.passed, coverage.threshold) == ("coverage", False, 90.0)
    assert coverage.value == pytest.approx(75.0)
    assert coverage.detail == "coverage 75.00% is below the required 90%"
    assert gates["metric_min"].passed is True
    assert "**❌ Not green:** coverage gate failed: coverage 75.00% is below the required 90%" in (
        run.markdown
    )


def test_baseline_with_one_test_fails_any_drop_over_the_allowed() -> None:
    """One test scored in both runs cannot tell a drop from noise: any drop over the allowed
    fails (it passed before, "too few to tell"), none passes, and no test in both fails."""
    from fractions import Fraction

    from pytest_qbench.report.gates.verdicts import CaseScore
    from pytest_qbench.report.gates.verdicts import baseline_gate

    def one(test: str, score: Fraction) -> dict[str, CaseScore]:
        return {test: CaseScore(total=score, count=1)}

    before = one("t.py::a", Fraction(9, 10))
    dropped = baseline_gate("quality", before, one("t.py::a", Fraction(5, 10)), 0.05)
    assert (dropped["passed"], dropped["n"]) == (False, 1)
    assert dropped["detail"] == (
        "mean 0.900 -> 0.500, a drop of 0.400 over 1 test in both runs (too few to tell a drop "
        "from noise, so any drop over the allowed fails): more than the 0.05 allowed"
    )
    same = baseline_gate("quality", before, before, 0.05)
    assert same["passed"] is True and same["detail"].endswith("within the 0.05 allowed")
    apart = baseline_gate("quality", before, one("t.py::b", Fraction(9, 10)), 0.05)
    assert apart["passed"] is False
    assert apart["detail"].startswith("no test scored it in both runs; the gate cannot decide")


@pytest.mark.parametrize("returncode", [0, 5])
def test_metric_min_is_judged_when_a_test_ends_the_session(
    pytester: pytest.Pytester, run_qbench: RunQBench, returncode: int
) -> None:
    """A test ending the session with ``pytest.exit(returncode=0)`` (or 5) left a configured
    metric gate unjudged, so a mean below its minimum kept exit status 0 (trial11, beside the
    coverage gate's same fault). The gate is judged on the scores recorded before the exit."""
    pytester.makepyfile(
        SCORED
        + f"""
    def test_zz_enough():
        pytest.exit("enough", returncode={returncode})
"""
    )
    run = run_qbench("--qbench-metric-min", "quality=0.8")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    (gate,) = run.report.gates
    assert (gate.kind, gate.passed, gate.n) == ("metric_min", False, 3)
    assert run.report.run.exit_code == 1
