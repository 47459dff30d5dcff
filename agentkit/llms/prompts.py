"""Prompt templates with ``{name}`` placeholders (``{{``/``}}`` are literal braces)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PromptTemplate"]

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptTemplate:
    """A template string. Unlike ``str.format``, unknown placeholders and stray braces (say,
    a JSON example) are left as they are, so a template never fails to render. A ``}}`` is
    an escape only while a ``{{`` is open, so literal nested JSON keeps all its braces."""

    def __init__(self, template: str, **partial: Any) -> None:
        self.template = template
        self.partial = dict(partial)

    @property
    def template_vars(self) -> list[str]:
        seen: dict[str, None] = {}
        for match in _TOKEN.finditer(self.template):
            if match.group(1):
                seen[match.group(1)] = None
        return list(seen)

    def partial_format(self, **kwargs: Any) -> PromptTemplate:
        return PromptTemplate(self.template, **{**self.partial, **kwargs})

    def format(self, **kwargs: Any) -> str:
        values = {**self.partial, **kwargs}
        open_escapes = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal open_escapes
            token = match.group(0)
            if token == "{{":
                open_escapes += 1
                return "{"
            if token == "}}":
                if not open_escapes:
                    return token
                open_escapes -= 1
                return "}"
            name = match.group(1)
            return str(values[name]) if name in values else token

        return _TOKEN.sub(replace, self.template)

    def get_template(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PromptTemplate) and (self.template, self.partial) == (
            other.template, other.partial)

    def __repr__(self) -> str:
        return f"PromptTemplate({self.template[:40]!r}...)"
