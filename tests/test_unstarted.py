"""A run that pytest stopped before its session started (a plugin's ``pytest_configure``
raised) leaves no earlier run's verdict at a configured output (plugin/unstarted.py)."""

from __future__ import annotations

import json

import pytest

from pytest_qbench.report.models import TestReport
from pytest_qbench.report.verdict import run_green


OUTPUTS = ("--qbench-json=r.json", "--qbench-md=r.md", "--qbench-html=r.html")
EARLIER = {
    "r.json": '{"run": {"run_id": "earlier"}}',
    "r.md": "# ✅ Test report: 1 passed\n",
    "r.html": "<h1>✅ earlier</h1>",
}
RAISES_AT_CONFIGURE = """
def pytest_configure(config):
    raise RuntimeError("a plugin's configure failed")
"""


def test_a_plugin_failing_at_configure_leaves_a_red_report(pytester: pytest.Pytester) -> None:
    """pytest-asyncio's deprecation warning under ``filterwarnings = error`` (or any plugin's
    ``pytest_configure`` raising) stops pytest before its session starts: INTERNALERROR, exit 3.
    Before, the earlier green run's reports stood at every configured output; now each says
    that pytest stopped before its session started, red, with no test."""
    for name, text in EARLIER.items():
        (pytester.path / name).write_text(text, encoding="utf-8")
    pytester.makeconftest(RAISES_AT_CONFIGURE)
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    data = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert not run_green(data)
    report = TestReport.model_validate(data)
    assert report.summary.total == 0
    assert report.run.recording_errors == [
        "pytest stopped with an internal error before its session started (RuntimeError: a "
        "plugin's configure failed): no test ran"
    ]
    assert report.run.exit_code == pytest.ExitCode.INTERNAL_ERROR
    for name in ("r.md", "r.html"):
        text = (pytester.path / name).read_text(encoding="utf-8")
        assert "✅" not in text and "before its session started" in text


WARNS_AT_CONFIGURE = """
import warnings
import pytest

def pytest_configure(config):
    warnings.warn(pytest.PytestDeprecationWarning('The configuration option "x" is unset.'))
"""


def test_a_warning_made_an_error_at_configure_is_named(pytester: pytest.Pytester) -> None:
    """pytest-asyncio 1.x under ``filterwarnings = error`` with its loop scope unset (async_lru
    2.4.0 and httpcore 1.0.9 as published): its ``pytest_configure`` warns, the warning is an
    error, pytest prints INTERNALERROR and exits 3. Before, the report said only that pytest
    stopped before its session started, with no exit status; now it names the warning and
    the exit status."""
    pytester.makeini("[pytest]\nfilterwarnings = error\n")
    assert _configure_fails(pytester, WARNS_AT_CONFIGURE, pytest.ExitCode.INTERNAL_ERROR) == [
        "pytest stopped with an internal error before its session started "
        '(PytestDeprecationWarning: The configuration option "x" is unset.): no test ran'
    ]
    text = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert "pytest exited with status 3" in text


WORDLESS_AT_CONFIGURE = """
class Wordless(Exception):
    def __str__(self):
        raise RuntimeError("no words")

def pytest_configure(config):
    raise Wordless()
"""


def test_an_error_without_words_at_configure_keeps_pytests_exit_status(
    pytester: pytest.Pytester,
) -> None:
    """An exception whose ``str()`` raises, from a plugin's ``pytest_configure``: pytest prints
    ``<exception str() failed>`` and exits 3. Before, qbench's note of the error raised inside
    pytest's ``pytest_internalerror`` and pytest exited 1; now the report names the type and
    pytest's status stays 3."""
    assert _configure_fails(pytester, WORDLESS_AT_CONFIGURE, pytest.ExitCode.INTERNAL_ERROR) == [
        "pytest stopped with an internal error before its session started (Wordless): no test ran"
    ]


def test_a_usage_error_at_configure_keeps_the_plain_words(pytester: pytest.Pytester) -> None:
    """A plugin's ``pytest_configure`` raising ``pytest.UsageError`` (exit 4, no INTERNALERROR):
    the report says pytest stopped before its session started, with no error to name."""
    conftest = "import pytest\ndef pytest_configure(config):\n    raise pytest.UsageError('no')\n"
    assert _configure_fails(pytester, conftest, pytest.ExitCode.USAGE_ERROR) == [
        "pytest stopped before its session started (an error in a plugin's pytest_configure, or "
        "a usage error): no test ran; pytest's output names the error"
    ]


def test_help_and_a_started_run_keep_their_reports(pytester: pytest.Pytester) -> None:
    """``--help`` and ``--markers`` configure and end with no session by design: the outputs are left alone; a
    run that started writes its own report as before."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    (pytester.path / "r.md").write_text(EARLIER["r.md"], encoding="utf-8")
    for shown in ("--help", "--markers"):
        assert pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS, shown).ret == 0
        assert (pytester.path / "r.md").read_text(encoding="utf-8") == EARLIER["r.md"]
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.OK
    assert run_green(json.loads((pytester.path / "r.json").read_text(encoding="utf-8")))


def _write_earlier(pytester: pytest.Pytester) -> None:
    for name, text in EARLIER.items():
        (pytester.path / name).write_text(text, encoding="utf-8")


def _recording_errors(pytester: pytest.Pytester) -> list[str]:
    data = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert not run_green(data)
    for name in ("r.md", "r.html"):
        assert "✅" not in (pytester.path / name).read_text(encoding="utf-8")
    return list(data["run"]["recording_errors"])


def _configure_fails(
    pytester: pytest.Pytester, conftest: str, status: pytest.ExitCode
) -> list[str]:
    """Run one test under ``conftest`` (its ``pytest_configure`` raises) over an earlier green
    report; pytest's exit status is ``status``; the report's recording errors."""
    _write_earlier(pytester)
    pytester.makeconftest(conftest)
    pytester.makepyfile("def test_ok():\n    pass\n")
    assert pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS).ret == status
    return _recording_errors(pytester)


def test_arguments_pytest_refuses_leave_a_red_report(pytester: pytest.Pytester) -> None:
    """An unknown option (on the command line, in ``PYTEST_ADDOPTS`` or ini ``addopts``):
    pytest exits 4 before configuring the run. Before, the earlier green run's reports stood at
    every configured output; now each says pytest refused its arguments, and which."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    _write_earlier(pytester)
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS, "--no-such-option")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert _recording_errors(pytester) == [
        "pytest refused its arguments (unrecognized arguments: --no-such-option): no test ran; "
        "pytest's output names the error"
    ]
    pytester.makeini("[pytest]\naddopts = --from-the-ini\n")
    _write_earlier(pytester)
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unrecognized arguments: --from-the-ini" in _recording_errors(pytester)[0]


def test_a_conftest_pytest_cannot_import_leaves_a_red_report(pytester: pytest.Pytester) -> None:
    """A ``conftest.py`` raising as pytest imports it: pytest exits 4 before configuring the
    run; the outputs say so, naming the error."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    pytester.makeconftest("import no_such_module_here\n")
    _write_earlier(pytester)
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [error] = _recording_errors(pytester)
    assert error.startswith("pytest could not import an initial conftest.py (")
    assert "No module named 'no_such_module_here'" in error


def test_an_option_of_a_conftest_is_not_refused(pytester: pytest.Pytester) -> None:
    """An option a ``conftest.py`` adds is known once the initial conftests are loaded: the run
    goes on and writes its own report; ``--help`` with an unknown option leaves the outputs."""
    pytester.makepyfile("def test_ok():\n    pass\n")
    pytester.makeconftest(
        "def pytest_addoption(parser):\n    parser.addoption('--mine', action='store_true')\n"
    )
    result = pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS, "--mine")
    assert result.ret == pytest.ExitCode.OK
    assert run_green(json.loads((pytester.path / "r.json").read_text(encoding="utf-8")))
    _write_earlier(pytester)
    assert pytester.runpytest_subprocess("-p", "qbench", *OUTPUTS, "--help", "--bogus").ret == 0
    assert (pytester.path / "r.md").read_text(encoding="utf-8") == EARLIER["r.md"]
