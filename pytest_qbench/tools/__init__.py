"""Runners and checkers behind one plugin interface (issue 22).

A *checker* (ruff, mypy, tsc, eslint...) finds `Diagnostic`s; a *runner* (pytest, vitest,
jest...) runs tests into `TestResult`s. Each is described by a `spec.Checker` or `spec.Runner`
and returned by a plugin's ``qbench_checkers()`` / ``qbench_runners()`` hook (``hookspecs``).
The built-in ones are plugins of the same interface (``builtin/``); a third party adds its own
by installing a package with an entry point in the ``qbench.tools`` group (``registry``).
The JavaScript/TypeScript runners, a monorepo's package builds (``js/``) and running the chosen
test runners as one run (``run_tests``) live here too.
"""
