"""LLMCompiler plans: the parser for the planner's text and the ``$N`` references in it.

A plan is numbered actions, each optionally preceded by ``Thought:`` lines (the thought
belongs to the next action), ending with ``join()`` and ``<END_OF_PLAN>``::

    Thought: look both up
    1. search("cheetah")
    2. search("greyhound")
    3. math("ratio of $1 to $2", ["$1", "$2"])
    4. join()<END_OF_PLAN>

Arguments are Python literals, positional. ``$N``/``${N}`` (quoted, inside a text, or bare
as a whole argument: ``add($1, 2)``) is the output of task N and makes task N a dependency;
``join`` depends on every task before it. Other lines (prose, code fences) are ignored.

What is wrong with the plan as a whole raises :class:`PlanParseError` (a ``ValueError``)
naming the line: no actions, no ``join()``, an action line that is not ``N. tool(args)``,
ids that do not strictly increase. What is wrong with one task -- arguments that are not
literals, keyword arguments, a ``$N`` with no task N before it (a forward reference, which
is how a cycle would arise) -- is the task's ``error``, naming the task and its line: the
task then becomes an error observation and the rest of the plan still runs. Actions after
``join()`` and arguments given to ``join`` are ignored, each with a note in
:attr:`Plan.notes`. Unlike LlamaIndex, the parser does not know the tools: an unknown tool
is found when the plan runs, and is an error observation too, not a crash.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.agent._literals import parse_expression, string_literal_end
from agentkit.agent.llm_compiler.prompts import END_OF_PLAN

__all__ = [
    "JOIN",
    "Plan",
    "PlanTask",
    "PlanParseError",
    "parse_plan",
    "references",
    "substitute",
]

JOIN = "join"

_THOUGHT = re.compile(r"Thought:\s*(.*)", re.DOTALL)
_NUMBERED = re.compile(r"[0-9]+\.(?![0-9])")
_ACTION = re.compile(r"([0-9]+)\.\s*([A-Za-z_][A-Za-z0-9_]*)\((.*)\)\s*", re.DOTALL)
_REF = re.compile(r"\$(?:\{([0-9]+)\}|([0-9]+))")
_WHOLE_REF = re.compile(r"\s*\$(?:\{([0-9]+)\}|([0-9]+))\s*")
_MAX_ID_DIGITS = 9
_LITERAL_HINT = 'quote text ("...") and refer to a result as $N'


class PlanParseError(ValueError):
    """The planner's text is not a usable plan; the message names what and where
    (``line`` is the 1-based line of the plan text, when one line is to blame)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class PlanTask:
    """One action of a plan. ``args`` are the parsed positional literals, with every
    reference kept as the text ``"$N"``; ``deps`` are the ids of the tasks it waits for;
    ``error`` says why the task cannot run (it then becomes an error observation)."""

    idx: int
    tool: str
    args: tuple[Any, ...]
    deps: tuple[int, ...]
    line: int
    thought: str | None = None
    error: str | None = None

    @property
    def is_join(self) -> bool:
        return self.tool == JOIN

    def where(self) -> str:
        """``task N (line L)``, for messages."""
        return f"task {self.idx} (line {self.line})"


@dataclass(frozen=True)
class Plan:
    """A parsed plan: its tasks in id order, ``join`` last, and notes on what was ignored."""

    tasks: tuple[PlanTask, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def actions(self) -> tuple[PlanTask, ...]:
        """Every task but ``join``: the tool calls to run."""
        return self.tasks[:-1]

    @property
    def join(self) -> PlanTask:
        return self.tasks[-1]


def references(value: Any) -> Iterator[int]:
    """The task ids referenced (``$N``/``${N}``) anywhere in the strings of ``value``
    (lists, tuples and dict values are searched; dict keys are not)."""
    if isinstance(value, str):
        for braced, bare in _REF.findall(value):
            yield int(braced or bare)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from references(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from references(item)


def substitute(value: Any, whole: Callable[[int], Any], text: Callable[[int], str]) -> Any:
    """``value`` with its references filled in: a string that is only ``$N`` becomes
    ``whole(N)`` (the output object itself), a reference inside a longer string is replaced
    by ``text(N)``. The structure is edited, never re-evaluated (LlamaIndex substituted into
    the argument text and parsed it again, so an output could inject code-like text)."""
    if isinstance(value, str):
        match = _WHOLE_REF.fullmatch(value)
        if match:
            return whole(int(match.group(1) or match.group(2)))
        return _REF.sub(lambda m: text(int(m.group(1) or m.group(2))), value)
    if isinstance(value, list):
        return [substitute(item, whole, text) for item in value]
    if isinstance(value, tuple):
        return tuple(substitute(item, whole, text) for item in value)
    if isinstance(value, dict):
        return {key: substitute(item, whole, text) for key, item in value.items()}
    return value


def _quote_bare_references(text: str) -> str:
    """Turn ``$N``/``${N}`` outside string literals into the literal ``"$N"`` (so ``add($1,
    2)`` parses); string literals are copied untouched."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char in "'\"":
            # an unclosed string is copied as it is: parsing the arguments then says so
            end = string_literal_end(text, index) or len(text)
            out.append(text[index:end])
            index = end
            continue
        match = _REF.match(text, index) if char == "$" else None
        if match:
            out.append(f'"{match.group(0)}"')
            index = match.end()
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _show(text: str, limit: int = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters (for quoting it in messages)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _parse_arguments(source: str) -> tuple[tuple[Any, ...], str | None]:
    """The positional literals of an argument list, or an error saying which one is wrong."""
    if not source.strip():
        return (), None
    try:
        tree = parse_expression(f"_({_quote_bare_references(source)})")
    except Exception as exc:  # noqa: BLE001 (untrusted text: any failure to parse is the plan's error)
        reason = exc.msg if isinstance(exc, SyntaxError) else str(exc) or type(exc).__name__
        return (), (f"its arguments `{_show(source)}` are not Python literals ({reason}); "
                    f"{_LITERAL_HINT}")
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "_"):
        return (), f"cannot read its arguments `{_show(source)}` (unbalanced parentheses?)"
    if call.keywords:
        keyword = call.keywords[0]
        shown = f"{keyword.arg}=" if keyword.arg else "**"
        return (), (f"keyword argument `{shown}`: write the arguments positionally, in the "
                    "documented order")
    values = []
    for number, node in enumerate(call.args, 1):
        try:
            if isinstance(node, ast.Starred):
                raise ValueError("starred")
            values.append(ast.literal_eval(node))
        except Exception:  # noqa: BLE001 (anything literal_eval refuses is not a literal)
            try:
                shown = _show(ast.unparse(node))
            except Exception:  # noqa: BLE001 (a node unparse cannot show is shown as ...)
                shown = "..."
            return (), f"argument {number} `{shown}` is not a Python literal; {_LITERAL_HINT}"
    return tuple(values), None


class _PlanReader:
    """Reads a plan line by line (see the module docstring for the rules)."""

    def __init__(self) -> None:
        self.tasks: list[PlanTask] = []
        self.lines: dict[int, int] = {}
        self.notes: list[str] = []
        self.thoughts: list[str] = []
        self.joined = False

    def read(self, text: str) -> Plan:
        last_action_line = 0
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.replace(END_OF_PLAN, "").strip()
            if not line:
                continue
            thought = _THOUGHT.fullmatch(line)
            if thought is not None:
                if not self.joined:
                    self.thoughts.append(thought.group(1).strip())
                continue
            if _NUMBERED.match(line) is None:
                continue  # prose between actions
            if self.joined:
                self.notes.append(f"line {number}: `{_show(line)}` comes after join() and "
                                  "was ignored")
                continue
            self._action(line, number)
            last_action_line = number
        if not self.tasks:
            raise PlanParseError("the plan has no actions: expected numbered lines like "
                                 "`1. tool(arguments)`, ending with `N. join()`")
        if not self.joined:
            raise PlanParseError(
                f"the plan has no join() (its last action is on line {last_action_line}): a "
                f"plan must end with `N. join()`; was it cut off?", line=last_action_line)
        return Plan(tuple(self._check_references()), tuple(self.notes))

    def _action(self, line: str, number: int) -> None:
        match = _ACTION.fullmatch(line)
        if match is None:
            raise PlanParseError(f"line {number}: `{_show(line)}` is not an action; write "
                                 "`N. tool(arguments)` (no comments after it)", line=number)
        digits, tool, source = match.groups()
        if len(digits) > _MAX_ID_DIGITS:
            raise PlanParseError(f"line {number}: task id {digits[:12]}... is too long",
                                 line=number)
        idx = int(digits)
        if self.tasks and idx <= self.tasks[-1].idx:
            raise PlanParseError(f"line {number}: task id {idx} does not follow "
                                 f"{self.tasks[-1].idx}; ids must strictly increase",
                                 line=number)
        thought = " ".join(self.thoughts) or None
        self.thoughts = []
        self.lines[idx] = number
        if tool == JOIN:
            if source.strip():
                self.notes.append(f"line {number}: the arguments of join() "
                                  f"`{_show(source)}` were ignored")
            self.tasks.append(PlanTask(idx, JOIN, (), tuple(t.idx for t in self.tasks),
                                       number, thought))
            self.joined = True
            return
        args, error = _parse_arguments(source)
        self.tasks.append(PlanTask(idx, tool, args, tuple(sorted(set(references(args)))),
                                   number, thought, error and f"task {idx} (line {number}): "
                                                              f"{error}"))

    def _check_references(self) -> Iterator[PlanTask]:
        """Each reference must name an earlier task; a task that refers to itself or to a
        later or missing task gets an error (naming the cycle, if the reference closes one)."""
        graph = {task.idx: task.deps for task in self.tasks}
        for task in self.tasks:
            bad = [ref for ref in task.deps if not ref < task.idx or ref not in graph]
            if task.error is not None or not bad:
                yield task
                continue
            yield PlanTask(task.idx, task.tool, task.args,
                           tuple(ref for ref in task.deps if ref not in bad), task.line,
                           task.thought, f"{task.where()}: {self._bad_reference(task, bad[0], graph)}")

    def _bad_reference(self, task: PlanTask, ref: int,
                       graph: Mapping[int, tuple[int, ...]]) -> str:
        if ref == task.idx:
            return f"uses ${ref}, its own result (a cycle)"
        if ref not in graph:
            return f"uses ${ref}, but the plan has no task {ref}"
        cycle = _path(graph, ref, task.idx)
        if cycle is not None:
            chain = " -> ".join(f"${n}" for n in [task.idx, *cycle])
            return f"uses ${ref} (line {self.lines[ref]}), which needs this task's result: a cycle ({chain})"
        return (f"uses ${ref}, but task {ref} comes after it (line {self.lines[ref]}); a task can "
                "only use the results of tasks before it")


def _path(graph: Mapping[int, tuple[int, ...]], start: int, goal: int) -> list[int] | None:
    """A chain of references from ``start`` to ``goal`` (both included), if there is one."""
    trail: dict[int, int | None] = {start: None}
    frontier = [start]
    while frontier:
        node = frontier.pop()
        if node == goal:
            chain = [node]
            while trail[chain[-1]] is not None:
                chain.append(trail[chain[-1]])  # type: ignore[arg-type]
            return chain[::-1]
        for ref in graph.get(node, ()):
            if ref not in trail:
                trail[ref] = node
                frontier.append(ref)
    return None


def parse_plan(text: str) -> Plan:
    """Parse the planner's text into a :class:`Plan`; :class:`PlanParseError` if the text is
    not a usable plan (the module docstring has the rules)."""
    return _PlanReader().read(text)
