"""Parse what a ReAct model wrote into a reasoning step.

Rules (SPEC §5): whichever of ``Action:`` and ``Answer:`` comes first decides
(:func:`first_marker`): an ``Action:`` wins over an ``Answer:`` after it (a model that wrote an
action and then imagined its observation and answer must run the tool), and an answer runs to
the end of the text, ``Action:`` inside it included. With neither, a text without ``Thought:``
is an implicit answer (the whole text). An answer with no ``Thought:`` before it keeps only
what follows ``Answer:`` (a fix over LlamaIndex, which returned ``"Answer: X"``). The action
name ends at whitespace or ``(``; the input is the outermost ``{...}`` after ``Action Input:``,
read leniently (single quotes, trailing commas, Python literals, ``//`` and ``/* */``
comments, prose after it). Anything
else raises ``ValueError("Could not parse output: ...")`` naming what is wrong -- except an
``Action:`` with no ``Action Input:``, which is upstream's ``ValueError("Could not extract
tool use from input text: ...")`` word for word. Any text yields a step or one of those
errors, never another.

Deciding by the first marker (LlamaIndex let an ``Action:`` anywhere win) makes the decision
final as soon as a prefix of the text has made it, so a streamed answer handed out early is
the answer the whole text parses to: ``chat`` and ``stream_chat`` agree on every text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, Literal

from agentkit.agent._literals import parse_expression
from agentkit.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ResponseReasoningStep,
)

__all__ = ["ReActOutputParser", "parse_action_input", "first_marker", "IMPLICIT_THOUGHT"]

IMPLICIT_THOUGHT = "(Implicit) I can answer without any more tools!"


def _unescape(text: str) -> str:
    """HTML entities decoded; ``html`` (and its entity table) is imported only for a text that
    may hold one, which keeps it out of ``import agentkit.agent``."""
    import html

    return html.unescape(text)


_ACTION_NAME = re.compile(r"[ \t]*([^\s(]+)")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_JSON_WORD = re.compile(r"(?<!\w)(true|false|null)(?!\w)")
_PYTHON_WORDS = {"true": "True", "false": "False", "null": "None"}
_NAME_PUNCTUATION = "`*'\".,:;"


def first_marker(text: str) -> Literal["action", "answer"] | None:
    """Which of ``Action:`` and ``Answer:`` comes first in ``text`` (None: neither yet).

    The parser's decision. Appending text never changes a decision once made, so a stream
    can act on it before the model has finished.
    """
    action_at, answer_at = text.find("Action:"), text.find("Answer:")
    if answer_at >= 0 and not 0 <= action_at < answer_at:
        return "answer"
    return "action" if action_at >= 0 else None


def _fail(output: str, reason: str) -> ValueError:
    return ValueError(f"Could not parse output: {reason}. Output was:\n{output}")


_Run = tuple[str, str]  # (text, "code" | "string" | "comment")


# Every character belongs to exactly one run; an unclosed string or block comment runs to
# the end (a lone trailing backslash included).
_RUN = re.compile(r"""
    (?P<string> "[^"\\]*+(?:\\.?[^"\\]*+)*+(?:"|\Z) | '[^'\\]*+(?:\\.?[^'\\]*+)*+(?:'|\Z) )
  | (?P<comment> //[^\n]*+ | /\*.*?(?:\*/|\Z) )
  | (?P<code> (?:[^"'/]++|/(?![/*]))+ )
""", re.VERBOSE | re.DOTALL)


def _runs(text: str) -> list[_Run]:
    """``text`` cut into runs of code, string literals (either quote, with their quotes;
    backslash escapes respected) and comments (``// ...`` to the end of the line, ``/* ... */``).
    Every repair below edits code only, never what the model put inside a string, and a
    comment hides quotes and braces."""
    return [(match.group(), match.lastgroup or "code") for match in _RUN.finditer(text)]


def _substitute_in_code(pattern: re.Pattern[str],
                        replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
    return "".join(pattern.sub(replacement, part) if kind == "code" else part
                   for part, kind in _runs(text))


def _without_comments(text: str) -> str:
    """Drop ``//`` and ``/* */`` comments, which LlamaIndex's reader accepts in an Action
    Input; a block comment becomes a space so tokens stay apart. (``#`` comments need no help:
    the Python-literal reading skips them, where LlamaIndex reads the input as ``{}``.)"""
    return "".join(" " if kind == "comment" and part.startswith("/*") else
                   "" if kind == "comment" else part
                   for part, kind in _runs(text))


def _outermost_braces(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text`` (strings and comments respected), or up to
    the last ``}``."""
    start = text.find("{")
    if start < 0:
        return None
    depth, offset = 0, start
    for part, kind in _runs(text[start:]):
        for index, char in enumerate(part if kind == "code" else ""):
            depth += {"{": 1, "}": -1}.get(char, 0)
            if char == "}" and depth == 0:
                return text[start:offset + index + 1]
        offset += len(part)
    end = text.rfind("}")
    return text[start:end + 1] if end > start else None


def _readings(text: str) -> Iterator[str]:
    """The texts to try, lazily (the first usually parses): as written, then without
    comments; the same with HTML entities decoded (small models trained on web text write
    quotes as ``&#34;``)."""
    unescaped = _unescape(text) if "&" in text else text
    for reading in (text, unescaped) if unescaped != text else (text,):
        yield reading
        stripped = _without_comments(reading)
        if stripped != reading:
            yield stripped


def _python_literal(text: str) -> Any:
    """``ast.literal_eval`` of ``text`` (parsed without Python's warnings)."""
    return ast.literal_eval(parse_expression(text.lstrip(" \t")))


_ATTEMPTS: tuple[Callable[[str], Any], ...] = (
    json.loads,
    lambda text: json.loads(_substitute_in_code(_TRAILING_COMMA, r"\1", text)),
    _python_literal,
    # JSON's true/false/null as Python's True/False/None
    lambda text: _python_literal(
        _substitute_in_code(_JSON_WORD, lambda word: _PYTHON_WORDS[word[1]], text)),
)


def parse_action_input(text: str) -> dict[str, Any]:
    """Read a tool-input object leniently; ``ValueError`` if it is not an object."""
    for reading in _readings(text):
        for attempt in _ATTEMPTS:
            try:
                value = attempt(reading)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict):
                return {str(key): item for key, item in value.items()}
    raise ValueError(f"not a JSON object: {text[:200]}")


def _parse_action(output: str) -> ActionReasoningStep:
    at = output.index("Action:")
    before = output[:at]
    thought = before.split("Thought:", 1)[1] if "Thought:" in before else before
    after = output[at + len("Action:"):]
    name_match = _ACTION_NAME.match(after)
    action = name_match.group(1).strip(_NAME_PUNCTUATION) if name_match else ""
    if not action:
        raise _fail(output, "'Action:' is not followed by a tool name")
    rest = after[name_match.end():] if name_match else after
    marker = rest.find("Action Input:")
    if marker < 0:
        # upstream's words: they reach the model (a workflow ReActAgent's retry message)
        raise ValueError(f"Could not extract tool use from input text: {output}")
    action_input = _read_action_input(output, rest[marker + len("Action Input:"):])
    # ActionReasoningStep(...) validated without BaseModel.__init__'s frame
    return ActionReasoningStep.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
        {"thought": thought.strip(), "action": action, "action_input": action_input})


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _read_action_input(output: str, text: str) -> dict[str, Any]:
    """The object after ``Action Input:``. Models almost always write valid JSON, which the
    JSON decoder reads from the first ``{`` to the end of the object in one pass: the same
    span and value as scanning for the outermost braces and reading them leniently, which
    is what happens to anything else."""
    start = text.find("{")
    if start >= 0:
        try:  # raw_decode(text, start) without its Python frame: StopIteration is its error
            value, _end = _SCAN(text, start)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if isinstance(value, dict):
                return value
    braces = _outermost_braces(text)
    if braces is None:
        raise _fail(output, "'Action Input:' is not followed by a {...} object")
    try:
        return parse_action_input(braces)
    except ValueError as exc:
        raise _fail(output, f"the Action Input is {exc}") from None


def _parse_answer(output: str, is_streaming: bool) -> ResponseReasoningStep:
    at = output.index("Answer:")
    thought_at = output.find("Thought:")
    if thought_at < 0:
        thought = IMPLICIT_THOUGHT
    else:
        thought = output[thought_at + len("Thought:"):at].strip() if thought_at < at else ""
    # ResponseReasoningStep(...) validated without BaseModel.__init__'s frame
    return ResponseReasoningStep.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
        {"thought": thought, "response": output[at + len("Answer:"):].strip(),
         "is_streaming": is_streaming})


class ReActOutputParser:
    """Turns model output into an Action, a Response, or a ``ValueError``."""

    def parse(self, output: str, is_streaming: bool = False) -> BaseReasoningStep:
        if not isinstance(output, str):
            raise ValueError(f"Could not parse output: expected text, got {type(output).__name__}")
        decision = first_marker(output)
        if decision == "action":
            return _parse_action(output)
        if decision == "answer":
            return _parse_answer(output, is_streaming)
        if "Thought:" in output:
            raise _fail(output, "it has a 'Thought:' but neither an 'Action:' nor an 'Answer:'")
        return ResponseReasoningStep(thought=IMPLICIT_THOUGHT, response=output.strip(),
                                     is_streaming=is_streaming)

    def format(self, output: str) -> str:
        return output
