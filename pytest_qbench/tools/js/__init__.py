"""JavaScript/TypeScript projects: their package.json, package manager and workspaces, the
vitest and jest runners, and the workspace packages' ``build`` scripts."""
