"""The test processes keep a compiled package imported across ``pytester``'s teardown
(tests/kept_modules.py): a test's verdict does not depend on which test ran before it in the
same pytest-xdist worker."""

from __future__ import annotations

from pathlib import Path

import pytest


FIRST = """
    def test_first_import_under_pytester(pytester):
        # imported after pytester's snapshot of sys.modules, and used as the MCP SDK's server
        # does when it is built (mcp/server/request_state.py)
        from cryptography.hazmat.primitives.hashes import SHA256
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        HKDF(algorithm=SHA256(), length=32, salt=None, info=b"x").derive(b"k" * 32)
"""

NEXT = """
    def test_next_import():
        from cryptography.hazmat.primitives.hashes import SHA256
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        HKDF(algorithm=SHA256(), length=32, salt=None, info=b"x").derive(b"k" * 32)
"""


def test_a_compiled_package_a_pytester_test_imported_first_works_in_the_next_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test using ``pytester`` is the first in its process to use ``cryptography``'s Rust
    part (as building an MCP server does); the next test in the process uses it again. Without
    ``kept_modules``, pytester's teardown dropped ``cryptography``'s Python modules, the next
    test imported them anew, and the Rust part, which keeps the first ``HashAlgorithm``,
    refused the new ``SHA256``: "TypeError: Expected instance of hashes.HashAlgorithm" (the
    MCP crashed-run test's red CI). With it, both pass. The two run in one process, in this
    order, whatever the outer run's order."""
    pytest.importorskip("cryptography")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # kept_modules for the child
    pytester.makepyfile(test_1_first=FIRST, test_2_next=NEXT)
    args = ("-p", "no:randomly", "-p", "no:cacheprovider", "-p", "pytester")
    without = pytester.runpytest_subprocess(*args)
    if without.ret == 0:
        pytest.skip("this cryptography re-imports cleanly: nothing for kept_modules to keep")
    without.stdout.fnmatch_lines(["*TypeError: Expected instance of hashes.HashAlgorithm*"])
    kept = pytester.runpytest_subprocess(*args, "-p", "kept_modules")
    kept.assert_outcomes(passed=2)
