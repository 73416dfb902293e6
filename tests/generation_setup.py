"""What the generation tests share: the environment of the ``qbench generate`` runs they start,
and the small project whose functions only a language model can test (shop.py).

Every ``qbench generate`` starts child pytest runs (the suite before and after, the candidates,
the acceptance's repeats and shuffled runs), and a child pytest that loads every installed
plugin (anyio, xdist, pytest-cov, rerunfailures, Hypothesis's, whose terminal summary imports
all of Hypothesis) costs about three times the CPU of one that loads qbench alone. The children
inherit the environment of ``qbench generate`` (``generate/process.py``), and pytest honours
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` there: qbench passes ``-p qbench`` to each child itself, and
the projects of these tests need no other plugin (Hypothesis's own ``@given`` needs none). The
product's default, the user's plugins loaded in every child that runs the user's tests, is
proved by the tests that run without ``quick_env``: test_generate.py's
``test_problems_never_deny_a_hypothesis_test_that_was_kept`` (a whole generation) and
``test_written_files_pass_under_plain_pytest_with_a_header``, test_generate_safety.py's
``test_a_resource_error_is_no_finding`` (findings read with Hypothesis's plugin loaded)."""

from __future__ import annotations

import os
from pathlib import Path


def quick_env(**extra: str) -> dict[str, str]:
    """This environment for a child of a test (``qbench generate``, ``qbench-mcp``, pytest):
    pytest's plugin autoload off, the outer run's ``PYTEST_ADDOPTS`` dropped, ``extra`` added."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **extra}


SHOP = '''\
"""Functions no library generator can call: each needs a Client."""


class Client:
    def __init__(self, url):
        self.url = url


def clamp(x: int, low: int = 0, high: int = 10) -> int:
    if x < low:
        return low
    if x > high:
        return high
    return x


def fetch(client: Client, path: str) -> str:
    if not path.startswith("/"):
        path = "/" + path
    return client.url + path


def shout(client: Client, word: str) -> str:
    loud = word.upper()
    return client.url + loud


def ping(client: Client) -> bool:
    alive = client.url.startswith("http")
    return alive
'''
SHOP_TEST = """\
from shop import Client


def test_client():
    assert vars(Client("x")) == {"url": "x"}
"""
FETCH_OK = """Here is the test:

```python
from shop import Client, fetch


def test_fetch():
    assert fetch(Client("http://a"), "b") == "http://a/b"
    assert fetch(Client("http://a"), "/b") == "http://a/b"
```
"""
SHOUT_WRONG = """```python
from shop import Client, shout


def test_shout():
    assert shout(Client("u:"), "hi") == "u:hi"
```"""
SHOUT_OK = """```python
from shop import Client, shout


def test_shout():
    assert shout(Client("u:"), "hi") == "u:HI"
```"""
NO_CODE = "I would need to know more about Client before writing this test."


def make_shop_project(root: Path) -> Path:
    """shop.py and its one test (of Client alone) in ``root``."""
    (root / "tests").mkdir(parents=True)
    (root / "shop.py").write_text(SHOP, encoding="utf-8")
    (root / "tests" / "test_shop.py").write_text(SHOP_TEST, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    return root.resolve()
