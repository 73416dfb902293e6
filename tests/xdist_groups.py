"""``--dist loadgroup`` that keeps each ``xdist_group`` on one worker under pytest 9 as well.

pytest-xdist (3.8) names a grouped test's group in its node id (``test_x.py::test_a@group``),
which its scheduler reads, by assigning ``item._nodeid`` in each worker; pytest 9 builds
``Item.nodeid`` from ``item._id`` instead, so the name never reached the scheduler: every grouped
test was scheduled alone, and a module fixture its group shares ran once in each worker (a whole
``qbench generate`` run twice, or one worker waiting on the other's under ``shared_setup``'s
lock). After pytest-xdist's own hook, this one gives the id the same suffix where it lacks it.
Under pytest 8 (tox's pytestmin) pytest-xdist's assignment works and this does nothing."""

from __future__ import annotations

import pytest


def group_names(item: pytest.Item) -> list[str]:
    """The names of ``item``'s ``xdist_group`` marks, as pytest-xdist reads them."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return sorted(names)


@pytest.hookimpl(trylast=True)  # after pytest-xdist's worker has named the groups its way
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId  # pytest 9
    except ImportError:  # pytest 8 reads pytest-xdist's item._nodeid
        return
    for item in items:
        names = group_names(item)
        suffix = f"@{'_'.join(names)}"
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)
