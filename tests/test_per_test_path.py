"""The per-test path stays cheap and writes what it wrote before: the environment looked at for
new secrets only after the phases whose report can hold one (issue 28)."""

from __future__ import annotations

import pytest

from pytest_qbench.core.redact import Redactor

from conftest import RunQBench


LOOKS = """
    import os
    import pytest

    @pytest.fixture
    def secret_then_skip(monkeypatch):
        monkeypatch.setenv("SKIP_TOKEN", "skip-secret-0123456789")
        pytest.skip("skipped with " + os.environ["SKIP_TOKEN"])

    def test_quiet_1():
        pass

    def test_quiet_2():
        pass

    def test_skipped_in_setup(secret_then_skip):
        pass
"""


def test_environment_looked_at_once_per_quiet_test(
    pytester: pytest.Pytester, run_qbench: RunQBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passing test without output is looked at for new secrets once (after its call), not
    after each of its three phases; a setup that skips is looked at too, and the secret its
    fixture set is redacted in the skip's reason."""
    looks: list[int] = []
    refresh = Redactor.refresh

    def counted(self: Redactor, environ: object) -> bool:
        looks.append(1)
        return refresh(self, environ)  # type: ignore[arg-type]

    monkeypatch.setattr(Redactor, "refresh", counted)
    pytester.makepyfile(test_looks=LOOKS)
    run = run_qbench("-p", "no:cacheprovider")
    # test_quiet_1 and _2: their calls; test_skipped_in_setup: its skipped setup
    assert len(looks) == 3
    skipped = run.by_name("test_skipped_in_setup")
    assert skipped.reason == "skipped with [redacted]"
