"""``qbench generate`` cannot touch the project (issue 20): the target's code runs only in a
disposable copy, functions that delete, kill or shell out are never run with generated inputs,
every child's output is bounded, a dying probe hides no function, and no process of the target
outlives the generation. Real generations in subprocesses, on throwaway projects."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from pytest_qbench.generate.models import GenerateResult


TIMEOUT = 15
"""--test-timeout of the runs (a safety net: no verdict here depends on it)."""


def qbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_qbench ARGS`` in ``cwd``, as a user runs ``qbench``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_qbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def generate(root: Path, target: str, *args: str) -> GenerateResult:
    """``qbench generate TARGET --json`` in ``root``: its validated result."""
    done = qbench(
        root, "generate", target, "--json", "--test-timeout", str(TIMEOUT), "--max-examples", "10"
    )
    assert done.stdout, done.stderr
    return GenerateResult.model_validate_json(done.stdout)


def snapshot(root: Path, skip: str = "tests/generated") -> dict[str, str]:
    """Every file under ``root`` but ``skip``: its relative path and a hash of its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(skip):
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


DESTRUCTIVE = """
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "data")


def clear(sub: str) -> None:
    shutil.rmtree(os.path.join(BASE, sub))


def wipe(sub: str = "../canary") -> None:
    shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)


def save(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def reset(level: int) -> int:
    # hidden from the AST: only the copy protects the project from this one
    getattr(shutil, "rm" + "tree")(BASE, ignore_errors=True)
    getattr(shutil, "rm" + "tree")(HERE, ignore_errors=True)
    return level + 1


def keep(x: int) -> int:
    if x > 3:
        return x - 3
    return x
"""


def test_a_destructive_module_leaves_the_project_untouched(tmp_path: Path) -> None:
    """20.1: the target's code (probe, candidates, verification, coverage) runs in a copy of the
    project: data/, the sources and a canary beside the project are untouched byte for byte; the
    functions that delete or write to a path from an argument are listed in needs_llm_review
    with why, never run with generated inputs; the harmless one still gets its test."""
    root = tmp_path / "proj"
    (root / "data" / "sub").mkdir(parents=True)
    (root / "data" / "sub" / "keep.txt").write_text("precious\n", encoding="utf-8")
    (root / "data" / "top.txt").write_text("also precious\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "destroy.py").write_text(DESTRUCTIVE, encoding="utf-8")
    (tmp_path / "canary").mkdir()
    (tmp_path / "canary" / "alive.txt").write_text("tweet\n", encoding="utf-8")
    before = snapshot(root)
    result = generate(root, "destroy.py")
    assert snapshot(root) == before, result.problems
    assert (tmp_path / "canary" / "alive.txt").read_text(encoding="utf-8") == "tweet\n"
    review = {item.function: item.reason for item in result.needs_llm_review}
    for name, call in (("clear", "shutil.rmtree"), ("wipe", "shutil.rmtree"), ("save", "open")):
        assert name in review, result.needs_llm_review
        assert "not run with generated inputs" in review[name] and call in review[name]
    kept = "\n".join((root / f).read_text(encoding="utf-8") for f in result.auto_generated.files)
    assert "keep(" in kept
    for name in ("clear", "wipe", "save"):
        assert f"{name}(" not in kept
