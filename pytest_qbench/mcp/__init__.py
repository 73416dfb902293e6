"""The MCP server (``qbench-mcp``, ``qbench mcp``) and its tools; a front end, like ``cli/``.

``server`` is the one module that imports the SDK (everything else runs and tests without
it); it registers thin tool functions over ``service.QBenchTools``. Modules, imports pointing one way:

- ``models``: the tools' outputs (pydantic; their JSON Schemas are the output schemas);
- ``config``: the server's settings and their command-line options;
- ``paths``: every path an assistant gives, resolved inside the project root or refused;
- ``command``: a run request into pytest's argument list (no shell, no free-form arguments);
- ``process``: the pytest child in its own process group: start, progress, stop, kill;
- ``budget``: keeping responses within a size budget, traces keeping their end;
- ``results``: a finished run into a ``RunResult``, pytest's exit status into data or an error;
- ``runs``: stored runs: one failure, pages of raw output, the history index;
- ``catalog``, ``ingest``: the test catalog (SQLite FTS5) and what fills it;
- ``ingest`` runs pytest with ``pytest_qbench.plugin.collect_dump``, the small pytest plugin
  that dumps the collection (it lives in ``plugin/``: nothing here imports pytest);
- ``text``: the compact text each tool returns next to its structured result;
- ``launch``: ``qbench mcp`` and ``qbench-mcp``, which import the SDK only when they start.
"""

from __future__ import annotations
