"""Reading model-written text as Python, for the parsers that do (LLMCompiler arguments,
Chain-of-Abstraction calls, ReAct tool inputs): where a string literal ends (the plan and chain
parsers skip strings while they scan for brackets and references), and an expression parsed
without Python's warnings."""

from __future__ import annotations

import ast
import threading
import warnings

__all__ = ["parse_expression", "string_literal_end"]

# warnings.catch_warnings changes process-wide state; parses made here take turns.
_QUIET = threading.Lock()


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")`` with Python's warnings about the source silenced.

    Python warns about some source (an invalid escape such as a regex's ``\\d``, ``1if``):
    for model text that is noise on the user's console, and where warnings are errors (pytest's
    ``filterwarnings = error``, ``python -W error``) the warning becomes a ``SyntaxError`` --
    the same text would parse differently there. Errors stay errors."""
    with _QUIET, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, mode="eval")


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
