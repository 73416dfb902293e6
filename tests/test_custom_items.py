"""Tests that are not Python functions: a ``pytest_collect_file`` plugin's items (pytest's own
YAML example), whose ``repr_failure`` says what failed, and whose collector fails in the plugin's
code."""

from __future__ import annotations

import pytest

from conftest import RunQBench
from conftest import assert_summary_matches_pytest


YAML_PLUGIN = """
    import pytest

    def pytest_collect_file(parent, file_path):
        if file_path.suffix == ".yaml" and file_path.name.startswith("test"):
            return YamlFile.from_parent(parent, path=file_path)

    class YamlFile(pytest.File):
        def collect(self):
            lines = self.path.read_text(encoding="utf-8").splitlines()
            specs = dict(line.split(":", 1) for line in lines)  # a line without ':' raises
            for name, spec in sorted(specs.items()):
                yield YamlItem.from_parent(self, name=name, spec=spec.split())

    class YamlItem(pytest.Item):
        def __init__(self, *, spec, **kwargs):
            super().__init__(**kwargs)
            self.spec = spec

        def runtest(self):
            name, value = self.spec
            if name != value:
                raise YamlException(self, name, value)

        def repr_failure(self, excinfo):
            if isinstance(excinfo.value, YamlException):
                return "\\n".join([
                    "usecase execution failed",
                    "   spec failed: {1!r}: {2!r}".format(*excinfo.value.args),
                ])
            return super().repr_failure(excinfo)

        def reportinfo(self):
            return self.path, 0, f"usecase: {self.name}"

    class YamlException(Exception):
        pass
"""


def test_a_custom_items_failure_says_what_its_repr_failure_says(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The message is the text pytest shows (the item's ``repr_failure``), not the exception's
    own ``str``: it was ``(<YamlItem hello>, 'some', 'other')`` in report.md and the digest."""
    pytester.makeconftest(YAML_PLUGIN)
    pytester.path.joinpath("test_simple.yaml").write_text("ok: a a\nhello: some other\n")
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    assert_summary_matches_pytest(run)
    run.result.stdout.fnmatch_lines(["*spec failed: 'some': 'other'"])
    [failed] = [r for r in run.report.results if r.outcome == "failed"]
    assert failed.failure is not None
    assert failed.failure.error_type == "YamlException"
    assert failed.failure.error_message == (
        "usecase execution failed\n   spec failed: 'some': 'other'"
    )
    report_md = (run.run_dir / "report.md").read_text(encoding="utf-8")
    assert "spec failed: 'some': 'other'" in report_md
    assert "<YamlItem" not in report_md


def test_a_collection_error_in_a_plugins_code_is_headed_by_its_collector(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A collector that fails in the conftest's code is named in report.md by its node id (as
    pytest's ``ERROR test_broken.yaml``), then where it failed: the heading was the conftest's
    line alone, which reads as a broken conftest."""
    pytester.makeconftest(YAML_PLUGIN)
    pytester.path.joinpath("test_broken.yaml").write_text("no colon here\n")
    run = run_qbench()
    run.result.stdout.fnmatch_lines(["ERROR test_broken.yaml - ValueError*"])
    [error] = run.report.collection_errors
    assert (error.nodeid, error.file) == ("test_broken.yaml", "conftest.py")
    report_md = (run.run_dir / "report.md").read_text(encoding="utf-8")
    assert f"### `test_broken.yaml` at `conftest.py:{error.line}`" in report_md
