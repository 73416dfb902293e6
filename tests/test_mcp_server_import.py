"""``server_import``: the server imported with a package hidden, and imported anyway when
something needs that package after all (an SDK release that imports uvicorn unguarded)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_qbench.mcp.server_import import hidden
from pytest_qbench.mcp.server_import import import_without


OPTIONAL = "qbench_probe_optional"
MODULES = {
    OPTIONAL: "VALUE = 1\n",
    "qbench_probe_guarded": (
        f"try:\n    import {OPTIONAL} as optional\nexcept ImportError:\n    optional = None\n"
    ),
    "qbench_probe_needs": f"import {OPTIONAL} as optional\n",
    "qbench_probe_broken": "raise ValueError('a bug in the module itself')\n",
}


@pytest.fixture
def probes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The probe modules on ``sys.path``, none imported; forgotten afterwards."""
    for name, source in MODULES.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in MODULES:
        sys.modules.pop(name, None)


@pytest.mark.usefixtures("probes")
def test_a_guarded_import_goes_without_the_hidden_package() -> None:
    """The importer that does without the package gets none; the package stays importable."""
    import_without("qbench_probe_guarded", [OPTIONAL])
    assert sys.modules["qbench_probe_guarded"].optional is None
    assert OPTIONAL not in sys.modules
    __import__(OPTIONAL)
    assert sys.modules[OPTIONAL].VALUE == 1


@pytest.mark.usefixtures("probes")
def test_an_unguarded_import_gets_the_package_after_all() -> None:
    """A module that needs the hidden package is imported again, with the package."""
    import_without("qbench_probe_needs", [OPTIONAL])
    assert sys.modules["qbench_probe_needs"].optional is sys.modules[OPTIONAL]


@pytest.mark.usefixtures("probes")
def test_a_package_already_imported_is_not_hidden() -> None:
    __import__(OPTIONAL)
    import_without("qbench_probe_guarded", [OPTIONAL])
    assert sys.modules["qbench_probe_guarded"].optional is sys.modules[OPTIONAL]


@pytest.mark.usefixtures("probes")
def test_the_modules_own_error_is_raised() -> None:
    with pytest.raises(ValueError, match="a bug in the module itself"):
        import_without("qbench_probe_broken", [OPTIONAL])
    assert OPTIONAL not in sys.modules  # nor left hidden


def test_hidden_restores_sys_modules_on_error() -> None:
    with pytest.raises(RuntimeError), hidden(["qbench_probe_never"]):
        assert sys.modules["qbench_probe_never"] is None
        raise RuntimeError
    assert "qbench_probe_never" not in sys.modules
