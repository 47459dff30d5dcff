"""The tool world of a scenario: tools from import refs, with simulated latency and failures."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkit.core.sim import asleep, run_sync
from agentkit.harness._faults import InjectedFault, inject_fault, note_struck
from agentkit.scenario import Fault
from agentkit.scenario._layout import scenario_folder
from agentkit.scenario._loader import ScenarioError, located_error
from agentkit.scenario._model import Scenario, ToolSpec
from agentkit.tools import (
    AsyncBaseTool,
    BaseTool,
    FunctionTool,
    JSONSchemaToolMetadata,
    ToolMetadata,
    ToolOutput,
)
from agentkit.tools.types import adapt_to_async_tool
from agentkit.trace import SimulatedToolError

if TYPE_CHECKING:
    from agentkit.harness._mcp import MCPWorld

__all__ = ["CallPaused", "SimulatedTool", "SimulatedToolError", "resolve_ref", "build_tool", "build_tools",
           "built_tools"]

Path_ = tuple[str | int, ...]

WORLD_PARAMETER = "world"
"""The parameter of a tool function that receives the run's world (the model never sees it)."""
NO_WORLD: Any = type("NoWorld", (), {"__repr__": lambda self: "NO_WORLD"})()
"""A scenario without a ``world:``: a tool's ``world`` parameter is an ordinary one."""


class CallPaused(BaseException):
    """A tool's call paused by the framework running it (a LangGraph ``interrupt()`` waiting
    for a human), raised from the call with the framework's exception as its cause: like a
    call cancelled by a paused run, it is counted but does not end (no output, not in the
    trace); the framework runs it again when the run resumes. A ``BaseException``, so that
    no tool-error handling takes it for the tool's failure."""


class SimulatedTool(AsyncBaseTool):
    """Wraps a tool: each call first takes ``latency`` simulated seconds, and the calls whose
    1-based numbers have a fault get it (:mod:`agentkit.harness._faults`): those in
    ``failures`` raise :class:`SimulatedToolError` instead of running, those in ``faults``
    run and then fail or deliver a changed output."""

    __slots__ = ("metadata",)
    metadata: ToolMetadata  # an attribute, not a property: agents read it on every call

    def __init__(self, tool: BaseTool, *, latency: float = 0.0, failures: list[int] | None = None,
                 error: str = "simulated tool failure", metadata: ToolMetadata | None = None,
                 tags: Iterable[str] = (), faults: Iterable[Fault] = ()) -> None:
        self.tool = adapt_to_async_tool(tool)
        self.tags = frozenset(tags)
        """The scenario's words for the tool (``tags:``), which policy rules select by."""
        self.latency = latency
        self.failures = set(failures or ())
        """The calls that fail before the tool runs (``failures:``)."""
        self.error = error
        self.faults: dict[int, Fault] = {
            **{n: Fault(call=n, kind="error", message=error) for n in self.failures},
            **{fault.call: fault for fault in faults}}
        self.injected: list[InjectedFault] = []
        """The faults the tool's calls got, in the order they happened."""
        self.calls = 0
        self.finished = 0
        """Calls that ended (an answer or an error; a call cancelled by a paused run is run
        again when it resumes): what the trace's tool calls must account for."""
        self.metadata = metadata or tool.metadata
        self.entry: int | None = None
        """The index of the scenario's ``tools:`` entry that gives the tool (None: not built
        from a scenario's), for errors that point at it."""

    @property
    def requires_context(self) -> bool:
        """Whether the wrapped tool takes a workflow ``Context`` (passed on as ``ctx=``)."""
        return bool(getattr(self.tool, "requires_context", False))

    @property
    def takes_positional_input(self) -> bool:
        return self.tool.takes_positional_input

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return await self.acall_with(self.tool, *args, **kwargs)

    async def acall_with(self, tool: AsyncBaseTool, /, *args: Any, **kwargs: Any) -> ToolOutput:
        """A call of this scenario tool run by ``tool`` (the agent's own tool of this name):
        the same latency, failure schedule and call count as :meth:`acall`."""
        self.calls += 1
        try:
            output = await self._run(tool, self.calls, *args, **kwargs)
        except (asyncio.CancelledError, CallPaused):
            raise
        except BaseException:
            self.finished += 1
            raise
        self.finished += 1
        return output

    async def _run(self, tool: AsyncBaseTool, number: int, /, *args: Any,
                   **kwargs: Any) -> ToolOutput:  # positional: a tool's own `number` argument
        if self.latency:
            await asleep(self.latency)
        fault = self.faults.get(number)
        output = None
        if fault is None or number not in self.failures:
            output = await tool.acall(*args, **kwargs)
            if output.tool_name != self.metadata.name:
                output = output.model_copy(update={"tool_name": self.metadata.name})
        if fault is None:
            assert output is not None
            return output
        try:
            output, injected = await inject_fault(fault, output, self.metadata.name, number)
        except SimulatedToolError as exc:
            self.injected.append(exc.injected)
            note_struck(exc.injected)
            raise
        self.injected.append(injected)
        note_struck(injected)
        return output

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return run_sync(self.acall(*args, **kwargs))


def _import(module: str, search_from: Path | None) -> Any:
    found = sys.modules.get(module)  # what import_module gives a module imported before,
    if found is not None and not getattr(getattr(found, "__spec__", None), "_initializing",
                                         False):  # without its four Python layers
        return found
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        if exc.name not in (module, top) or search_from is None:
            raise
    here = search_from.resolve()
    for folder in (here, *here.parents, Path.cwd()):
        if (folder / top).is_dir() or (folder / f"{top}.py").is_file():
            if str(folder) not in sys.path:
                # last: a scenario's folder makes its own modules importable, never shadows
                # one of the standard library or an installed package
                sys.path.append(str(folder))
            importlib.invalidate_caches()
            return importlib.import_module(module)
    return importlib.import_module(module)


def resolve_ref(ref: str, search_from: Path | None = None) -> Any:
    """Import ``package.module:attribute``; if it is not importable as is, the folder
    ``search_from`` (the scenario's) and those above it are searched for the package, and the
    folder holding it is added at the end of ``sys.path``. Importing runs the module's code:
    a scenario file is code, as a conftest.py is."""
    module_name, _, attribute = ref.partition(":")
    module = _import(module_name, search_from)
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise AttributeError(f"`{module_name}` has no attribute `{attribute}`")
        value = getattr(value, part)
    return value


def _is_function(target: Any) -> bool:
    return inspect.isfunction(target) or inspect.iscoroutinefunction(target)


_KEPT = ("coroutine", "func", "function", "real_fn")
"""Where a framework's tool object keeps the function it was made from: LangChain's ``@tool``
(``coroutine``/``func``), pydantic-ai's ``Tool`` (``function``), LlamaIndex's ``FunctionTool``
(``real_fn``). Read by name, so that no framework is imported here."""


def _kept_function(target: Any) -> tuple[Any, str | None] | None:
    """The function a framework's tool object was made from and the tool's name, if it keeps
    them (a tool made by the Agents SDK's ``@function_tool`` does not)."""
    for attribute in _KEPT:
        try:
            function = getattr(target, attribute, None)
        except ValueError:  # LlamaIndex's real_fn of a tool made without one
            continue
        if _is_function(function):
            metadata = getattr(target, "metadata", None)
            name = getattr(target, "name", None) or getattr(metadata, "name", None)
            return function, name if isinstance(name, str) else None
    return None


def _is_agents_sdk_tool(target: Any) -> bool:
    """An Agents SDK ``FunctionTool`` (``@function_tool``): it keeps no function, but its name,
    description, JSON schema and the SDK's own way to call it."""
    return all(hasattr(target, key) for key in ("on_invoke_tool", "params_json_schema", "name"))


def _agents_sdk_tool(target: Any, spec: ToolSpec) -> FunctionTool:
    """An Agents SDK ``FunctionTool`` as a scenario tool: its name, description and JSON
    schema, called as the SDK's runner calls it (``on_invoke_tool`` with the arguments as JSON,
    which the SDK checks against its schema). Its exception is the call's error, as a raising
    function's is: the SDK's default handling, which would make it the model's error text, is
    off (a private field of the SDK's; where it is missing, that text is the error's message);
    a tool's own ``failure_error_function`` still answers."""
    sdk = importlib.import_module("agents.tool_context")  # there: the ref is one of its tools
    name = spec.name or target.name
    if getattr(target, "_use_default_failure_error_function", False):
        target = dataclasses.replace(target, _use_default_failure_error_function=False,
                                     _failure_error_function=None)

    async def invoke(*args: Any, **arguments: Any) -> Any:
        if args:
            raise TypeError(f"{name}() takes keyword arguments only (an Agents SDK tool's "
                            f"arguments are named), got {len(args)} positional")
        text = json.dumps(arguments, ensure_ascii=False)
        context = sdk.ToolContext(context=None, tool_name=target.name,
                                  tool_call_id=f"scenario-{name}", tool_arguments=text)
        output = await target.on_invoke_tool(context, text)
        if getattr(context, "_function_tool_default_failure_handled", False):
            raise RuntimeError(str(output))
        return output

    metadata = JSONSchemaToolMetadata(
        name=name, description=spec.description or target.description or name, fn_schema=None,
        return_direct=spec.return_direct,
        input_schema=json.dumps(target.params_json_schema, ensure_ascii=False))
    return FunctionTool(async_fn=invoke, metadata=metadata)


def _how(target: Any) -> str:
    """How to name a tool object the scenario cannot run."""
    if hasattr(target, "on_invoke_tool") or type(target).__module__.startswith("agents."):
        return ("; of the Agents SDK's tools a scenario runs its FunctionTools "
                "(`@function_tool`); a hosted tool (web search, file search, code "
                "interpreter...) runs at the model provider: ref a function of the same name "
                "that answers as the scenario needs")
    if hasattr(target, "name") or hasattr(target, "metadata"):
        return ("; a framework's tool object is used by the function it keeps (LangChain's "
                "@tool or StructuredTool, pydantic-ai's Tool, LlamaIndex's FunctionTool) -- "
                "this one keeps none: ref the function the tool runs instead (define it "
                "undecorated and make the tool from it), named as the tool")
    if callable(target):
        return ("; a callable object is not a tool: ref a function (its method or the function "
                "it wraps)")
    return ""


def build_tool(spec: ToolSpec, search_from: Path | None = None,
               world: Any = NO_WORLD) -> SimulatedTool:
    """The scenario tool for ``spec``: a function -- or a framework's tool object that keeps
    the function it was made from (LangChain's ``@tool``, pydantic-ai's ``Tool``, LlamaIndex's
    ``FunctionTool``), under the object's name -- becomes a FunctionTool; so does an Agents SDK
    ``FunctionTool``, called through the SDK; a tool is used as is; a tool class (a factory) is
    instantiated with no arguments. With a ``world`` (the run's, :func:`open_world`), a
    function's parameter named ``world`` receives it, left out of what the model sees.

    Made again for every run (a cache of the made tools by spec, tried in issue 36, saved no
    measurable replay time and raised the peak memory of a 1,240-scenario report by 3 MB)."""
    assert spec.ref is not None, "an MCP entry's tools are built by agentkit.harness._mcp"
    tool, metadata = _made(spec, resolve_ref(spec.ref, search_from), world)
    return SimulatedTool(tool, latency=spec.latency, failures=spec.failures, error=spec.error,
                         metadata=metadata, tags=spec.tags, faults=spec.faults)


def _made(spec: ToolSpec, target: Any, world: Any) -> tuple[BaseTool, ToolMetadata]:
    """The tool :func:`build_tool` wraps for ``target``, and its metadata."""
    if isinstance(target, type) and issubclass(target, BaseTool):
        try:
            target = target()
        except TypeError as exc:
            raise TypeError(f"tool class `{spec.ref}` cannot be built without arguments: "
                            f"{exc}") from None
    if isinstance(target, BaseTool):
        tool = target
        meta = tool.metadata
        name, description = spec.name or meta.name, spec.description or meta.description
        return_direct = spec.return_direct or meta.return_direct
        schema = (json.dumps(spec.parameters, ensure_ascii=False) if spec.parameters is not None
                  else meta.input_schema if isinstance(meta, JSONSchemaToolMetadata) else None)
        metadata = (ToolMetadata(name=name, description=description, fn_schema=meta.fn_schema,
                                 return_direct=return_direct) if schema is None
                    else JSONSchemaToolMetadata(name=name, description=description,
                                                fn_schema=None, return_direct=return_direct,
                                                input_schema=schema))
        return tool, metadata
    if _is_agents_sdk_tool(target):
        tool = _agents_sdk_tool(target, spec)
        return tool, tool.metadata
    kept = (target, None) if _is_function(target) else _kept_function(target)
    if kept is None:
        raise TypeError(f"`{spec.ref}` is a {type(target).__name__}, not a function, a tool "
                        f"or a tool class{_how(target)}")
    function, kept_name = kept
    bound = ({WORLD_PARAMETER: world} if world is not NO_WORLD
             and WORLD_PARAMETER in inspect.signature(function).parameters else None)
    given = None
    if spec.parameters is not None:  # the model is told this schema, not the signature's
        called = spec.name or kept_name or function.__name__
        given = JSONSchemaToolMetadata(
            name=called, description=spec.description or called, fn_schema=None,
            return_direct=spec.return_direct,
            input_schema=json.dumps(spec.parameters, ensure_ascii=False))
    tool = FunctionTool.from_defaults(function, name=spec.name or kept_name,
                                      description=spec.description,
                                      return_direct=spec.return_direct,
                                      tool_metadata=given, partial_params=bound)
    return tool, tool.metadata


def build_tools(scenario: Scenario, mcp: MCPWorld | None = None,
                world: Any = NO_WORLD) -> list[SimulatedTool]:
    """The scenario's tool world; a tool that cannot be built is a :class:`ScenarioError`
    naming its ``ref`` (every such tool, one line each). MCP tools come from ``mcp``, the
    run's servers (:func:`~agentkit.harness._mcp.open_mcp`), in their place in ``tools``;
    tools taking a ``world`` get ``world``."""
    refs = [(index, spec) for index, spec in enumerate(scenario.tools) if spec.mcp is None]
    built, problems = built_tools(refs, scenario.path, world)
    if problems:
        raise located_error(scenario, problems)
    by_index = dict(zip((index for index, _ in refs), built, strict=True))
    tools: list[SimulatedTool] = []
    for index, spec in enumerate(scenario.tools):
        if spec.mcp is None:
            tools.append(by_index[index])
        else:
            tools += _mcp_tools(scenario, index, mcp, [*tools, *built])
    return tools


def _mcp_tools(scenario: Scenario, index: int, mcp: MCPWorld | None,
               others: list[SimulatedTool]) -> list[SimulatedTool]:
    """The MCP tools of ``tools[index]``, each with the entry's latency and failure schedule;
    a name another tool of the world has already is an error."""
    spec = scenario.tools[index]
    if mcp is None:
        raise ScenarioError(f"{scenario.where('tools', index, 'mcp')}: tools.{index}.mcp: an "
                            "MCP server's tools exist only in a run (run_scenario starts or "
                            "replays the servers)")
    taken = {tool.metadata.name for tool in others}
    tools = []
    for tool in mcp.tools(index, spec):
        if tool.metadata.name in taken:
            raise ScenarioError(f"{scenario.where('tools', index, 'mcp')}: tools.{index}.mcp: "
                                f"the MCP tool `{tool.metadata.name}` has the name of another "
                                "tool of the world; leave one out with `only:`, or rename it "
                                "(`only: [<tool>]` and `name:`)")
        taken.add(tool.metadata.name)
        made = SimulatedTool(tool, latency=spec.latency, failures=spec.failures,
                             error=spec.error, tags=spec.tags, faults=spec.faults)
        made.entry = index
        tools.append(made)
    return tools


def built_tools(specs: Iterable[tuple[int, ToolSpec]], scenario_path: str | None,
                world: Any = NO_WORLD) -> tuple[list[SimulatedTool], list[tuple[Path_, str]]]:
    """The tools of ``specs`` (each with its index in ``tools``), and a ``(field path,
    message)`` for each that cannot be built."""
    search_from = scenario_folder(scenario_path) if scenario_path else None
    tools: list[SimulatedTool] = []
    problems: list[tuple[Path_, str]] = []
    for index, spec in specs:
        try:
            tool = build_tool(spec, search_from, world)
        except Exception as exc:  # noqa: BLE001 (an import ref runs arbitrary module code)
            problems.append((("tools", index, "ref"), f"cannot use `{spec.ref}`: {exc}"))
            continue
        tool.entry = index
        tools.append(tool)
    return tools, problems
