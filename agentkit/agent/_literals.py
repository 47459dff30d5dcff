"""Where a Python string literal inside model-written text ends, for the plan and chain
parsers (LLMCompiler arguments, Chain-of-Abstraction calls), which both skip strings while
they scan for brackets and references."""

from __future__ import annotations

__all__ = ["string_literal_end"]


def string_literal_end(text: str, start: int) -> int | None:
    """The index just past the string literal whose quote (``'``, ``"`` or a triple quote) is
    at ``start``, or ``None`` when it is not closed. A backslash escapes the next character;
    a one-quote string cannot span a line break (as in Python), a triple-quoted one can."""
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    position = start + len(quote)
    while position < len(text):
        if text[position] == "\\":
            position += 2
        elif text.startswith(quote, position):
            return position + len(quote)
        elif len(quote) == 1 and text[position] in "\r\n":
            return None
        else:
            position += 1
    return None
