"""``qbench generate --llm-command`` (issue 23): the prompts go to a script of ours on its
standard input and its standard output is the test; every test kept, whatever made it, must
pass 5 times in a row and in a random order with the existing suite without breaking it; the
prompts and answers are logged with secrets redacted."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import qbench_here
from generation_setup import FETCH_OK
from generation_setup import make_shop_project as make_project
from generation_setup import quick_env


pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="Linux process groups and /proc"),
    pytest.mark.generation,
]

POLLUTER = """```python
import shop
from shop import Client, ping

shop.Client.__init__ = lambda self, url: vars(self).update(url=url, pinged=True)


def test_ping():
    assert ping(Client("http://x")) is True
```"""
"""A test that passes, alone and repeated, but changes the module for every test after its
import: the suite's ``vars(Client("x")) == {"url": "x"}`` fails with it."""
FLAKY = """```python
import os
from pathlib import Path
from shop import clamp

COUNT = Path(os.environ["FLAKY_COUNT"])


def test_clamp_low():
    runs = int(COUNT.read_text()) if COUNT.exists() else 0
    COUNT.write_text(str(runs + 1))
    assert runs < 2
    assert clamp(-5) == 0 and clamp(50) == 10
```"""
"""A test that passes its first two runs only (its verification and one repeat): flaky."""
SCRIPT = """\
import os, sys
prompt = sys.stdin.read()
with open(os.environ["PROMPTS"], "a") as log:
    log.write(prompt + "\\n=====\\n")
answers = json_answers = {answers!r}
name = next(n for n in answers if "`" + n + "`" in prompt)
again = "did not pass" in prompt or "held no Python" in prompt
answer = answers[name][min(int(again), len(answers[name]) - 1)]
print(answer.replace("SECRET", os.environ["SHOP_API_TOKEN"]))
"""
SECRET = "s3cr3t-value-4242-abcdef"


def test_a_command_writes_tests_and_acceptance_drops_the_polluting_and_the_flaky(
    tmp_path: Path,
) -> None:
    """fetch's test is kept (the follow-up of a failing answer is the MCP test's); ping's test
    passes alone and repeated but breaks a test of the suite: dropped as polluting; clamp's
    passes twice then fails: dropped as flaky. tokens_used is the sum of the logged estimates;
    the log holds every prompt and answer, the secret redacted; the suite passes with the
    written file."""
    root = make_project(tmp_path / "project")
    answers = {
        "fetch": [FETCH_OK],
        "shout": ["# SECRET\nI need more context."],
        "ping": [POLLUTER],
        "clamp": [FLAKY],
    }
    script = tmp_path / "model.py"
    script.write_text(SCRIPT.format(answers=answers), encoding="utf-8")
    env = quick_env(
        PROMPTS=str(tmp_path / "prompts.txt"),
        FLAKY_COUNT=str(tmp_path / "flaky.txt"),
        SHOP_API_TOKEN=SECRET,
    )
    command = shlex.join([sys.executable, str(script)])
    flags = ["--llm-command", command, "--llm-log", "llm.txt", "--json", "--test-timeout", "60"]
    # qbench generate's parent in this process (what it writes is the subject); the model's
    # command, the candidates' and the acceptance's pytest runs are its real children
    done = qbench_here("generate", "shop.py", "--strategy", "llm", *flags, cwd=root, env=env)
    assert done.ret == 0, done.err[-2000:]
    result = json.loads(done.out)
    assert result["auto_generated"]["generation_method"]["llm"] == 1
    dropped = {d["function"]: d["reason"] for d in result["dropped"]}
    assert dropped["ping"].startswith("pollutes: makes tests/test_shop.py::test_client fail")
    assert re.match(
        r"flaky: failed [1-5] of 5 runs in a row \(run \d: AssertionError", dropped["clamp"]
    )
    assert dropped["shout"] == "the model's answer held no test code"
    written = (root / result["auto_generated"]["files"][0]).read_text(encoding="utf-8")
    assert "def test_fetch" in written and "test_ping" not in written and "clamp" not in written
    prompts = (tmp_path / "prompts.txt").read_text(encoding="utf-8").split("\n=====\n")[:-1]
    assert len(prompts) == 5  # clamp, fetch, ping once; shout and its follow-up
    assert any("held no Python code block" in p for p in prompts)
    log = (root / "llm.txt").read_text(encoding="utf-8")
    assert SECRET not in log and "[redacted]" in log
    spent = [int(n) for n in re.findall(r"\((\d+) tokens, estimated\)", log)]
    assert len(spent) == 5 and result["tokens_used"] == sum(spent)
    suite = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert suite.returncode == 0, suite.stdout[-2000:]
