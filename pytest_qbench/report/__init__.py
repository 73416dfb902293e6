"""The report library: everything about a report but running pytest. Never imports pytest.

- ``models``: the report format (pydantic); ``shapes`` (+ ``shapes.json``) and ``records``:
  plain JSON records of the same shapes, built without pydantic on the hot path;
- ``aggregate``: results folded into a summary and a bounded view;
- ``render``, ``templates/``: Jinja rendering; ``digest``: the failure digest; ``outputs``:
  a finished report written to its files; ``github``: job summary and annotations;
- ``store``: the run directory and the crash-safe result stream; ``readers``: reports and
  streams read back and validated; ``merge``: shard reports combined; ``junit``: JUnit XML in;
- ``environment``: where the tests ran, secrets redacted; ``casemeta``: test-case metadata;
- ``metric_text``: how metric failures read; ``gates/``: the gates' verdicts, statistics and
  wording; ``coverage/``: coverage.py data into records, and how coverage is shown.
"""

from __future__ import annotations
