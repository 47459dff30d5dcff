"""Fixtures of the OpenAI backend tests: the respx fake endpoint and a clean environment.

No ``__init__.py`` here on purpose: as a package, this directory would be importable as
``openai`` (tests/ is on sys.path) and shadow the SDK.
"""

from collections.abc import Iterator

import pytest

from mocks.openai_server import fake_openai  # noqa: F401  (the fixture)


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tests never read the machine's OPENAI_API_KEY / OPENAI_BASE_URL."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield
