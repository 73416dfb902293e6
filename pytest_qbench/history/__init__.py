"""Run history: the run store's index of every run, and what it says about tests.

Modules, each small, imports pointing one way:

- ``fingerprint``: the same failure recognised across runs (stdlib only);
- ``analysis``: flips, flaky indicator and trend of a sequence of outcomes (pure);
- ``flakiness``: the one rule that calls a test flaky or broken, and outage runs (pure);
- ``sql``: every statement, portable SQL shared by all backends;
- ``backend``: the ``Index`` protocol a backend implements; ``sqlite``: the embedded backend
  (WAL, ``BEGIN IMMEDIATE``, retries), ``<qbench dir>/index.sqlite``; ``postgres``: the shared
  one (psycopg 3, advisory locks, retries), imported only when a URL names it;
- ``dburl``: the database setting's names and URL forms, passwords hidden (stdlib only);
- ``database``: which index a run or command uses (``--qbench-db``, ``QBENCH_DB``,
  ``qbench_db``), and opening it;
- ``indexer``: a run's records into rows, one transaction per run; retention;
- ``queries``: reading runs and results back;
- ``toollog``: the MCP server's tool-call log (recording, recent calls, totals per tool);
- ``session_end``: what the pytest plugin calls when a run ends (index, then failing tests'
  history); ``failure_history``: that history judged (imported only when a test failed);
- ``shardplan``: CI shards planned from recorded phase times (pure); ``queue``: the queue of
  units machines pull from (``--qbench-queue``); ``shardview``: how balanced a sharded run was
  (``qbench shards``);
- ``files``, ``compare``, ``text``: what the ``qbench`` history subcommands read and print
  (the subcommands themselves are ``pytest_qbench.cli.history``).

Nothing here imports pydantic except the CLI-only modules, so the pytest process indexes its
run with records.
"""

from __future__ import annotations


INDEX_NAME = "index.sqlite"
"""The index's file name in the qbench directory."""
