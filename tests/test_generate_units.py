"""The parts of ``qbench generate`` that need no child process (issue 14): complexity from the
AST, template values and boundaries, the ghostwriter's choices, the falsifying example parser."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from pytest_qbench.generate.functions import complexity
from pytest_qbench.generate.functions import read_functions
from pytest_qbench.generate.ghostwriter import ghost_specs
from pytest_qbench.generate.ghostwriter import with_settings
from pytest_qbench.generate.review import line_ranges
from pytest_qbench.generate.target import GenerateError
from pytest_qbench.generate.target import resolve_target
from pytest_qbench.generate.templates import NoValue
from pytest_qbench.generate.templates import template_calls
from pytest_qbench.generate.verify import falsifying_example
from pytest_qbench.generate.verify import finding_error
from pytest_qbench.generate.writer import merge_imports


pytestmark = pytest.mark.engine


def function_node(source: str) -> ast.FunctionDef:
    """The first function of ``source``."""
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n    return 1\n", 1),
        ("def f(x):\n    if x:\n        return 1\n    elif x > 2:\n        return 2\n", 3),
        ("def f(x):\n    for i in x:\n        while i:\n            i -= 1\n", 3),
        ("def f(a, b, c):\n    return a and b or c\n", 3),
        (
            "def f(x):\n    try:\n        pass\n    except A:\n        pass\n    except B:\n"
            "        pass\n",
            3,
        ),
        ("def f(x):\n    return [i for i in x if i if i > 1]\n", 4),
        ("def f(x):\n    for i in x:\n        pass\n    else:\n        pass\n", 3),
        (
            "def f(x):\n    try:\n        pass\n    except A:\n        pass\n    else:\n        pass\n",
            3,
        ),
        (
            "def f(x):\n    match x:\n        case 1:\n            pass\n        case _:\n"
            "            pass\n",
            2,
        ),
        (
            "def f(x):\n    def g(y):\n        if y:\n            pass\n    return 1 if x else 2\n",
            2,
        ),
        ("def f(x):\n    assert x and x > 1\n    with x:\n        pass\n", 2),
    ],
)
def test_complexity_counts_the_documented_branches(source: str, expected: int) -> None:
    """McCabe's number as radon counts it: 1 + if/elif, ternary, for, while, a loop's or a
    try's else, except, assert, a match case but a catch-all, a comprehension's for and if, an
    extra boolean operand; nested functions and with do not count."""
    assert complexity(function_node(source)) == expected


def test_complexity_agrees_with_radon_on_every_function_of_the_package() -> None:
    """The score is the one radon gives (McCabe's, as radon counts it), on each of the package's
    own functions and methods."""
    from radon.complexity import cc_visit  # type: ignore[import-untyped]

    package = Path(__file__).resolve().parents[1] / "pytest_qbench"
    compared, differ = 0, []
    for path in sorted(package.rglob("*.py")):
        radon: dict[tuple[str, int], int] = {}
        for block in cc_visit(path.read_text(encoding="utf-8")):
            for method in getattr(block, "methods", []):
                radon[f"{block.name}.{method.name}", method.lineno] = method.complexity
            radon[block.name, block.lineno] = block.complexity
        for function in read_functions(path):
            compared += 1
            expected = radon[function.qualname, function.line]
            if function.complexity != expected:
                differ.append(f"{path.name}:{function.line} {function.complexity} != {expected}")
    assert compared > 1000
    assert differ == []


def test_functions_and_methods_with_spans_and_context(tmp_path: Path) -> None:
    """Top-level functions and methods, in file order, with the signature and first lines."""
    module = tmp_path / "m.py"
    module.write_text(
        "class C:\n    def __init__(self, n: int) -> None:\n        self.n = n\n\n"
        "    async def go(self, *, k: str = 'x') -> int:\n        '''Doc.'''\n        return 1\n"
        "\n\ndef f(a, b=2):\n    return a\n",
        encoding="utf-8",
    )
    found = read_functions(module)
    assert [(f.qualname, f.line, f.end_line, f.body_start) for f in found] == [
        ("C.__init__", 2, 3, 3),
        ("C.go", 5, 7, 7),
        ("f", 10, 11, 11),
    ]
    assert found[1].is_async and found[1].signature == "async def go(self, *, k: str='x') -> int"
    assert found[2].context == "def f(a, b=2):\n    return a"


def test_template_calls_use_annotations_defaults_and_boundaries(tmp_path: Path) -> None:
    """Representative values from annotations, defaults left out, and the edges of the
    function's own comparisons; an argument nothing justifies is named."""
    module = tmp_path / "m.py"
    module.write_text(
        "def grade(score: int, name: str, flag: bool = False) -> str:\n"
        "    if score < 0:\n        raise ValueError\n    if not name:\n        return ''\n"
        "    return 'A' if score >= 90 else 'B'\n\n\n"
        "def fetch(client: Client) -> None:\n    pass\n",
        encoding="utf-8",
    )
    grade, fetch = read_functions(module)
    calls = [call.args_text() for call in template_calls(grade)]
    assert calls[0] == "score=1, name='a'"
    assert sorted(calls[1:]) == [
        "score=-1, name='a'",
        "score=0, name='a'",
        "score=1, name=''",
        "score=89, name='a'",
        "score=90, name='a'",
        "score=91, name='a'",
    ]
    with pytest.raises(
        NoValue, match="strategies could not be inferred for argument `client: Client`"
    ):
        template_calls(fetch)


def test_ghostwriter_choices_follow_names(tmp_path: Path) -> None:
    """encode/decode is a round trip, normalize idempotent, merge of two a binary operation,
    sort_fast equivalent to sort; every public function also gets a fuzz test."""
    module = tmp_path / "m.py"
    module.write_text(
        "def encode(s: str) -> bytes: ...\ndef decode(b: bytes) -> str: ...\n"
        "def normalize(s: str) -> str: ...\ndef merge(a: dict, b: dict) -> dict: ...\n"
        "def sort(x: list) -> list: ...\ndef sort_fast(x: list) -> list: ...\n"
        "def _private(x: int) -> int: ...\n",
        encoding="utf-8",
    )
    kinds = {(s.kind, s.functions) for s in ghost_specs("m", read_functions(module))}
    assert ("roundtrip", ("encode", "decode")) in kinds
    assert ("idempotent", ("normalize",)) in kinds
    assert ("binary_operation", ("merge",)) in kinds
    assert ("equivalent", ("sort", "sort_fast")) in kinds
    assert ("fuzz", ("decode",)) in kinds
    assert not [k for k in kinds if "_private" in k[1]]


def test_property_tests_get_few_derandomized_examples() -> None:
    """Every @given gets the settings above it."""
    code = with_settings("@given(x=st.integers())\ndef test_a(x): ...\n", 7)
    assert "@settings(max_examples=7, deadline=None, derandomize=True)\n@given(" in code


@pytest.mark.parametrize(
    "output",
    [
        "Falsifying example: test_fuzz_ratio(\n    a=0,\n    b=0,\n)\n",
        "E       Failing test case: test_fuzz_ratio(\nE           a=0,  # or any other generated "
        "value\nE           b=0,\nE       )\n",
    ],
)
def test_falsifying_example_is_read_from_either_report(output: str) -> None:
    """Hypothesis's older and newer wording, with pytest's E prefix and comments."""
    assert falsifying_example(output) == "a=0, b=0"
    assert falsifying_example("1 failed") is None


def test_the_first_of_several_distinct_failures_is_the_example() -> None:
    """An exception group (``|`` lines): the first failure's example and its exception."""
    output = (
        "  | ExceptionGroup: Hypothesis found 2 distinct failures. (2 sub-exceptions)\n"
        "    | AssertionError: ({'=': ''}, {'': '='})\n"
        "    | Failing test case: test_roundtrip(\n"
        "    |     # The test always failed when commented parts were varied together.\n"
        "    |     pairs={'=': ''},\n"
        "    |     text='',  # or any other generated value\n"
        "    | )\n"
        "    | ValueError: dictionary update sequence element #0 has length 1\n"
        "    | Failing test case: test_roundtrip(\n"
        "    |     pairs={';': ''},\n"
        "    | )\n"
    )
    assert falsifying_example(output) == "pairs={'=': ''}, text=''"
    assert finding_error(output) == "AssertionError: ({'=': ''}, {'': '='})"


def test_targets_resolve_from_files_packages_and_dotted_names(tmp_path: Path) -> None:
    """A file inside a package imports by its dotted name from above the package; a package
    directory lists its modules (tests excluded); a dotted name is found under src/."""
    package = tmp_path / "src" / "pkg"
    (package / "tests").mkdir(parents=True)
    for name in ("__init__.py", "core.py", "test_core.py", "tests/test_x.py"):
        (package / name).write_text("", encoding="utf-8")
    by_file = resolve_target("src/pkg/core.py", tmp_path)
    assert [m.name for m in by_file.modules] == ["pkg.core"]
    assert by_file.import_root == tmp_path / "src"
    assert [m.name for m in resolve_target("src/pkg", tmp_path).modules] == ["pkg", "pkg.core"]
    assert [m.name for m in resolve_target("pkg.core", tmp_path).modules] == ["pkg.core"]
    with pytest.raises(GenerateError, match=r"target 'pkg\.nothing' not found"):
        resolve_target("pkg.nothing", tmp_path)


def test_line_ranges() -> None:
    """Uncovered lines as the reason shows them."""
    assert line_ranges([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"


def test_imports_of_several_tests_are_merged() -> None:
    """One ``from`` line per module in a written file, each name once."""
    assert merge_imports(
        [
            "import textkit",
            "from hypothesis import given, reject, strategies as st",
            "from hypothesis import given, strategies as st",
            "from hypothesis import settings",
            "import pytest",
            "import textkit",
        ]
    ) == [
        "import pytest",
        "import textkit",
        "from hypothesis import given, reject, settings, strategies as st",
    ]


def test_a_child_returns_even_when_a_process_it_left_holds_its_output(tmp_path: Path) -> None:
    """A daemon a child leaves in a session of its own keeps the child's stdout open: the wait
    is for the child, not for the end of its output (a pipe would wait for the daemon's end,
    600 s here). The daemon writes a file at its natural end: none after the run means the run
    returned and killed it before, however slow the machine."""
    import contextlib
    import os
    import signal
    import sys

    from pytest_qbench.core.supervise import run

    woke = tmp_path / "woke"
    daemon_code = f"import time; time.sleep(600); open({str(woke)!r}, 'w').close()"
    code = (
        "import subprocess, sys; "
        f"d = subprocess.Popen([sys.executable, '-c', {daemon_code!r}], "
        "start_new_session=True); print(d.pid, flush=True)"
    )
    finished = run([sys.executable, "-c", code], cwd=tmp_path, timeout=1200)
    daemon = int(finished.output.split()[0])
    with contextlib.suppress(OSError):  # killed by the run already (it carried the cookie)
        os.kill(daemon, signal.SIGKILL)
    assert finished.returncode == 0 and finished.leftovers >= 1
    assert not woke.exists()


def test_declared_exceptions_come_from_the_body_and_the_docstring() -> None:
    """An exception is declared when the function raises it by name (dotted too) or names it
    in its docstring's Raises section (Google, NumPy) or a ``:raises X:`` field; a later
    section's words are not exceptions."""
    from pytest_qbench.generate.templates import declared_names

    google = function_node(
        'def f(x):\n    """Parse.\n\n    Args:\n        x: text\n\n    Raises:\n'
        "        ValueError: when x is bad.\n            More: here.\n"
        '        errors.Invalid: other\n\n    Returns:\n        Thing: it\n    """\n'
        "    raise KeyError(x)\n"
    )
    assert declared_names(google) == ["KeyError", "ValueError", "errors.Invalid"]
    numpy = function_node(
        'def f(x):\n    """Parse.\n\n    Raises\n    ------\n    TypeError\n        If wrong.\n'
        '\n    Returns\n    -------\n    int\n    """\n'
    )
    assert declared_names(numpy) == ["TypeError"]
    sphinx = function_node('def f(x):\n    """:raises ValueError: bad"""\n    raise exc.Boom()\n')
    assert declared_names(sphinx) == ["exc.Boom", "ValueError"]


def test_the_header_is_wrapped_at_the_line_length() -> None:
    """The header keeps its first words (the mark of a file qbench may overwrite), fits the
    width, and gives the command on lines of its own."""
    from pytest_qbench.generate.writer import HEADER
    from pytest_qbench.generate.writer import header
    from pytest_qbench.generate.writer import wrap_header

    command = "qbench generate src/pkg/a_long_module_name.py --strategy hybrid --out tests/gen"
    text = wrap_header(header(command, "12 tests of pkg.a_long_module_name") + "import x\n", 60)
    lines = text.splitlines()
    assert lines[0].startswith(HEADER) and max(map(len, lines)) <= 60, lines
    assert lines[-1] == "import x"
    at = lines.index("# Regenerate with:")
    joined = " ".join(line[2:].rstrip(" \\") for line in lines[at + 1 : -1])
    assert joined == command


def test_hybrid_keeps_part_of_the_budget_for_the_model(tmp_path: Path) -> None:
    """While the library generators run in ``hybrid`` with a model, the budget ends at
    ``LIBRARY_SHARE`` of ``--timeout`` and a skipped candidate says so; the model's turn gets
    the whole budget back."""
    from pytest_qbench.generate.models import GenerateRequest
    from pytest_qbench.generate.sandbox import Sandbox
    from pytest_qbench.generate.state import LIBRARY_SHARE
    from pytest_qbench.generate.state import Generation

    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    request = GenerateRequest(target="m.py", strategy="hybrid", timeout=100, project=str(tmp_path))
    box = Sandbox(tmp_path, resolve_target("m.py", tmp_path), tmp_path / "scratch")
    run = Generation(request, tmp_path / "scratch", box, started=1000.0)
    assert run.deadline == 1100.0
    run.keep_for_model()
    assert run.deadline == 1000.0 + LIBRARY_SHARE * 100 < 1100.0
    assert "kept for the language model" in run.budget_reason()
    run.give_to_model()
    assert run.deadline == 1100.0
    assert run.budget_reason() == "not tried: the budget of 100s (--timeout) was reached"


def test_the_probe_child_finds_a_type_no_strategy_can_draw(tmp_path: Path) -> None:
    """A fuzz test whose ``@given`` cannot draw a type (shop.Client's ``url`` has no annotation)
    fails so in any pytest run, before calling the function: the probe child that ghostwrote
    it says so (Hypothesis's own error, as pytest's ``E`` line names it), and the generation drops it without a child pytest of
    its own; a test whose strategies resolve is left to its run."""
    import json
    import os
    import subprocess
    import sys

    from generation_setup import make_shop_project

    root = make_shop_project(tmp_path / "project")
    results = tmp_path / "results.json"
    ghost = [
        {"id": name, "module": "shop", "kind": "fuzz", "functions": [name], "except": []}
        for name in ("fetch", "clamp")
    ]
    request = {"results": str(results), "timeout": 60, "modules": ["shop"], "ghost": ghost}
    (tmp_path / "request.json").write_text(json.dumps({**request, "probes": []}), "utf-8")
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_qbench.generate._child", str(tmp_path / "request.json")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(results.read_text(encoding="utf-8"))["ghost"]
    assert found["fetch"]["unresolved"].startswith(
        "hypothesis.errors.ResolutionFailed: Could not resolve <class 'shop.Client'> to a strategy"
    ), found
    assert "st.from_type(shop.Client)" in found["fetch"]["code"]
    assert "unresolved" not in found["clamp"] and "def test_fuzz_clamp" in found["clamp"]["code"]


def test_hypothesis_unicode_tables_are_kept_between_generations(tmp_path: Path) -> None:
    """A generation's children build Hypothesis's Unicode tables into its scratch storage: those
    the cache lacks are kept there, gzipped JSON only (not a file that does not read back, nor a
    link, nor over a kept one), and the next generation's storage starts with them."""
    import gzip
    import json

    from pytest_qbench.generate import unicode_tables

    built = tmp_path / "first" / unicode_tables.TABLES / "14.0.0"
    built.mkdir(parents=True)
    with gzip.open(built / "charmap.json.gz", "wb") as out:
        out.write(json.dumps({"Lu": [[65, 90]]}).encode())
    (built / "codec-v2-utf-8.json.gz").write_bytes(b"not gzip")
    (built / "codec-v2-ascii.json.gz").symlink_to(built / "charmap.json.gz")
    cache = tmp_path / "cache"
    unicode_tables.keep(tmp_path / "first", cache)
    kept = cache / unicode_tables.TABLES / "14.0.0"
    assert sorted(p.name for p in kept.iterdir()) == ["charmap.json.gz"]
    (built / "charmap.json.gz").write_bytes(gzip.compress(b"[]"))
    unicode_tables.keep(tmp_path / "first", cache)
    assert json.loads(gzip.decompress((kept / "charmap.json.gz").read_bytes())) == {
        "Lu": [[65, 90]]
    }
    unicode_tables.seed(tmp_path / "second", cache)
    seeded = tmp_path / "second" / unicode_tables.TABLES / "14.0.0" / "charmap.json.gz"
    assert seeded.read_bytes() == (kept / "charmap.json.gz").read_bytes()
    unicode_tables.seed(tmp_path / "third", tmp_path / "no-cache")
    assert not (tmp_path / "third").exists()


def test_the_cache_of_unicode_tables_follows_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$XDG_CACHE_HOME/qbench/hypothesis``, else ``~/.cache/qbench/hypothesis``."""
    from pytest_qbench.generate.unicode_tables import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "qbench" / "hypothesis"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "qbench" / "hypothesis"


@pytest.fixture
def without_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``XDG_CACHE_HOME`` and no home directory (``Path.home`` raises, as Python's does)."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))


@pytest.mark.usefixtures("without_home")
def test_without_a_home_directory_the_tables_are_not_cached(tmp_path: Path) -> None:
    """No ``XDG_CACHE_HOME`` and no home directory: the generation goes on without the cache."""
    from pytest_qbench.generate import unicode_tables

    unicode_tables.seed(tmp_path / "storage")
    unicode_tables.keep(tmp_path / "storage")
    assert not (tmp_path / "storage").exists()


def test_the_byte_code_cache_follows_xdg_cache_home_and_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$XDG_CACHE_HOME/qbench/pycache/<tag>``, else ``~/.cache/qbench/pycache/<tag>``;
    ``QBENCH_PYCACHE`` before them, ``--pycache`` before it."""
    from pytest_qbench.generate import pycache

    tag = sys.implementation.cache_tag
    monkeypatch.delenv(pycache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert pycache.default_dir() == tmp_path / "xdg" / "qbench" / "pycache" / tag
    assert pycache.choose(None, tmp_path / "s").prefix == pycache.default_dir()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert pycache.default_dir() == tmp_path / "home" / ".cache" / "qbench" / "pycache" / tag
    monkeypatch.setenv(pycache.ENV, str(tmp_path / "env"))
    assert pycache.choose(None, tmp_path / "s") == pycache.ByteCodeCache(tmp_path / "env")
    assert pycache.choose(str(tmp_path / "opt"), tmp_path / "s").prefix == tmp_path / "opt"
    assert pycache.choose("off", tmp_path / "s") == pycache.ByteCodeCache(
        tmp_path / "s" / "pycache"
    )


@pytest.mark.usefixtures("without_home")
def test_without_a_home_directory_byte_code_stays_in_the_scratch_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``XDG_CACHE_HOME`` and no home directory: the generation's own cache, said."""
    from pytest_qbench.generate import pycache

    monkeypatch.delenv(pycache.ENV, raising=False)
    cache = pycache.choose(None, tmp_path)
    assert cache.prefix == tmp_path / "pycache"
    assert cache.note.startswith(
        "the byte-code cache cannot be used (Could not determine home directory.): "
    )


def test_forgetting_a_generation_removes_its_scratchs_part_alone(tmp_path: Path) -> None:
    """The entries mirroring the scratch go, and the directories they leave empty up to the
    prefix; another generation's scratch and the installed packages' entries stay."""
    from pytest_qbench.generate import pycache

    prefix = tmp_path / "cache"
    scratch = tmp_path / "tmp" / "qbench-generate-a"
    other = pycache.mirrored(prefix, tmp_path / "tmp" / "qbench-generate-b" / "tree")
    mine = pycache.mirrored(prefix, scratch / "tree")
    kept = pycache.mirrored(prefix, Path(pytest.__file__).parent)
    for directory in (other, mine, kept):
        directory.mkdir(parents=True)
        (directory / "m.cpython-311.pyc").write_bytes(b"")
    pycache.start(pycache.ByteCodeCache(prefix), scratch)
    assert pycache.prefix_of(scratch) == prefix
    pycache.forget(scratch)
    assert not pycache.mirrored(prefix, scratch).exists()
    assert (other / "m.cpython-311.pyc").exists() and (kept / "m.cpython-311.pyc").exists()
    assert pycache.prefix_of(scratch) == scratch / "pycache"
    pycache.start(pycache.ByteCodeCache(prefix), tmp_path / "tmp" / "qbench-generate-b")
    pycache.forget(tmp_path / "tmp" / "qbench-generate-b")
    assert sorted(p.name for p in prefix.iterdir()) == [kept.relative_to(prefix).parts[0]]
