"""The MCP server (``qbench-mcp``, ``qbench mcp``) and its tools; a front end, like ``cli/``.

``server`` is the one module that imports the SDK (everything else runs and tests without
it): one ``@tool`` function per tool, whose return annotation is the tool's result model.

One module per tool (or close family of tools), each holding the tool's logic, its result
model (pydantic; field docstrings become the output schema's descriptions, and no field is
computed, so a result validates against its own schema) and its text; each imports its heavy
machinery when the tool is first called:

- ``testrun``: ``run_test_workflow``; ``failure``: ``get_test_failure``; ``output``:
  ``get_run_output``; ``run_history``: ``list_runs``, ``flaky_tests``; ``search``:
  ``search_tests``, ``get_test_by_key``, ``find_similar_tests``; ``ingest``: ``ingest_tests``
  (it runs pytest with ``pytest_qbench.plugin.collect_dump``, which lives in ``plugin/``:
  nothing here imports pytest); ``build``: ``run_build_workflow``; ``generation``:
  ``generate_tests_workflow``; ``health``: ``check_health``.

Shared building blocks, imports pointing one way:

- ``tools``: ``QBenchTools``, every tool as a method over the run lifecycle;
- ``service``: the run lifecycle (start, watch, stop, finish a child; one run at a time);
- ``process``: the pytest child (through ``core/supervise.py``): progress, stop, kill;
- ``command``: a request into the child's argument list (no shell, no free-form arguments);
- ``config``: the server's settings and their command-line options;
- ``paths``: every path an assistant gives, resolved inside the project root or refused;
- ``runs``: stored runs: finding one, its report, its metadata, the history index;
- ``catalog``: the test catalog (SQLite FTS5);
- ``budget``, ``text``: keeping responses within a size budget; text helpers;
- ``schemas``: the short schemas ``list_tools`` publishes; ``calllog``: the tool-call log;
- ``launch``: ``qbench mcp`` and ``qbench-mcp``, which import the SDK only when they start.
- ``server_import``: the server imported with uvicorn hidden (only the SDK's HTTP server uses it).
"""

from __future__ import annotations
