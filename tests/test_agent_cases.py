"""Agent case files (``agent.yaml``): collected as pytest items, ``qbench_cases`` for
parametrize, file inputs, the agent's contract, and every error shape (issue 4)."""

from __future__ import annotations

import fnmatch
import json
import sys
import textwrap

import pytest

from conftest import QBenchRun
from conftest import RunQBench
from conftest import assert_summary_matches_pytest


AGENT = """
    def answer(question, files):
        if "France" in question:
            return {"response": "Paris", "tool_calls": ["search"], "tokens": 12, "cost": 0.01}
        if files:
            return "Notes: " + " ".join(text.strip() for text in files.values())
        return "I do not know"

    def input_only(question):
        return "Paris"

    class Answer:
        def __init__(self, response, tool_calls):
            self.response = response
            self.tool_calls = tool_calls

    def as_object(question, files):
        return Answer("Paris", ["search"])

    async def as_coroutine(question, files):
        return {"response": "Paris", "latency_ms": 5}
"""

CASES = """
    agent: my_agent:answer
    evaluations:
      metrics:
        - metric: token_f1
          threshold: 0.5
    test_cases:
      - name: capital
        input: What is the capital of France?
        ground_truth: Paris
        expected_tools: [search]
      - name: notes
        input: Summarise the notes
        ground_truth: hello notes
        files:
          - path: data/notes.txt
            type: text
          - path: data/table.csv
      - name: unknown
        input: Who wrote it?
        ground_truth: Bob
        evaluations:
          - token_f1
          - {metric: exact_match, threshold: 1}
"""


@pytest.fixture
def agent_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with an agent module, two text files and ``agent.yaml``."""
    pytester.makepyfile(my_agent=AGENT)
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    (pytester.path / "data" / "table.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    write(pytester, "agent.yaml", CASES)
    return pytester


def write(pytester: pytest.Pytester, name: str, text: str) -> None:
    (pytester.path / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def test_cases_run_as_items(agent_project: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Each case is a test named after it, on its line of the file; the agent's result, the
    case's input, ground truth, expected tools and metrics land in the report, and the
    summary equals pytest's."""
    run = run_qbench("-v")
    run.result.stdout.fnmatch_lines(["agent.yaml::capital PASSED*", "agent.yaml::unknown FAILED*"])
    run.result.assert_outcomes(passed=2, failed=1)
    assert_summary_matches_pytest(run)
    capital = run.by_name("::capital")
    assert (capital.file, capital.line, capital.test_name) == ("agent.yaml", 7, "capital")
    assert (capital.agent_response, capital.ground_truth) == ("Paris", "Paris")
    assert capital.test_input == "What is the capital of France?"
    assert (capital.tool_calls, capital.expected_tools, capital.tools_matched) == (
        ["search"],
        ["search"],
        True,
    )
    assert [(m.metric_name, m.score, m.threshold) for m in capital.metric_results] == [
        ("token_f1", 1.0, 0.5)
    ]
    assert "qbench" in capital.markers
    notes = run.by_name("::notes")
    assert notes.agent_response == "Notes: hello notes a,b\n1,2"
    unknown = run.by_name("::unknown")
    assert [m.metric_name for m in unknown.metric_results] == ["token_f1", "exact_match"]
    assert unknown.failure is not None and unknown.failure.error_type == "MetricFailure"
    assert "metric exact_match: score 0.00 < threshold 1.00" in unknown.failure.error_message


def test_agent_receives_input_and_file_texts(pytester: pytest.Pytester) -> None:
    """The agent gets the input and a dict of each file's text by its path as written, in
    order; txt, md, csv and json files are read as text (json is not parsed)."""
    pytester.makepyfile(
        spy="""
        import json

        def agent(question, files):
            return json.dumps({"q": question, "files": list(files.items())})
        """
    )
    for name, text in [("a.txt", "t"), ("b.md", "# m"), ("c.csv", "x,y"), ("d.json", '{"k": 1}')]:
        (pytester.path / name).write_text(text, encoding="utf-8")
    write(
        pytester,
        "agent.yaml",
        """
        agent: spy:agent
        test_cases:
          - name: files
            input: Read them
            files: [a.txt, {path: b.md, type: markdown}, {path: c.csv, type: csv}, d.json]
        """,
    )
    result = pytester.runpytest("-p", "qbench")
    result.assert_outcomes(passed=1)
    (report,) = pytester.path.glob(".qbench/runs/*/report.json")
    (test,) = json.loads(report.read_text(encoding="utf-8"))["results"]
    assert json.loads(test["agent_response"]) == {
        "q": "Read them",
        "files": [["a.txt", "t"], ["b.md", "# m"], ["c.csv", "x,y"], ["d.json", '{"k": 1}']],
    }


@pytest.mark.parametrize(
    ("agent", "response", "latency"),
    [("input_only", "Paris", None), ("as_object", "Paris", None), ("as_coroutine", "Paris", 5.0)],
)
def test_agent_shapes(
    agent_project: pytest.Pytester,
    run_qbench: RunQBench,
    agent: str,
    response: str,
    latency: float | None,
) -> None:
    """One-argument agents get the input only; an object with ``response`` and an async agent
    work; latency_ms is the agent's own, else measured."""
    write(
        agent_project,
        "agent.yaml",
        f"""
        agent: my_agent:{agent}
        test_cases:
          - {{name: one, input: "Capital of France?", ground_truth: Paris}}
        """,
    )
    run = run_qbench()
    run.result.assert_outcomes(passed=1)
    assert run.by_name("::one").agent_response == response
    if agent == "as_object":
        assert run.by_name("::one").tool_calls == ["search"]


def test_case_files_leave_sys_path_unchanged(agent_project: pytest.Pytester) -> None:
    """issue 10: an in-process run that collected a case file gives sys.path back unchanged."""
    code = (  # pytester puts the project on PYTHONPATH: off it, as for any installed project
        "import os, sys, pytest; sys.path.remove(os.getcwd()); before = list(sys.path); "
        "code = pytest.main(['-p', 'qbench', '-p', 'no:cacheprovider', '-q', 'agent.yaml']); "
        "print('EXIT', int(code), 'ADDED', *[p for p in sys.path if p not in before], "
        "'SAME', sys.path == before)"
    )
    result = agent_project.run(sys.executable, "-c", code)
    result.stdout.fnmatch_lines(["*1 failed, 2 passed*", "EXIT 1 ADDED SAME True"])


def test_agent_from_ini_and_other_file_names(
    agent_project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """ini qbench_agent names the agent of files that name none; ``*.agent.yaml`` is collected,
    other YAML files are not, and ini qbench_agent_files changes the patterns."""
    (agent_project.path / "agent.yaml").unlink()
    write(agent_project, "support.agent.yaml", "test_cases: [{name: a, input: 'France?'}]\n")
    write(agent_project, "config.yaml", "test_cases: [{name: b, input: nope}]\n")
    agent_project.makeini("[pytest]\nqbench_agent = my_agent:answer\n")
    run = run_qbench()
    run.result.assert_outcomes(passed=1)
    assert [r.nodeid for r in run.report.results] == ["support.agent.yaml::a"]
    agent_project.makeini(
        "[pytest]\nqbench_agent = my_agent:answer\nqbench_agent_files = config.yaml\n"
    )
    result = agent_project.runpytest("-p", "qbench", "--co", "-q")
    result.stdout.fnmatch_lines(["config.yaml::b", "1 test collected*"])


def test_qbench_cases_parametrize(agent_project: pytest.Pytester, run_qbench: RunQBench) -> None:
    """qbench_cases(path) gives one param per case (id = name), marked with the case's metrics,
    ground truth and expected tools; the path is relative to the calling file."""
    (agent_project.path / "agent.yaml").rename(agent_project.path / "cases.yaml")
    (agent_project.path / "tests").mkdir()
    (agent_project.path / "tests" / "test_cases.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from my_agent import answer
            from pytest_qbench import qbench_cases

            @pytest.mark.parametrize("case", qbench_cases("../cases.yaml"))
            def test_agent(case, qbench):
                result = answer(case.input, case.read_files())
                if isinstance(result, dict):
                    qbench.record(result["response"], input=case.input, tool_calls=result["tool_calls"])
                else:
                    qbench.record(result, input=case.input)
            """
        ),
        encoding="utf-8",
    )
    agent_project.makeini("[pytest]\npythonpath = .\n")
    run = run_qbench("tests")
    run.result.assert_outcomes(passed=2, failed=1)
    assert_summary_matches_pytest(run)
    capital = run.by_name("test_agent[capital]")
    assert capital.tools_matched is True and capital.ground_truth == "Paris"
    assert [m.metric_name for m in run.by_name("test_agent[unknown]").metric_results] == [
        "token_f1",
        "exact_match",
    ]


A = "agent: my_agent:answer\n"
BROKEN = [
    ("agent: [1\n", "agent.yaml:2: invalid YAML: expected ',' or ']', but got '<stream end>'"),
    ("- just a list\n", "agent.yaml: a case file must be a mapping with test_cases, given: list*"),
    (A, "agent.yaml: test_cases must be a non-empty list of cases, given: None*"),
    (
        A + "test_cases:\n  - name: a\n    input: hi\n    grund_truth: x\n",
        "agent.yaml:5: test_cases[0].grund_truth is not a known field; use evaluations, "
        "expected_tools, files, ground_truth, input, name",
    ),
    (
        A + "test_cases:\n  - {name: a, input: hi}\n  - {name: b}\n",
        "agent.yaml:4: test_cases[1].input must be a non-empty text*",
    ),
    (
        A + "test_cases:\n  - {name: a, input: hi}\n  - {name: a, input: ho}\n",
        "agent.yaml:4: test_cases[1].name 'a' is already the name of test_cases[0]*",
    ),
    (
        A + "test_cases:\n  - {name: a, input: hi}\n  - {name: b, input: x}\n  - name: c\n"
        "    input: y\n    evaluations:\n      - metric: token_f1\n        threshold: high\n",
        "agent.yaml:9: test_cases[2].evaluations[0].threshold must be a number from 0 to 1, "
        "given: 'high'; e.g. 0.7",
    ),
    (
        A + "evaluations:\n  metrics: [token_f2]\ntest_cases: [{name: a, input: hi}]\n",
        "agent.yaml:3: evaluations.metrics[0]: unknown metric 'token_f2'*",
    ),
    (
        A + "test_cases:\n  - name: a\n    input: hi\n    expected_tools: [search, 3]\n",
        "agent.yaml:5: test_cases[0].expected_tools[1]: expected a tool name*",
    ),
    (
        A
        + "test_cases:\n  - name: a\n    input: hi\n    files:\n      - {path: c.png, type: image}\n",
        "agent.yaml:6: test_cases[0].files[0].type c.png has type image; qbench passes text "
        "files only (txt, md, csv, json)*",
    ),
    (
        A + "test_cases:\n  - name: a\n    input: hi\n    files: [report.pdf]\n",
        "agent.yaml:5: test_cases[0].files[0] report.pdf: unknown file type .pdf; qbench passes "
        "text files only*",
    ),
    (
        A + "test_cases:\n  - name: a\n    input: hi\n    files: [missing.txt]\n",
        "agent.yaml:5: test_cases[0].files[0].path missing.txt does not exist*",
    ),
    (
        A + "test_cases:\n  - name: a\n    input: hi\n    files: [{url: 'https://x/y.txt'}]\n",
        "agent.yaml:5: test_cases[0].files[0].url is not read: qbench never reaches the network*",
    ),
    (
        "test_cases: [{name: a, input: hi}]\n",
        "agent.yaml: no agent to run the cases: add 'agent: module:function' to the file, or "
        "set ini qbench_agent = module:function",
    ),
    (
        "agent: my_agent\ntest_cases: [{name: a, input: hi}]\n",
        "agent.yaml:1: agent must be 'module:function', given: 'my_agent'*",
    ),
    (
        "agent: no_such_module:f\ntest_cases: [{name: a, input: hi}]\n",
        "agent.yaml:1: agent 'no_such_module:f': cannot import no_such_module: "
        "ModuleNotFoundError*",
    ),
    (
        "agent: my_agent:nope\ntest_cases: [{name: a, input: hi}]\n",
        "agent.yaml:1: agent 'my_agent:nope': my_agent has no attribute nope",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BROKEN, ids=range(len(BROKEN)))
def test_invalid_case_files_are_collection_errors(
    agent_project: pytest.Pytester, run_qbench: RunQBench, text: str, expected: str
) -> None:
    """Invalid YAML and every schema violation is a collection error naming the file, the line,
    the field path and the problem, without a traceback; the report keeps it."""
    (agent_project.path / "agent.yaml").write_text(text, encoding="utf-8")
    run = run_qbench()
    assert run.result.ret == pytest.ExitCode.INTERRUPTED
    run.result.stdout.fnmatch_lines(["*ERROR collecting agent.yaml*"])
    lines = run.result.stdout.lines
    assert any(fnmatch.fnmatchcase(line, expected.replace("[", "[[]")) for line in lines), lines
    assert "Traceback" not in run.result.stdout.str()
    assert [(e.file, e.severity) for e in run.report.collection_errors] == [("agent.yaml", "error")]


def test_qbench_cases_error_names_the_file(
    agent_project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An invalid file given to qbench_cases is the test module's collection error, naming the
    file, the field and the problem."""
    write(agent_project, "bad.yaml", "test_cases:\n  - {name: a, input: ''}\n")
    agent_project.makepyfile(
        test_bad="""
        import pytest
        from pytest_qbench import qbench_cases

        @pytest.mark.parametrize("case", qbench_cases("bad.yaml"))
        def test_agent(case, qbench):
            pass
        """
    )
    result = agent_project.runpytest("-p", "qbench", "test_bad.py")
    result.stdout.fnmatch_lines(
        ["*AgentFileError: bad.yaml:2: test_cases[[]0].input must be a non-empty text*"]
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "agent_cases.py" not in result.stdout.str()  # no traceback through qbench


def test_unreadable_file_and_bad_results_fail_the_case(
    agent_project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A file that is not UTF-8, an agent returning None, or a mapping without response fails
    the case with a message naming it."""
    (agent_project.path / "data" / "bin.txt").write_bytes(b"\xff\xfe\x00")
    agent_project.makepyfile(
        odd="""
        def none(question, files):
            return None

        def no_response(question, files):
            return {"text": "x"}

        def bad_tokens(question, files):
            return {"response": "x", "tokens": -1}
        """
    )
    write(
        agent_project,
        "agent.yaml",
        """
        agent: my_agent:answer
        test_cases:
          - {name: binary, input: read, files: [data/bin.txt]}
        """,
    )
    for name in ("none", "no_response", "bad_tokens"):
        write(
            agent_project,
            f"{name}.agent.yaml",
            f"agent: odd:{name}\ntest_cases: [{{name: {name}, input: hi}}]\n",
        )
    run = run_qbench()
    run.result.assert_outcomes(failed=4)
    messages = {r.test_name: r.failure.error_message for r in run.report.results if r.failure}
    assert "cannot read file input data/bin.txt (text)" in messages["binary"]
    assert messages["none"].startswith("the agent returned None")
    assert "without 'response'" in messages["no_response"]
    assert messages["bad_tokens"].startswith("the agent's result for case 'bad_tokens': tokens")


def test_case_files_under_xdist_equal_a_serial_run(
    agent_project: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Case items give the same results and metric statistics with pytest-xdist."""
    pytest.importorskip("xdist")
    serial = run_qbench("--qbench-run-id=serial", run_dir="serial")
    parallel = run_qbench(
        "-p", "xdist", "-n", "2", "--qbench-run-id=xdist", subprocess=True, run_dir="xdist"
    )
    assert_summary_matches_pytest(parallel)

    def facts(run: QBenchRun) -> list[tuple[str, str, str | None, list[float | None]]]:
        return sorted(
            (r.nodeid, r.outcome, r.agent_response, [m.score for m in r.metric_results])
            for r in run.report.results
        )

    assert facts(parallel) == facts(serial)
    assert parallel.report.summary.metric_stats == serial.report.summary.metric_stats


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["serial", "xdist"])
def test_case_failure_is_short_and_useful(
    agent_project: pytest.Pytester, workers: list[str]
) -> None:
    """(issue 11.9) A failing case shows its failing checks with scores and thresholds, the
    input, the response and the ground truth, at the case's line, with no hidden-traceback
    note; the same under xdist."""
    if workers:
        pytest.importorskip("xdist")
    result = agent_project.runpytest_subprocess("-p", "qbench", *workers)
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    start = text.index("E   2 qbench checks failed:")
    assert text[start:].splitlines()[:8] == [
        "E   2 qbench checks failed:",
        "E     metric token_f1: score 0.00 < threshold 0.50",
        "E     metric exact_match: score 0.00 < threshold 1.00",
        "E   input:        Who wrote it?",
        "E   response:     I do not know",
        "E   ground truth: Bob",
        "",
        "agent.yaml:18: MetricFailure",  # the case's line
    ]
    assert "traceback entries are hidden" not in text
    assert "pytest_qbench.plugin.agent.state.MetricFailure" not in text
    result.stdout.fnmatch_lines(
        ["FAILED agent.yaml::unknown - MetricFailure: 2 qbench checks failed: metric to*"]
    )
