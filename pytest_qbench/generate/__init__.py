"""Test generation guided by coverage (issue 14): ``qbench generate``'s engine.

The target's code runs: every import of it (ghostwriting, probing, verifying) happens in a child
process with a timeout. ``run.generate(request) -> GenerateResult`` is the entry point.
"""
