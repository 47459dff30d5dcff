"""Plugin tests run inner pytest sessions in-process (``pytester.runpytest``); the agentkit
plugin loads there from its ``pytest11`` entry point, as in a user's project. (``pytester``
is enabled in the top-level ``tests/conftest.py``: pytest refuses ``pytest_plugins`` here.)

The inner project has its own tool module (``calc_tools``) and scenario files under a folder
named ``scenarios``; helpers here write them.

pytester restores ``sys.modules`` after every inner run, so a module first imported inside one
is imported again by the next; the heavy ones are imported here once (hypothesis alone would
make every inner run seconds slower).
"""

from __future__ import annotations

import hypothesis  # noqa: F401
import pytest

import mocks.openai_server  # noqa: F401
from plugin_project import ADDING, CALC_TOOLS, ini, write


@pytest.fixture(autouse=True)
def _pytest_asyncio_configured(pytester: pytest.Pytester) -> None:
    """pytest-asyncio (a dev dependency) loads in inner runs too; configure it as a project
    using it would, so it does not warn about its unset default."""
    ini(pytester)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """An inner project with the `calc_tools` module and ``scenarios/adding.yaml``."""
    write(pytester, "calc_tools.py", CALC_TOOLS)
    write(pytester, "scenarios/adding.yaml", ADDING)
    pytester.syspathinsert()
    return pytester
