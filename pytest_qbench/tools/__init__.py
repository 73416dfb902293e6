"""Runners and checkers other than pytest's own plugin: the JavaScript/TypeScript test runners
(vitest, jest), a monorepo's package builds, and running the chosen test runners as one run.

Each tool is a set of pure functions (detect, command, parse) over the project's files and its
machine-readable output; the processes run supervised (``execute``)."""
