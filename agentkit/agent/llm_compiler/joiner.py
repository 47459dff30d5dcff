"""The LLMCompiler joiner's output: ``Thought: ...`` then ``Action: Finish(<answer>)`` or
``Action: Replan(<reason>)``.

The first ``Action:`` line decides (an answer may span lines, and whatever follows it is
part of it or ignored). The action name is case-insensitive (the original prompts wrote
``finish(...)``). Its content runs to the *matching* parenthesis, so ``Finish(f(x) = 3)``
answers ``f(x) = 3``, and may span lines; text after it is ignored. The thought is the text
after the last ``Thought:`` before the action (``""`` if there is none).

Fixes over LlamaIndex: ``Replan(...)`` replans (LlamaIndex looked for "Replan" *inside* the
parentheses, so ``Replan(need data)`` finished with the answer "need data"); the answer is
not cut at the first ``)``; an output with no action is an error, not its last line.
Anything unreadable raises :class:`JoinerParseError` (a ``ValueError``) naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentkit.agent.llm_compiler.plan import _show

__all__ = ["JoinerOutput", "JoinerParseError", "parse_joiner_output"]

_ACTION = re.compile(r"^[ \t]*Action:[ \t]*", re.MULTILINE)
_THOUGHT = re.compile(r"^[ \t]*Thought:", re.MULTILINE)
_NAME = re.compile(r"(finish|replan)\b[ \t]*", re.IGNORECASE)


class JoinerParseError(ValueError):
    """The joiner's text has no readable ``Action:``; ``line`` is its 1-based line, if one
    line is to blame."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class JoinerOutput:
    """The joiner's decision: finish with ``answer``, or replan (``answer`` is the reason)."""

    thought: str
    answer: str
    is_replan: bool = False


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def parse_joiner_output(text: str) -> JoinerOutput:
    """Read the joiner's decision (module docstring); :class:`JoinerParseError` if there is
    no ``Action: Finish(...)``/``Action: Replan(...)`` with balanced parentheses."""
    action = _ACTION.search(text)
    if action is None:
        raise JoinerParseError("the joiner's output has no `Action:` line; it must end with "
                               "`Action: Finish(<answer>)` or `Action: Replan(<reason>)`")
    line = _line_of(text, action.start())
    shown = _show(text[action.start():].split("\n", 1)[0])
    name = _NAME.match(text, action.end())
    if name is None:
        raise JoinerParseError(f"line {line}: `{shown}` is neither Finish(<answer>) nor "
                               "Replan(<reason>)", line=line)
    opening = name.end()
    if not text.startswith("(", opening):
        raise JoinerParseError(f"line {line}: `{shown}`: {name.group(1)} needs its "
                               f"{_content_name(name.group(1))} in parentheses: "
                               f"{name.group(1)}(...)", line=line)
    content = _balanced(text, opening)
    if content is None:
        raise JoinerParseError(f"line {line}: `{shown}`: the parenthesis after "
                               f"{name.group(1)} is never closed (unbalanced parentheses)",
                               line=line)
    thoughts = list(_THOUGHT.finditer(text, 0, action.start()))
    thought = text[thoughts[-1].end():action.start()].strip() if thoughts else ""
    return JoinerOutput(thought=thought, answer=content.strip(),
                        is_replan=name.group(1).lower() == "replan")


def _content_name(action: str) -> str:
    return "reason" if action.lower() == "replan" else "answer"


def _balanced(text: str, opening: int) -> str | None:
    """The text inside the parenthesis at ``opening`` up to its match, or None."""
    depth = 0
    for index in range(opening, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[opening + 1:index]
    return None
