"""Where a plain test's cassette lives (the ``agentkit_llm`` fixture): one per test, named
after it, beside it -- ``<test folder>/cassettes/<test module>/<test name>.yaml`` (a test in
a class: ``<Class>.<test name>.yaml``) -- unless ``@pytest.mark.agentkit_cassette("path")``
names one (relative to the test file)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

__all__ = ["cassette_for", "MARKER"]

MARKER = "agentkit_cassette"
_UNSAFE = re.compile(r"[^\w.\[\]=,+@-]")
_MAX_NAME = 180


def cassette_for(item: pytest.Item) -> Path:
    """The cassette file of ``item``."""
    marker = item.get_closest_marker(MARKER)
    chosen = (marker.args[0] if marker.args else marker.kwargs.get("path")) if marker else None
    if chosen:
        return item.path.parent / str(chosen)
    name = ".".join(item.nodeid.split("::")[1:]) or item.name
    name = _UNSAFE.sub("_", name)[:_MAX_NAME]
    return item.path.parent / "cassettes" / item.path.stem / f"{name}.yaml"
