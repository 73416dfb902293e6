"""``qbench generate`` (issue 14): real generation runs on a small project of our own making
(tests/data/generate/textkit.py.txt): ``qbench generate`` in the test's process, its child pytest
runs and probes real subprocesses, with the coverage read back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from child_pytest import run_child
from cli_here import qbench_here
from generation_setup import quick_env
from shared_setup import shared_dir

from pytest_qbench.generate.models import GenerateResult
from pytest_qbench.generate.pycache import ENV
from pytest_qbench.generate.pycache import mirrored


pytestmark = pytest.mark.generation
DATA = Path(__file__).parent / "data" / "generate"
TIMEOUT = 600
"""--test-timeout of the runs whose code never hangs: a safety net no test that returns reaches,
however loaded the machine, so what is kept depends on what the generator decided, not on how
fast the machine was (the hang is tested apart, with a small timeout of the test alone)."""
BUDGET = "3600"
"""--timeout (the whole generation's budget) of the runs that do not test the budget."""


def qbench(
    cwd: Path, *args: str, plugins: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``qbench ARGS`` in ``cwd``, in this process (``qbench_here``: what it writes and reports
    is the subject, its own process is not; its children are real); its child pytest runs load
    qbench alone (``quick_env``), or every installed plugin when ``plugins`` (the user's
    default); ``env`` added to their environment."""
    base = dict(os.environ) if plugins else quick_env()
    done = qbench_here(*args, cwd=cwd, env={**base, **(env or {})})
    return subprocess.CompletedProcess(["qbench", *args], done.ret, done.out, done.err)


def make_project(root: Path, spin: bool = True) -> Path:
    """textkit.py, covered a little by tests/test_textkit.py; without its hanging ``spin`` when
    ``spin`` is false."""
    (root / "tests").mkdir(parents=True)
    source = (DATA / "textkit.py.txt").read_text(encoding="utf-8")
    if not spin:
        source = source[: source.index("def spin")] + source[source.index("class Counter") :]
    (root / "textkit.py").write_text(source, encoding="utf-8")
    shutil.copy(DATA / "test_textkit.py.txt", root / "tests" / "test_textkit.py")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    return root


STORAGE_TEST = """\
import json
import os
import sys
from pathlib import Path


def test_notes_hypothesis_storage():
    log = os.environ.get("QBENCH_TEST_STORAGE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY", "unset") + "\\n")


def test_notes_byte_code():
    log = os.environ.get("QBENCH_TEST_PYC_LOG")
    if log:
        prefix = sys.pycache_prefix
        here = Path(__file__).parent
        cache = Path(prefix, *here.parts[1:]) if prefix else here / "__pycache__"
        rewritten = sorted(p.name for p in cache.glob("test_storage.*-pytest-*.pyc"))
        found = Path.cwd().rglob("*")
        beside = [str(p) for p in found if p.name == "__pycache__" or p.suffix == ".pyc"]
        line = {"prefix": prefix, "rewritten": rewritten, "beside": beside}
        line["cwd"] = str(Path.cwd())
        coverage = sys.modules.get("coverage")
        line["measured"] = bool(coverage and coverage.Coverage.current())
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\\n")
"""
"""Tests of the project's suite that note, when asked, the Hypothesis storage directory of the
pytest run they are in, and where its byte-code goes: the byte-code cache's directory
(``sys.pycache_prefix``), the assertion-rewritten byte-code of this very module found there,
any ``__pycache__`` or ``.pyc`` in the run's working directory (the project's copy), that
directory, and whether coverage measures the run."""


def generate(root: Path) -> None:
    """The project in ``root`` and one ``qbench generate textkit.py --json`` run in it, its
    outcome kept in ``root/outcome.json`` (the hanging ``spin`` is left out: a hang is the one
    thing a timeout decides, tested apart). The user's ``HYPOTHESIS_STORAGE_DIRECTORY`` is
    ``root/user-hypothesis``, and a test of the suite notes each run's in ``root/storage.log``,
    and where its byte-code went in ``root/pyc.log``. ``PYTHONDONTWRITEBYTECODE`` is unset (as
    for most users): ``qbench generate`` alone keeps byte-code out of the projects; what it left
    in the project is kept in the outcome's ``pyc``."""
    make_project(root, spin=False)
    (root / "tests" / "test_storage.py").write_text(STORAGE_TEST, encoding="utf-8")
    storage = {"HYPOTHESIS_STORAGE_DIRECTORY": str(root / "user-hypothesis")}
    storage["QBENCH_TEST_STORAGE_LOG"] = str(root / "storage.log")
    storage["QBENCH_TEST_PYC_LOG"] = str(root / "pyc.log")
    storage["PYTHONDONTWRITEBYTECODE"] = ""  # empty: unset, for Python
    done = qbench(
        root,
        "generate",
        "textkit.py",
        "--json",
        "--test-timeout",
        str(TIMEOUT),
        "--timeout",
        BUDGET,
        "--max-examples",
        "20",
        "--coverage-goal",
        "80",
        env=storage,
    )
    outcome = {"args": done.args, "returncode": done.returncode}
    outcome |= {"stdout": done.stdout, "stderr": done.stderr}
    outcome["pyc"] = [
        str(p) for p in root.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"
    ]
    (root / "outcome.json").write_text(json.dumps(outcome), encoding="utf-8")


class Generated:
    """The generation run shared by the tests of this module (and by every xdist worker)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        outcome = json.loads((root / "outcome.json").read_text(encoding="utf-8"))
        self.pyc: list[str] = outcome.pop("pyc")
        """The byte-code the generation left in the project."""
        self.done = subprocess.CompletedProcess[str](**outcome)
        self.result = GenerateResult.model_validate_json(self.done.stdout)
        self.out = self.root / "tests" / "generated"


SHARED = pytest.mark.xdist_group("test_generate.generated")
"""The tests of the shared run: one worker would run them under ``--dist loadgroup`` (when
pytest-xdist can group); the generation is made once per run in any case (``shared_dir``)."""


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    """The shared generation run."""
    return Generated(shared_dir(tmp_path_factory, "test_generate.generated", generate))


def measure(root: Path, module: str = "textkit.py") -> float:
    """``module``'s coverage (textkit.py by default) by every test of the project, measured by
    qbench in a run of our own (report.json), independently of qbench generate."""
    flags = ("-q", "-p", "no:cacheprovider", "--qbench-cov=.", "--qbench-dir=.measure")
    run_child(root, *flags, "tests", run_id="m", timeout=1800)
    report = json.loads((root / ".measure" / "runs" / "m" / "report.json").read_text("utf-8"))
    (row,) = [f for f in report["coverage"]["files"] if f["path"] == module]
    return float(row["percent"])


@SHARED
def test_json_output_validates_and_coverage_rises_as_measured(generated: Generated) -> None:
    """issue 14 item 2: the output has the seed's shape; coverage_achieved is what a run of the
    existing tests plus the written ones measures, and is above the coverage before."""
    result = generated.result
    assert generated.done.returncode == 0, generated.done.stderr
    assert result.tokens_used == 0 and result.auto_generated.generation_method.llm == 0
    before = result.coverage_before
    assert before == pytest.approx(measure_without_generated(generated.root), abs=0.01)
    assert result.auto_generated.coverage_achieved > before + 20
    assert result.auto_generated.coverage_achieved == pytest.approx(
        measure(generated.root), abs=0.01
    )
    assert result.auto_generated.count >= 3
    methods = result.auto_generated.generation_method
    assert methods.hypothesis >= 1 and methods.template >= 1
    assert result.success and result.goal_met
    assert result.coverage_gap.percentage_needed == 0


def measure_without_generated(root: Path) -> float:
    """The coverage of the existing tests alone, in a copy of the project without tests/generated."""
    copy = root.parent / (root.name + "-before")
    if not copy.exists():
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("generated", ".measure"))
    return measure(copy)


@SHARED
def test_written_files_pass_under_plain_pytest_with_a_header(generated: Generated) -> None:
    """issue 14 item 1: the kept tests pass under pytest without qbench, the findings xfail; each
    file says how to regenerate it."""
    files = sorted(generated.out.glob("*.py"))
    assert [f.name for f in files] == ["test_textkit_findings.py", "test_textkit_generated.py"]
    assert generated.result.auto_generated.files == [
        "tests/generated/test_textkit_generated.py",
        "tests/generated/test_textkit_findings.py",
    ]
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# Generated by qbench generate")
        at = lines.index("# Regenerate with:")
        assert lines[at + 1] == (
            "# qbench generate textkit.py --strategy hybrid --out tests/generated "
            "--coverage-goal 80"
        )
        assert max(map(len, lines[: at + 2])) <= 88  # the header, at ruff's default length
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:qbench",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rA",
            "tests/generated",
        ],
        cwd=generated.root,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout
    assert " 1 xfailed" in done.stdout and " failed" not in done.stdout


@SHARED
def test_a_real_bug_is_a_strict_xfail_with_its_falsifying_example(generated: Generated) -> None:
    """issue 14 item 1: ratio(a, 0) divides by zero: the finding is kept, never silently."""
    (finding,) = generated.result.findings
    assert finding.function == "ratio"
    assert "b=0" in finding.falsifying_example
    assert finding.error.startswith("ZeroDivisionError")
    text = (generated.out / "test_textkit_findings.py").read_text(encoding="utf-8")
    assert "strict=True" in text and "ZeroDivisionError" in text
    assert f"@example({finding.falsifying_example})" in text
    assert generated.result.findings_file == "tests/generated/test_textkit_findings.py"


@SHARED
def test_needs_llm_review_lists_the_uninferrable_function_with_a_reason(
    generated: Generated,
) -> None:
    """issue 14 item 2: fetch takes a Client nothing can build: it needs a person, with why,
    its signature and its complexity (a hung function is listed too: tested with the hang)."""
    review = {item.function: item for item in generated.result.needs_llm_review}
    fetch = review["fetch"]
    assert "could not be inferred" in fetch.reason and "client" in fetch.reason.lower()
    assert fetch.context.startswith("def fetch(client: Client, path: str) -> str:")
    assert fetch.file == "textkit.py" and fetch.line == 39 and fetch.complexity_score == 1
    assert "grade" not in review and "encode" not in review


@SHARED
def test_every_child_pytest_shares_one_hypothesis_storage_in_the_scratch(
    generated: Generated,
) -> None:
    """The suite's runs in the project's copy (before, and with the kept tests in a random
    order) use the generation's own Hypothesis storage, as the candidates' runs do: Hypothesis's
    Unicode tables, seconds of CPU to build, are built once a generation, not again in every run
    of a copy that has no ``.hypothesis``; and the user's storage directory, outside the copy,
    is never written to."""
    noted = (generated.root / "storage.log").read_text(encoding="utf-8").splitlines()
    assert len(noted) >= 2, noted
    assert len(set(noted)) == 1, noted
    (storage,) = set(noted)
    assert Path(storage).name == "hypothesis", storage
    assert not Path(storage).is_relative_to(generated.root), storage
    assert not (generated.root / "user-hypothesis").exists()


@SHARED
def test_children_keep_byte_code_in_the_shared_cache_less_the_scratchs_part(
    generated: Generated,
) -> None:
    """Byte-code is written (``PYTHONDONTWRITEBYTECODE`` unset), and every child keeps its own,
    pytest's assertion-rewritten modules included, in one cache shared between generations
    (``PYTHONPYCACHEPREFIX``: the test run's ``QBENCH_PYCACHE``, ``shared_pycache.py``), never
    in a ``__pycache__`` beside a source, in the project's copy or in the project. At the
    generation's end what it kept there for its scratch's files (the project's copy, the
    candidates: temporary paths) is removed, the rest (pytest's own modules) kept for the next
    generation."""
    noted = (generated.root / "pyc.log").read_text(encoding="utf-8").splitlines()
    lines = [json.loads(line) for line in noted]
    assert len(lines) >= 2, lines
    assert {line["prefix"] for line in lines} == {os.environ[ENV]}, lines
    prefix = Path(lines[0]["prefix"])
    assert all(line["rewritten"] and not line["beside"] for line in lines), lines
    assert generated.pyc == []
    scratches = {
        next(p for p in Path(line["cwd"]).parents if p.name.startswith("qbench-generate-"))
        for line in lines
    }
    assert len(scratches) == 1, lines
    (scratch,) = scratches
    assert not scratch.exists()
    assert not mirrored(prefix, scratch).exists(), sorted(mirrored(prefix, scratch).rglob("*"))
    assert list(mirrored(prefix, Path(pytest.__file__).parent).glob("__init__.*.pyc"))


@SHARED
def test_the_acceptance_run_with_the_suite_is_not_measured(generated: Generated) -> None:
    """The suite's run before generation measures coverage (the coverage before); its run with
    the kept tests in a random order is read for its outcomes alone, and is not measured:
    coverage's tracing there would cost CPU and tell the user nothing."""
    noted = (generated.root / "pyc.log").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["measured"] for line in noted] == [True, False], noted


COVERED = "def f(x: int) -> int:\n    return x + 1\n"
"""A module its project's tests cover whole: a generation of it runs the suite and writes
nothing (a few seconds)."""


@pytest.mark.parametrize("chosen", ["option", "off", "file in the way"])
def test_the_byte_code_cache_can_be_chosen_turned_off_and_falls_back(
    tmp_path: Path, chosen: str
) -> None:
    """``--pycache DIR`` is the children's byte-code cache whatever ``QBENCH_PYCACHE`` says,
    and keeps pytest's modules after the generation but not the scratch's part;
    ``QBENCH_PYCACHE=off`` keeps it in the generation's scratch, removed with it; a cache that
    cannot be created (a file in the way) is the scratch's too, with a note, and the generation
    succeeds. Never a ``__pycache__`` beside a source."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "ok.py").write_text(COVERED, encoding="utf-8")
    test_ok = "from ok import f\n\n\ndef test_f():\n    assert f(1) == 2\n"
    (project / "tests" / "test_ok.py").write_text(test_ok, encoding="utf-8")
    (project / "tests" / "test_storage.py").write_text(STORAGE_TEST, encoding="utf-8")
    (project / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("in the way", encoding="utf-8")
    given = {"option": tmp_path / "mine", "off": "off", "file in the way": tmp_path / "a-file"}
    env = {"QBENCH_TEST_PYC_LOG": str(tmp_path / "pyc.log"), "PYTHONDONTWRITEBYTECODE": ""}
    env[ENV] = str(tmp_path / "from-env")
    args = ["generate", "ok.py", "--json", "--strategy", "template"]
    if chosen == "option":
        args += ["--pycache", str(given[chosen])]
    else:
        env[ENV] = str(given[chosen])
    done = qbench(project, *args, env=env)
    result = GenerateResult.model_validate_json(done.stdout)
    assert done.returncode == 0 and result.success, result.problems
    lines = [json.loads(line) for line in (tmp_path / "pyc.log").read_text("utf-8").splitlines()]
    (prefix,) = {Path(line["prefix"]) for line in lines}
    assert all(line["rewritten"] and not line["beside"] for line in lines), lines
    assert not [p for p in project.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]
    assert not (tmp_path / "from-env").exists()
    notes = [p for p in result.problems if "byte-code cache" in p]
    if chosen == "option":
        assert prefix == tmp_path / "mine" and not notes, result.problems
        (cwd,) = {Path(line["cwd"]) for line in lines}
        scratch = next(p for p in cwd.parents if p.name.startswith("qbench-generate-"))
        assert not mirrored(prefix, scratch).exists(), sorted(prefix.rglob("*"))
        assert list(mirrored(prefix, Path(pytest.__file__).parent).glob("__init__.*.pyc"))
        return
    assert prefix.name == "pycache" and prefix.parent.name.startswith("qbench-generate-")
    assert not prefix.parent.exists()
    if chosen == "off":
        assert not notes, result.problems
    else:
        assert notes == [
            f"the byte-code cache {tmp_path / 'a-file'} cannot be used (File exists): this "
            "generation's children compiled into its scratch; give --pycache DIR (or set "
            "QBENCH_PYCACHE) to a writable directory, or --pycache off"
        ]
        assert (tmp_path / "a-file").read_text(encoding="utf-8") == "in the way"


HANGS = (
    "import time\n\n\n"
    "def spin(n: int) -> int:\n    while n > 1000:\n        time.sleep(1)\n    return n\n\n\n"
    "def half(n: int) -> int:\n    if n > 10:\n        return n // 2\n    return n\n"
)
"""spin(n > 1000) never returns; half always does. spin waits rather than spins: killed alike
at the timeout, it does not burn a core of the shared CI machine until then."""


HANG = 10
"""--test-timeout of the hang: each test's own time, counted inside its child from its set-up
(not the child's start, which a loaded machine slows), so half's twenty examples, a fraction
of a second of CPU, never reach it; spin sleeps until it is stopped."""


def test_a_hanging_test_is_dropped_within_the_timeout(tmp_path: Path) -> None:
    """issue 14 item 4: spin(n > 1000) never returns: its test is stopped after --test-timeout
    and dropped with a line saying so, spin needs a person, and the run goes on (half's test,
    verified in the same child, is kept)."""
    (tmp_path / "hangs.py").write_text(HANGS, encoding="utf-8")
    done = qbench(
        tmp_path,
        *("generate", "hangs.py", "--json", "--strategy", "hypothesis", "--timeout", BUDGET),
        *("--test-timeout", str(HANG), "--max-examples", "20"),
    )
    result = GenerateResult.model_validate_json(done.stdout)
    hung = [d for d in result.dropped if d.function == "spin"]
    assert [d.reason for d in hung] == [f"hung: stopped after {HANG}s (--test-timeout)"], hung
    assert any(line.startswith("hangs.spin: ") for line in result.problems)
    review = {item.function: item.reason for item in result.needs_llm_review}
    assert "hung" in review["spin"], review
    assert result.kept == 1 and "half" not in review, result.problems


@SHARED
def test_text_output_lists_coverage_kept_files_and_what_needs_a_human(
    generated: Generated,
) -> None:
    """The text output of the same result: coverage before -> after, files, findings, the
    review list."""
    from pytest_qbench.cli.generate import text_lines

    lines = text_lines(generated.result)
    result = generated.result
    assert lines[0] == (
        f"coverage of textkit.py: {result.coverage_before:.2f}% -> "
        f"{result.auto_generated.coverage_achieved:.2f}% (goal met)"
    )
    assert "  wrote tests/generated/test_textkit_generated.py" in lines
    assert "needs a human:" in lines
    assert any(line.startswith("  textkit.py:39 fetch (complexity 1)") for line in lines)


def test_a_file_not_written_by_qbench_is_never_overwritten(tmp_path: Path) -> None:
    """issue 14 item 1: a file of the same name without qbench's header stops the run before
    anything is generated, with a clear error, and stays as it was."""
    root = make_project(tmp_path)
    mine = root / "tests" / "generated" / "test_textkit_generated.py"
    mine.parent.mkdir()
    mine.write_text("def test_mine():\n    pass\n", encoding="utf-8")
    done = qbench_here("generate", "textkit.py", cwd=root)  # stops before any child starts
    assert done.ret == 1
    assert "was not written by qbench generate" in done.err
    assert "give another --out directory" in done.err
    assert mine.read_text(encoding="utf-8") == "def test_mine():\n    pass\n"


def test_a_target_that_cannot_be_imported_is_a_clear_line(tmp_path: Path) -> None:
    """issue 14 item 4: the import error is one line of the output, not a crash."""
    (tmp_path / "broken.py").write_text(
        "import os\n\nif 'DATABASE_URL' not in os.environ:\n"
        "    raise RuntimeError('needs a database')\n\n\n"
        "def f(x: int) -> int:\n    return x\n",
        encoding="utf-8",
    )
    done = qbench(tmp_path, "generate", "broken.py", "--test-timeout", str(TIMEOUT))
    assert done.returncode == 1, done.stderr
    assert "broken: cannot be imported: RuntimeError: needs a database" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert "coverage of broken.py: 0.00% -> 0.00%" in done.stdout
    assert (
        "  broken.py:7 f (complexity 1): its module cannot be imported: RuntimeError: needs a "
        "database" in done.stdout.splitlines()
    )


MANY = "import time\n\n\n" + "\n\n".join(
    f"def f{i}(x: int) -> int:\n    time.sleep(0.06)\n    if x > {i}:\n        return x - {i}\n"
    f"    return {i}"
    for i in range(40)
)
"""40 functions, each with a branch the ghostwriter's fuzz test reaches. Each call sleeps 60 ms
(under Hypothesis' 200 ms deadline), so that a candidate of 5 examples takes 0.3 s at least and
30 of them more than the 4 s budget however fast the machine: the untried functions do not
depend on its speed (on a quiet machine all 40 were once tried within the budget)."""


def test_the_budget_stops_new_candidates_and_lists_the_untried(tmp_path: Path) -> None:
    """issue 14 fix: --timeout is the budget of the whole generation. With 40 functions and 4 s
    the run stops starting candidates, still writes and measures what it kept, and lists the
    functions not tried (output line, not_tried, needs_llm_review); the goal (100) is not met,
    yet the generation succeeded: exit 0, as the seed's example."""
    (tmp_path / "many.py").write_text(MANY + "\n", encoding="utf-8")
    done = qbench(
        tmp_path,
        "generate",
        "many.py",
        "--json",
        "--strategy",
        "hypothesis",
        "--timeout",
        "4",
        "--test-timeout",
        "3",
        "--max-examples",
        "5",
        "--coverage-goal",
        "100",
    )
    assert done.returncode == 0, done.stderr
    result = GenerateResult.model_validate_json(done.stdout)
    assert result.success and not result.goal_met
    assert result.coverage_gap.percentage_needed > 0
    assert len(result.not_tried) >= 10
    (line,) = [p for p in result.problems if p.startswith("budget of 4 s reached: ")]
    assert f"{len(result.not_tried)} functions not tried: many.f" in line
    review = {item.function: item.reason for item in result.needs_llm_review}
    untried = result.not_tried[0].split(":")[1]
    assert "the budget of 4s (--timeout) was reached" in review[untried]
    assert result.auto_generated.coverage_achieved >= result.coverage_before


def test_unannotated_arguments_get_a_guessed_type_that_raises_coverage(tmp_path: Path) -> None:
    """issue 14 (fix): plainkit.py has no annotations; the argument types guessed from names
    (text, word, count, names_list, line, width) let Hypothesis and the templates call its
    functions, and each guess is said in the test file and in the output. Without the guess every
    function is "no annotation and no default" and nothing is generated."""
    root = tmp_path / "plain"
    (root / "tests").mkdir(parents=True)
    shutil.copy(DATA / "plainkit.py.txt", root / "plainkit.py")
    shutil.copy(DATA / "test_plainkit.py.txt", root / "tests" / "test_plainkit.py")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    done = qbench(
        root,
        "generate",
        "plainkit.py",
        "--json",
        "--test-timeout",
        str(TIMEOUT),
        "--timeout",
        BUDGET,
        "--max-examples",
        "20",
    )
    result = GenerateResult.model_validate_json(done.stdout)
    assert result.kept >= 3, result.problems
    assert result.auto_generated.coverage_achieved >= result.coverage_before + 40
    text = (root / "tests" / "generated" / "test_plainkit_generated.py").read_text("utf-8")
    assert "# argument types guessed from names: text: str\n" in text
    assert "count=st.integers(min_value=-10, max_value=100)" in text or "count=1" in text
    assert (
        "plainkit.shout: argument types guessed from names: text: str "
        "(review the tests that use them)"
    ) in result.problems
    assert "plainkit.describe: argument `thing` has no annotation and no default" in (
        result.problems
    )
    assert not result.findings, result.findings
    assert measure(root, "plainkit.py") == pytest.approx(
        result.auto_generated.coverage_achieved, abs=0.5
    )


def test_a_bad_option_value_is_a_usage_error(tmp_path: Path) -> None:
    """A refused option value exits 2 (a usage error), naming the option."""
    done = qbench_here("generate", "m.py", "--timeout", "0", cwd=tmp_path)
    assert done.ret == 2
    assert "--timeout input should be greater than 0" in done.err


def test_python_m_pytest_qbench_cli_runs_qbench(tmp_path: Path) -> None:
    """`python -m pytest_qbench.cli` is the qbench command too."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_qbench.cli", "generate", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "--test-timeout" in done.stdout


def test_a_missing_target_is_a_usage_error(tmp_path: Path) -> None:
    """A target that names nothing: exit 1 and the fix."""
    done = qbench_here("generate", "nowhere.mod", cwd=tmp_path)
    assert done.ret == 1
    assert "target 'nowhere.mod' not found" in done.err


def test_a_plain_qbench_run_does_not_import_hypothesis(pytester: pytest.Pytester) -> None:
    """issue 14: Hypothesis is the generate extra's; a pytest run with qbench (and coverage)
    never imports it. The conftest records sys.modules at the very end; the same check with a
    test that imports hypothesis shows that the check can fail."""
    pytester.makeconftest(
        """
        import sys

        def pytest_unconfigure(config):
            with open("modules.txt", "w") as out:
                out.write("\\n".join(sorted(sys.modules)))
        """
    )
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    flags = ("-p", "qbench", "-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    result = pytester.runpytest_subprocess(*flags, "--qbench-cov=.", "--qbench-dir=.q")
    assert result.ret == 0
    loaded = (pytester.path / "modules.txt").read_text(encoding="utf-8").split()
    assert "pytest_qbench.plugin" in loaded
    assert not [m for m in loaded if m == "hypothesis" or m.startswith("hypothesis.")]
    pytester.makepyfile(test_plain="import hypothesis\n\ndef test_ok():\n    assert True\n")
    assert pytester.runpytest_subprocess(*flags).ret == 0
    assert "hypothesis" in (pytester.path / "modules.txt").read_text(encoding="utf-8").split()


def test_missing_hypothesis_is_a_clear_install_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """--strategy hypothesis without Hypothesis installed: install the generate extra; hybrid
    goes on without it."""
    import importlib.util

    from pytest_qbench.generate.models import GenerateRequest
    from pytest_qbench.generate.run import strategies
    from pytest_qbench.generate.target import GenerateError

    monkeypatch.delenv("QBENCH_PYNGUIN_PYTHON", raising=False)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "hypothesis" else real(name, *a),
    )
    with pytest.raises(GenerateError, match=r"-m pip install 'hypothesis>=6.100'$"):
        strategies(GenerateRequest(target="m.py", strategy="hypothesis"))
    assert strategies(GenerateRequest(target="m.py", strategy="hybrid")) == ["template"]


@pytest.mark.skipif(
    not os.environ.get("QBENCH_PYNGUIN_PYTHON"),
    reason="needs QBENCH_PYNGUIN_PYTHON: a Python 3.10 with pynguin 0.48 installed",
)
def test_pynguin_tests_are_verified_and_kept(tmp_path: Path) -> None:
    """issue 14 item 1: --strategy pynguin runs Pynguin under its own Python, in its own process
    group, and its file is kept when it passes and adds coverage."""
    root = make_project(tmp_path)
    source = (root / "textkit.py").read_text(encoding="utf-8")
    start, end = source.index("def spin"), source.index("class Counter")
    (root / "textkit.py").write_text(source[:start] + source[end:], encoding="utf-8")
    done = qbench(
        root,
        "generate",
        "textkit.py",
        "--strategy",
        "pynguin",
        "--json",
        "--pynguin-seconds",
        "5",
        "--test-timeout",
        str(TIMEOUT),
    )
    result = GenerateResult.model_validate_json(done.stdout)
    assert result.auto_generated.generation_method.pynguin >= 1, result.problems
    assert result.auto_generated.coverage_achieved > result.coverage_before
    text = (root / "tests" / "generated" / "test_textkit_generated.py").read_text("utf-8")
    assert text.startswith("# Generated by qbench generate")


@pytest.mark.skipif(
    not os.environ.get("QBENCH_PYNGUIN_PYTHON"),
    reason="needs QBENCH_PYNGUIN_PYTHON: a Python 3.10 with pynguin 0.48 installed",
)
def test_hybrid_with_pynguin_keeps_what_hybrid_alone_keeps(tmp_path: Path) -> None:
    """issue 14 (fix): in hybrid, Pynguin runs last, on what is still uncovered, with the time
    that is left: asking for more Pynguin time than the budget has costs nothing that hypothesis
    and the templates kept (it used to run first, overrun the budget and leave 0 tests). The
    Python given is a wrapper that notes Pynguin's arguments: the search and assertion times
    it was given (60 s each asked) fit the 60 s budget, whatever the machine's speed."""
    results = {}
    calls = tmp_path / "pynguin-calls.txt"
    wrapper = tmp_path / "pynguin-python"
    given = os.environ["QBENCH_PYNGUIN_PYTHON"]
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{given}" "$@"\n')
    wrapper.chmod(0o755)
    for name, extra in (("alone", []), ("pynguin", ["--pynguin-seconds", "60"])):
        root = make_project(tmp_path / name)
        env = {k: v for k, v in quick_env().items() if k != "QBENCH_PYNGUIN_PYTHON"}
        pynguin = ["--pynguin-python", str(wrapper), *extra] if extra else []
        done = subprocess.run(
            [
                *(sys.executable, "-m", "pytest_qbench", "generate", "textkit.py", "--json"),
                *("--timeout", "60", "--test-timeout", str(TIMEOUT), "--max-examples", "20"),
                *pynguin,
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=env,
        )
        results[name] = GenerateResult.model_validate_json(done.stdout)
    alone, hybrid = results["alone"], results["pynguin"]
    assert alone.kept >= 1, alone.problems
    assert hybrid.kept >= alone.kept, hybrid.problems
    assert hybrid.auto_generated.coverage_achieved >= alone.auto_generated.coverage_achieved
    noted = calls.read_text() if calls.exists() else ""  # none: no budget was left for it
    runs = [line.split() for line in noted.splitlines() if "pynguin" in line]
    seconds = [
        int(run[run.index(option) + 1])
        for run in runs
        for option in ("--maximum-search-time", "--maximum-mutation-time")
        if option in run
    ]
    assert sum(seconds) < 60, runs
    pynguin_lines = [p for p in hybrid.problems if p.startswith("pynguin on")]
    assert hybrid.auto_generated.generation_method.pynguin >= 1 or pynguin_lines


def test_pynguin_without_its_python_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--strategy pynguin needs the Python 3.10 it runs under."""
    monkeypatch.delenv("QBENCH_PYNGUIN_PYTHON", raising=False)
    done = qbench_here(
        "generate", "textkit.py", "--strategy", "pynguin", cwd=make_project(tmp_path)
    )
    assert done.ret == 1
    assert "give --pynguin-python PATH or set QBENCH_PYNGUIN_PYTHON" in done.err


def python_without_hypothesis(root: Path) -> Path:
    """A virtual environment with every package of this one except Hypothesis (its site-packages
    entries linked), as a project's Python that lacks the generate extra."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run(
        [str(python), "-c", where], capture_output=True, text=True, check=True
    ).stdout.strip()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if "hypothesis" not in entry.name.lower():
            (Path(site) / entry.name).symlink_to(entry)
    return python


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_a_python_without_hypothesis_says_so_and_fails_when_nothing_is_kept(
    tmp_path: Path,
) -> None:
    """hybrid with a Python that lacks Hypothesis: the output says hypothesis did not run, why
    and the command that installs it; when nothing could be kept, the run failed (exit 1), not
    "success, 0 tests kept"."""
    python = python_without_hypothesis(tmp_path / "venv")
    root = tmp_path / "project"
    root.mkdir()
    (root / "opaque.py").write_text(
        "class Handle:\n    def __init__(self, raw):\n        self.raw = raw\n\n\n"
        "def name_of(handle: Handle) -> str:\n    if handle.raw:\n        return str(handle.raw)\n"
        "    return ''\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(python), "-m", "pytest_qbench", "generate", "opaque.py", "--test-timeout", "120"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=quick_env(),
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    needs = f"{python} cannot import; install it: {python} -m pip install 'hypothesis>=6.100'"
    assert f"  hypothesis did not run: it needs Hypothesis, which {needs}" in lines, done.stdout
    assert (
        "  FAILED: no test was kept, and hypothesis could not run (see above): install it, or "
        "give --strategy template to use the templates alone"
    ) in lines


def test_problems_never_deny_a_hypothesis_test_that_was_kept(tmp_path: Path) -> None:
    """scale has a fuzz test and an equivalence test with scale_fast, whose Table nothing can
    build: the fuzz test is kept, so no line says Hypothesis could not test scale; the line about
    scale_fast stays. The children load every installed plugin, as by default for a user (the
    other generations here load qbench alone, to be quicker)."""
    (tmp_path / "scaling.py").write_text(
        "class Table:\n    def __init__(self, rows):\n        self.rows = rows\n\n\n"
        "def scale(value: int) -> int:\n    if value > 10:\n        return value * 2\n"
        "    return value\n\n\n"
        "def scale_fast(value: int, table: Table) -> int:\n    return value * 2\n",
        encoding="utf-8",
    )
    done = qbench(
        tmp_path,
        *("generate", "scaling.py", "--json", "--strategy", "hypothesis"),
        *("--test-timeout", "120", "--max-examples", "5"),
        plugins=True,
    )
    result = GenerateResult.model_validate_json(done.stdout)
    files = "".join(p.read_text("utf-8") for p in (tmp_path / "tests/generated").glob("*.py"))
    assert "def test_fuzz_scale(" in files, result.problems
    assert not [p for p in result.problems if p.startswith("scaling.scale:")], result.problems
    assert any(p.startswith("scaling.scale_fast: ") for p in result.problems), result.problems


LINTED = '''"""Roots and names."""

import math



def root(number: int) -> int:
    """The integer square root of ``number``.

    Raises:
        ValueError: ``number`` is negative.
    """
    found = int(math.sqrt(number))
    if found > 100:
        return 100
    return found


def nothing_for(key: str) -> None:
    """None for every key."""
    if key == "x":
        return None
    return None
'''
"""root rejects a negative number with the ValueError its docstring declares (math.sqrt's);
nothing_for returns None."""


def test_written_files_pass_the_projects_own_linters(tmp_path: Path) -> None:
    """The project's ruff (line length 72, pycodestyle, pyflakes, isort, pyupgrade) finds
    nothing in the written files: `is None`, never `== None`; the header within 72 columns; and
    root's documented ValueError is an invalid input, not a finding."""
    (tmp_path / "roots.py").write_text(LINTED, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ruff]\nline-length = 72\n[tool.ruff.lint]\nselect = ["E", "F", "I", "UP"]\n',
        encoding="utf-8",
    )
    done = qbench(
        tmp_path,
        *("generate", "roots.py", "--json", "--test-timeout", str(TIMEOUT), "--timeout", BUDGET),
        *("--max-examples", "20"),
    )
    result = GenerateResult.model_validate_json(done.stdout)
    assert not result.findings, result.findings
    assert result.auto_generated.files == ["tests/generated/test_roots_generated.py"]
    written = tmp_path / "tests" / "generated" / "test_roots_generated.py"
    text = written.read_text(encoding="utf-8")
    assert "def test_fuzz_root(" in text and "== None" not in text
    assert "nothing_for(key='x') is None" in text or 'nothing_for(key="x") is None' in text
    assert max(len(line) for line in text.splitlines()) <= 72, text
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    linted = subprocess.run(
        [ruff, "check", "tests/generated"], cwd=tmp_path, capture_output=True, text=True
    )
    assert linted.returncode == 0, linted.stdout
    assert not [p for p in result.problems if "ruff check reports" in p], result.problems
