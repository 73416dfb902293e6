"""The suite's own ``--dist loadgroup`` (tox's ``py`` and ``pytestmin``) keeps an
``xdist_group`` on one worker: under pytest-xdist the group's name reaches the node id its
scheduler reads (``tests/xdist_groups.py``), so a module fixture the group shares is made once."""

from __future__ import annotations

import pytest


pytestmark = pytest.mark.xdist_group("test_suite_grouping")


@pytest.mark.parametrize("case", ["plain", "with [brackets]"])
def test_a_grouped_tests_id_names_its_group_for_the_scheduler(
    request: pytest.FixtureRequest, case: str
) -> None:
    config = request.config
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        pytest.skip("not a pytest-xdist worker under --dist loadgroup")
    nodeid = request.node.nodeid
    assert nodeid.endswith(f"[{case}]@test_suite_grouping"), nodeid
    # pytest-xdist's scheduler takes what follows the last "@" after the last "]" as the group
    assert nodeid.rfind("@") > nodeid.rfind("]")
