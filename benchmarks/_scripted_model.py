"""A scripted stand-in for a language model (``qbench generate --llm-command``), used by
``generate_compare.py`` for the ``qbench+llm`` tool: it reads the prompt on its standard input
and answers with a test that calls the function named there once, with a plain value for each
argument without a default (by annotation: ``"a"``, ``1``, ``1.0``, ``True``, ``[]``,
``{}``), catching any exception; a method gets an answer without code. It shows qbench's loop
(prompt, verification, follow-up, budget, acceptance) at work, not a model's quality."""

from __future__ import annotations

import ast
import re
import sys


VALUES = {"str": '"a"', "int": "1", "float": "1.0", "bool": "True", "list": "[]", "dict": "{}"}


def answer(prompt: str) -> str:
    """The test for the function the prompt names, or a refusal."""
    found = re.search(r"the function `(\w+)` of the module `([\w.]+)`", prompt)
    if found is None:
        return "I cannot write a test for a method without knowing how to build its object."
    name, module = found.groups()
    definition = re.search(rf"^\s*\d+ \| (def {name}\(.*?\).*?:)\s*$", prompt, re.M | re.S)
    args = _arguments(definition.group(1) if definition else f"def {name}():")
    return (
        f"```python\nfrom {module} import {name}\n\n\ndef test_{name}_scripted():\n"
        f"    try:\n        {name}({args})\n    except Exception:\n        pass\n```\n"
    )


def _arguments(header: str) -> str:
    """``a="a", n=1`` for the parameters of ``def f(a: str, n: int, k=2):``."""
    text = re.sub(r"\n\s*\d+ \| ", " ", header) + "\n    pass\n"
    try:
        node = ast.parse(text).body[0]
    except SyntaxError:
        return ""
    assert isinstance(node, ast.FunctionDef)
    params = node.args.posonlyargs + node.args.args
    required = params[: len(params) - len(node.args.defaults)]
    parts = []
    for param in required:
        if param.arg in ("self", "cls"):
            continue
        kind = ast.unparse(param.annotation).split("[")[0] if param.annotation else "str"
        parts.append(VALUES.get(kind, '"a"'))
    return ", ".join(parts)


if __name__ == "__main__":
    sys.stdout.write(answer(sys.stdin.read()))
