"""Static checks as diagnostics (issue 13): ruff, mypy, pyright and a build check run as child
processes (argument lists, no shell), their machine-readable output parsed into `Diagnostic`
models that point back into the stored raw output.

``spans`` locates items in raw output, ``ruff``, ``mypy``, ``pyright`` and ``build`` parse
each tool's output, ``runner`` runs them and stores a ``qbench check`` run.
"""
