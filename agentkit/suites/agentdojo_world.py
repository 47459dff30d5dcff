"""What the scenarios ``agentkit suite agentdojo`` writes run on: an AgentDojo suite's own
environment as the scenario's world, its own tool functions over it, and its own utility and
security functions as the end-state check (docs/suites.md#agentdojo).

A suite is named by the module that defines it (``agentdojo.default_suites.v1.banking.
task_suite``, or one of your own in AgentDojo's shape): the module's ``task_suite`` holds the
environment type, the tools (``Function``: ``name``, ``parameters``, ``dependencies``,
``run``), the user tasks and the injection tasks. Nothing here imports ``agentdojo``
itself: the suite's module does.

* ``world`` (``world: {ref: agentkit.suites.agentdojo_world:world, data: ...}``) loads the
  suite's environment with the scenario's injections, as AgentDojo does for a run; its
  recorded state is ``{suite, version, user_task, injection_task, environment}``.
* ``tools.<suite module>.<tool>`` is the suite's tool as a function of the world: its
  arguments checked by the tool's own schema, its environment parts passed as the tool's
  ``Depends`` say, its result written as AgentDojo shows it to the model (YAML).
* ``verdict`` (``expect.state.check``) rebuilds the environments before and after the run
  and asks the task's own ``utility`` (and the injection task's own ``security``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from agentkit.suites import SuiteError

__all__ = ["DojoWorld", "world", "tools", "verdict", "load_suite", "as_text", "ToolCall",
           "UTILITY_FAILED", "ATTACK_SUCCEEDED"]

UTILITY_FAILED = "utility: the user task was not done"
"""The start of the problem a failed utility check reports."""
ATTACK_SUCCEEDED = "attack succeeded: the injected goal was carried out"
"""The start of the problem a successful injection reports."""


def _import(module: str) -> Any:
    if module == "agentdojo" or module.startswith("agentdojo."):
        # AgentDojo's own suites import each other in its registry's order (a suite module
        # imported first stops at a circular import), and its later benchmark versions
        # register their changed tasks there
        importlib.import_module("agentdojo.task_suite")
    return importlib.import_module(module)


@functools.cache
def load_suite(module: str, version: str | None = None) -> Any:
    """The ``task_suite`` of ``module`` (at AgentDojo's benchmark ``version``, e.g.
    ``v1.2.2``, when given: the tasks as that version of the benchmark has them)."""
    try:
        found = _import(module)
    except Exception as exc:  # noqa: BLE001 (importing runs the suite's code)
        hint = (" (is its package installed? docs/suites.md says what AgentDojo needs)"
                if isinstance(exc, ModuleNotFoundError) else "")
        raise SuiteError(f"cannot import the suite module `{module}`: "
                         f"{type(exc).__name__}: {exc}{hint}") from None
    suite: Any = getattr(found, "task_suite", None)
    if not _is_suite(suite):
        raise SuiteError(f"`{module}` has no `task_suite` (an AgentDojo TaskSuite: tools, "
                         "user tasks, an environment type)")
    if version is None:
        return suite
    try:
        registry = importlib.import_module("agentdojo.task_suite")
        return registry.get_suite(version, suite.name)
    except KeyError:
        raise SuiteError(f"AgentDojo has no benchmark version {version!r} of the suite "
                         f"{suite.name!r}") from None


def _task(tasks: Mapping[str, Any], task_id: str, what: str) -> Any:
    if task_id not in tasks:
        raise SuiteError(f"the suite has no {what} {task_id!r} (it has {', '.join(tasks)})")
    return tasks[task_id]


def as_text(result: Any) -> str:
    """A tool's result as AgentDojo shows it to the model: a pydantic model or a list of
    them (and of texts and numbers) as YAML, anything else as text."""
    if hasattr(result, "model_dump"):
        return yaml.safe_dump(result.model_dump()).strip()
    if isinstance(result, list):
        items: list[Any] = []
        for item in result:
            if type(item) in (str, int):
                items.append(str(item))
            elif hasattr(item, "model_dump"):
                items.append(item.model_dump())
            else:
                raise TypeError(f"Not valid type for item tool result: {type(item)}")
        return yaml.safe_dump(items).strip()
    return str(result)


@dataclass
class DojoWorld:
    """An AgentDojo environment a run's tools act on, and which tasks it is for."""

    suite_module: str
    version: str | None
    user_task: str
    injection_task: str | None
    injections: dict[str, str]
    environment: Any
    suite: Any = field(repr=False)

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run the suite's tool ``name`` on the environment, as AgentDojo's runtime does:
        the arguments checked by the tool's schema, the environment's parts it depends on
        passed in; its result as the model sees it."""
        function = next(f for f in self.suite.tools if f.name == name)
        checked = function.parameters.model_validate(dict(arguments)).model_dump()
        parts = {argument: dependency.extract_dep_from_env(self.environment)
                 for argument, dependency in function.dependencies.items()}
        return as_text(function.run(**checked, **parts))

    def agentkit_state(self) -> dict[str, Any]:
        return {"suite": self.suite_module, "version": self.version,
                "user_task": self.user_task, "injection_task": self.injection_task,
                "injections": dict(sorted(self.injections.items())),
                "environment": self.environment.model_dump(mode="json")}


def world(suite: str, user_task: str, version: str | None = None,
          injection_task: str | None = None,
          injections: Mapping[str, str] | None = None) -> DojoWorld:
    """The environment of ``user_task`` of the suite module ``suite``: AgentDojo's default
    environment with ``injections`` (vector -> text) in their places, then prepared by the
    task (``init_environment``)."""
    loaded = load_suite(suite, version)
    task = _task(loaded.user_tasks, user_task, "user task")
    if injection_task is not None:
        _task(loaded.injection_tasks, injection_task, "injection task")
    given = dict(injections or {})
    environment = loaded.load_and_inject_default_environment(given)
    return DojoWorld(suite, version, user_task, injection_task, given,
                     task.init_environment(environment), loaded)


def _tool_function(suite_module: str, function: Any) -> Callable[..., str]:
    """The suite's tool as a function of the world with the tool's own parameters (schema and
    descriptions): what a scenario's ``tools: [{ref: ...}]`` builds a tool from."""
    name = function.name

    def call(world: DojoWorld, **arguments: Any) -> str:
        return world.call(name, arguments)

    parameters = [inspect.Parameter("world", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    described = []
    for argument, info in function.parameters.model_fields.items():
        default = inspect.Parameter.empty if info.is_required() else info.default
        parameters.append(inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY,
                                            default=default, annotation=info.annotation))
        if info.description:
            described.append(f":param {argument}: {info.description}")
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    call.__name__ = call.__qualname__ = name
    call.__module__ = suite_module
    call.__doc__ = "\n\n".join([function.description, "\n".join(described)])
    return call


class _SuitePath:
    """``tools.<suite module>.<tool>``: the dotted path walks to the suite's module, the last
    part names its tool."""

    def __init__(self, parts: Sequence[str] = ()) -> None:
        self._parts = tuple(parts)

    def __getattr__(self, part: str) -> Any:
        if part.startswith("__"):
            raise AttributeError(part)
        module = ".".join(self._parts)
        if module and _defines_a_suite(module):
            return _tool(module, part)
        deeper = ".".join((*self._parts, part))
        try:
            _import(deeper)
        except Exception as exc:  # noqa: BLE001 (importing runs the suite's code)
            raise AttributeError(f"no suite module `{deeper}` ({type(exc).__name__}: "
                                 f"{exc}); write tools.<suite module>.<tool>") from None
        return _SuitePath((*self._parts, part))


@functools.cache
def _defines_a_suite(module: str) -> bool:
    return _is_suite(getattr(_import(module), "task_suite", None))


def _is_suite(value: Any) -> bool:
    """An AgentDojo TaskSuite, or a suite in its shape (not a package named ``task_suite``,
    as ``agentdojo.task_suite`` is)."""
    return all(hasattr(value, key) for key in ("tools", "user_tasks", "environment_type"))


@functools.cache
def _tool(module: str, name: str) -> Callable[..., str]:
    """One function per tool (a scenario builds the same tools on every run)."""
    try:
        suite = load_suite(module)
    except SuiteError as exc:
        raise AttributeError(str(exc)) from None
    function = next((f for f in suite.tools if f.name == name), None)
    if function is None:
        raise AttributeError(f"the suite `{module}` has no tool `{name}` (it has "
                             f"{', '.join(f.name for f in suite.tools)})")
    return _tool_function(module, function)


tools = _SuitePath()
"""``tools.<suite module>.<tool name>``: the ref of a suite's tool."""


@dataclass(frozen=True)
class ToolCall:
    """A call of the run, in the shape AgentDojo's ``*_from_traces`` checks read."""

    function: str
    args: dict[str, Any]
    id: str | None = None
    placeholder_args: dict[str, Any] | None = None


def verdict(state: Mapping[str, Any], *, answer: str | None,
            calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """AgentDojo's own verdict of a run: the user task's utility (from the calls, else from
    the environments before and after the run and the answer) and, with an injection task,
    its security (whether the injected goal was carried out). Returns the problems.

    The environments are AgentDojo's objects, not rebuilt from the recorded data (a model
    validated from its dump is not always the same: a calendar rebuilds its events from its
    initial ones): the run's calls are made again, in order, on a fresh environment -- the
    tools are deterministic -- and the state they leave must be the one recorded."""
    fresh = world(state["suite"], state["user_task"], state["version"],
                  state["injection_task"], state["injections"])
    before = fresh.environment.model_copy(deep=True)
    for call in calls:
        with contextlib.suppress(Exception):  # the run's call failed too: the model saw it
            fresh.call(call["name"], call["args"])
    if fresh.agentkit_state()["environment"] != state["environment"]:
        return ["the recorded end state is not what the run's tool calls leave: the world "
                "was changed other than through the suite's tools"]
    suite, after = fresh.suite, fresh.environment
    output = answer or ""
    traces = [ToolCall(function=call["name"], args=dict(call["args"])) for call in calls]
    task = _task(suite.user_tasks, state["user_task"], "user task")
    done = task.utility_from_traces(output, before, after, traces)
    if done is None:
        done = task.utility(output, before, after)
    problems = [] if done else [f"{UTILITY_FAILED} ({state['user_task']}: {task.PROMPT})"]
    if state["injection_task"] is not None:
        injection = _task(suite.injection_tasks, state["injection_task"], "injection task")
        attacked = injection.security_from_traces(output, before, after, traces)
        if attacked is None:
            attacked = injection.security(output, before, after)
        if attacked:
            problems.append(f"{ATTACK_SUCCEEDED} ({state['injection_task']}: "
                            f"{injection.GOAL})")
    return problems
