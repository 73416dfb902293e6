"""A failure whose exception has no message (``raise TimeoutError()``, asyncio's
``wait_for`` timing out, a bare ``assert False`` in some plugins' items) in report.md."""

from __future__ import annotations

import pytest

from conftest import RunQBench


def test_a_failure_without_a_message_has_no_empty_block(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """report.md shows no empty code block where the message would be: the type, the location
    and the traceback say it all (aiofiles' tests with ``asyncio.wait_for`` timing out)."""
    pytester.makepyfile(
        """
        def test_times_out():
            raise TimeoutError()
        """
    )
    run = run_qbench()
    run.result.assert_outcomes(failed=1)
    report_md = (run.run_dir / "report.md").read_text(encoding="utf-8")
    section = report_md.split("### `test_a_failure_without_a_message_has_no_empty_block.py")[1]
    section = section.split("</details>")[0]
    assert "**TimeoutError** in call" in section
    assert "```text\n\n```" not in section and "```text\n```" not in section
    assert "E   TimeoutError" in section
