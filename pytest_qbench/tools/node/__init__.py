"""The JavaScript/TypeScript front end's checkers: tsc, eslint, oxlint, Biome and Prettier,
the project's own installed binaries (``node_modules/.bin``), their commands and the parsers of
their output (issue 22)."""
