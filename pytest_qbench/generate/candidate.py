"""A generated test before verification: its source split into imports and body."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from dataclasses import field
from typing import Literal


Method = Literal["hypothesis", "template", "pynguin", "llm"]


@dataclass
class Candidate:
    """One generated test (or, for Pynguin, one generated file)."""

    id: str
    method: Method
    module: str
    functions: list[str]
    """Qualified names of the functions it exercises."""
    imports: list[str]
    body: str
    tests: int = 1
    """Test functions in ``body``."""
    example: str | None = field(default=None)
    """The falsifying example, once verification found one."""
    declared: tuple[str, ...] = ()
    """The exceptions its functions declare (raise by name, or name in their docstrings):
    a failure with one of them is an invalid input, not a finding."""
    unresolved: str | None = None
    """Why its ``@given`` cannot draw (``ResolutionFailed: Could not resolve ...``), as the probe
    child found without running it: its verdict, with no child pytest of its own."""

    @property
    def name(self) -> str:
        """The first test function's name."""
        for node in ast.parse(self.body).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                return node.name
        return self.id

    def source(self) -> str:
        """A complete test file of this candidate alone."""
        return "\n".join(self.imports) + "\n\n\n" + self.body


def split_source(code: str) -> tuple[list[str], str]:
    """A test file's top-level imports, and everything else (comments dropped)."""
    tree = ast.parse(code)
    imports: list[str] = []
    body: list[str] = []
    for node in tree.body:
        text = ast.get_source_segment(code, node, padded=False) or ast.unparse(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            decorators = [f"@{ast.get_source_segment(code, d)}" for d in node.decorator_list]
            text = "\n".join([*decorators, text]) if decorators else text
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(text)
        else:
            body.append(text)
    return imports, "\n\n\n".join(body) + "\n"


def count_tests(body: str) -> int:
    """Top-level ``test*`` functions and methods of ``Test*`` classes."""
    count = 0
    for node in ast.parse(body).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            count += 1
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            count += sum(
                1
                for item in node.body
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test")
            )
    return count
