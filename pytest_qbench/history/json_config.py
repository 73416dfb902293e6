"""pydantic's configuration of the dataclasses that are part of a command's ``--json`` output
(a plain dict: pydantic is imported only by the models that use them; stdlib only, so that
``qbench``'s parser can show a default of such a dataclass without loading the history)."""

from __future__ import annotations


JSON_CONFIG = {"extra": "forbid", "use_attribute_docstrings": True}
