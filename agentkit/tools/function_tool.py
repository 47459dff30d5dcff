"""Turn a Python function (sync or async) into a tool with a JSON schema."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import attrgetter
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from agentkit.core.sim import run_sync
from agentkit.tools.types import AsyncBaseTool, DefaultToolFnSchema, ToolMetadata, ToolOutput

__all__ = ["FunctionTool", "ToolArgumentsError", "create_schema_from_function"]

_MODEL_VALIDATE = BaseModel.model_validate.__func__  # type: ignore[attr-defined]
"""pydantic's own ``model_validate``: a schema that keeps it is validated by its validator."""


class ToolArgumentsError(ValueError):
    """The arguments given to a tool do not fit its schema.

    ``python_message`` is what Python itself says for the same call when Python would refuse
    it too (``add() missing 1 required positional argument: 'b'``, an unexpected keyword):
    agent workflows show the model that wording, as LlamaIndex's do. None for problems
    Python would not catch (a wrong type)."""

    def __init__(self, message: str, python_message: str | None = None) -> None:
        super().__init__(message)
        self.python_message = python_message


def _quoted_names(names: list[str]) -> str:
    """Python's own list of argument names: 'a', 'a' and 'b', 'a', 'b', and 'c'."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _missing_message(fn_name: str, names: list[str], kind: str) -> str:
    plural = "s" if len(names) > 1 else ""
    return (f"{fn_name}() missing {len(names)} required {kind} argument{plural}: "
            f"{_quoted_names(names)}")


def _is_context_annotation(annotation: Any) -> bool:
    """A workflow ``Context`` parameter (matched by name: the tools layer sits below workflows)."""
    if isinstance(annotation, str):
        return annotation.split(".")[-1].split("[")[0] == "Context"
    origin = typing.get_origin(annotation) or annotation
    return getattr(origin, "__name__", None) == "Context"


_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)$")
_GOOGLE_PARAM = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?)\s*:\s*$")


def _param_docs(docstring: str) -> dict[str, str]:
    """Parameter descriptions from Google-style (``Args:``) or Sphinx (``:param x:``) docs."""
    docs: dict[str, str] = {}
    in_args = False
    for line in docstring.splitlines():
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            docs[sphinx.group(1)] = sphinx.group(2).strip()
            continue
        section = _SECTION.match(line)
        if section:
            in_args = section.group(1) in ("Args", "Arguments", "Parameters")
            continue
        if in_args:
            google = _GOOGLE_PARAM.match(line)
            if google:
                docs[google.group(1)] = google.group(2).strip()
    return docs


def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``fn``'s signature, its string annotations evaluated where they can be; worked out once
    per function (a scenario builds the same tools on every replay)."""
    try:
        return _known_signature(fn)
    except TypeError:  # an unhashable callable: not remembered
        return _read_signature(fn)


def _read_signature(fn: Callable[..., Any]) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, TypeError):
        return inspect.signature(fn)


_known_signature = functools.lru_cache(maxsize=1024)(_read_signature)


def create_schema_from_function(name: str, fn: Callable[..., Any],
                                ignore_fields: list[str] | None = None) -> type[BaseModel]:
    """A pydantic model of ``fn``'s parameters, described by its docstring where possible.
    Built once per function, name and ignored fields: the same class every time (so its JSON
    schema, too, is worked out once)."""
    ignore = frozenset(ignore_fields or ())
    try:
        return _known_schema(name, fn, ignore)
    except TypeError:  # an unhashable callable: not remembered
        return _build_schema(name, fn, ignore)


def _build_schema(name: str, fn: Callable[..., Any], ignore: frozenset[str]) -> type[BaseModel]:
    docs = _param_docs(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    for param in _signature(fn).parameters.values():
        if param.name in ignore or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = Any if param.annotation is param.empty else param.annotation
        default = ... if param.default is param.empty else param.default
        if isinstance(default, type(Field())):
            fields[param.name] = (annotation, default)
        else:
            fields[param.name] = (annotation, Field(default, description=docs.get(param.name)))
    return create_model(name, **fields)


_known_schema = functools.lru_cache(maxsize=1024)(_build_schema)


def _context_params(fn: Callable[..., Any]) -> list[str]:
    """The names of ``fn``'s workflow ``Context`` parameters."""
    return [p.name for p in _signature(fn).parameters.values()
            if _is_context_annotation(p.annotation)]


def _default_description(fn: Callable[..., Any], name: str,
                         partial: frozenset[str] = frozenset()) -> str:
    """The signature line (``add(a: int, b: int) -> int``, without a ``Context`` or the
    ``partial`` parameters: the model never gives those) and the docstring; worked out once
    per function, name and partial parameters."""
    try:
        return _known_description(fn, name, partial)
    except TypeError:  # an unhashable callable: not remembered
        return _describe(fn, name, partial)


def _describe(fn: Callable[..., Any], name: str, partial: frozenset[str]) -> str:
    signature = _signature(fn)
    hidden = {*_context_params(fn), *partial}
    shown = signature.replace(parameters=[p for p in signature.parameters.values()
                                          if p.name not in hidden])
    doc = inspect.getdoc(fn)
    return f"{name}{shown}" + (f"\n{doc}" if doc else "")


_known_description = functools.lru_cache(maxsize=1024)(_describe)


def _format_validation_error(tool: str, error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"missing required argument `{where}`")
        else:
            problems.append(f"`{where}`: {item['msg']} (got {item.get('input')!r})")
    return f"invalid arguments for tool `{tool}`: " + "; ".join(problems)


def _binds_one_positional(fn: Callable[..., Any], partial_params: Iterable[str],
                          ctx_param: str | None) -> bool:
    named = dict.fromkeys(partial_params)
    if ctx_param is not None:
        named[ctx_param] = None
    try:
        _signature(fn).bind(None, **named)
    except TypeError:
        return False
    return True


_Shape = tuple[str | None, bool, bool, frozenset[str], frozenset[str], bool]


def _shape(fn: Callable[..., Any], partial: frozenset[str]) -> _Shape:
    """What a tool needs to know of ``fn``'s parameters to call it (its ``Context`` parameter
    and whether it is required, whether it takes ``**kwargs``, its parameter and keyword-only
    names, whether one positional input binds beside the ``partial`` ones); worked out once per
    function and partial names (a scenario builds the same tools on every replay)."""
    try:
        return _known_shape(fn, partial)
    except TypeError:  # an unhashable callable: not remembered
        return _read_shape(fn, partial)


def _read_shape(fn: Callable[..., Any], partial: frozenset[str]) -> _Shape:
    params = _signature(fn).parameters.values()
    ctx_params = [p for p in params if _is_context_annotation(p.annotation)]
    ctx_param = ctx_params[0].name if ctx_params else None
    return (ctx_param, bool(ctx_params) and ctx_params[0].default is ctx_params[0].empty,
            any(p.kind == p.VAR_KEYWORD for p in params), frozenset(p.name for p in params),
            frozenset(p.name for p in params if p.kind == p.KEYWORD_ONLY),
            _binds_one_positional(fn, partial, ctx_param))


_known_shape = functools.lru_cache(maxsize=1024)(_read_shape)


class FunctionTool(AsyncBaseTool):
    """A tool backed by a sync function, an async function, or both.

    Either kind works with both ``call`` and ``acall``. Keyword arguments are checked against
    the schema first, so a model's wrong or missing arguments become a clear
    :class:`ToolArgumentsError` (an error observation inside agents).
    """

    def __init__(self, fn: Callable[..., Any] | None = None, metadata: ToolMetadata | None = None,
                 async_fn: Callable[..., Any] | None = None,
                 partial_params: dict[str, Any] | None = None) -> None:
        if fn is None and async_fn is None:
            raise ValueError("FunctionTool needs `fn` or `async_fn`")
        if metadata is None:
            raise ValueError("FunctionTool needs `metadata` (or use FunctionTool.from_defaults)")
        if fn is not None and inspect.iscoroutinefunction(fn):
            fn, async_fn = None, async_fn or fn
        self._fn = fn
        self._async_fn = async_fn
        self._metadata = metadata
        self.partial_params = dict(partial_params or {})
        real = fn or async_fn
        assert real is not None  # checked above
        (self._ctx_param, self._ctx_required, self._accepts_any_kwarg, self._param_names,
         self._keyword_only, self._takes_positional) = _shape(real, frozenset(self.partial_params))
        self._fn_name = getattr(real, "__name__", self._metadata.name)

    @classmethod
    def from_defaults(cls, fn: Callable[..., Any] | None = None, name: str | None = None,
                      description: str | None = None, return_direct: bool = False,
                      fn_schema: type[BaseModel] | None = None,
                      async_fn: Callable[..., Any] | None = None,
                      tool_metadata: ToolMetadata | None = None,
                      partial_params: dict[str, Any] | None = None) -> FunctionTool:
        """Build a tool whose name, description and schema come from the function.

        The default description is the signature line (``add(a: int, b: int) -> int``)
        followed by the docstring.
        """
        if tool_metadata is None:
            real = fn or async_fn
            if real is None:
                raise ValueError("FunctionTool.from_defaults needs `fn` or `async_fn`")
            name = name or real.__name__
            ctx = _context_params(real)
            if description is None:
                # filled in, never given by the model: a Context, the partial parameters
                description = _default_description(real, name, frozenset(partial_params or ()))
            if fn_schema is None:
                fn_schema = create_schema_from_function(
                    name, real, ignore_fields=ctx + list(partial_params or ()))
            tool_metadata = ToolMetadata(name=name, description=description, fn_schema=fn_schema,
                                         return_direct=return_direct)
        return cls(fn=fn, metadata=tool_metadata, async_fn=async_fn, partial_params=partial_params)

    # read-only as a method property, its getter written in C (no Python frame): agents read
    # a tool's metadata several times per call
    metadata = property(attrgetter("_metadata"),
                        doc="The tool's name, description and argument schema.")

    @property
    def fn(self) -> Callable[..., Any]:
        return self._fn if self._fn is not None else self._sync_from_async

    @property
    def async_fn(self) -> Callable[..., Any]:
        return self._async_fn if self._async_fn is not None else self._async_from_sync

    @property
    def requires_context(self) -> bool:
        """True when the function takes a workflow ``Context`` (agents pass it as ``ctx=``)."""
        return self._ctx_param is not None

    takes_positional_input = property(attrgetter("_takes_positional"), doc="""Whether the
        function takes one positional argument beside its partial parameters (and its
        Context): ``def f(x)`` does, ``def f(*, x)`` and ``def f(**kwargs)`` do not (read
        through a getter written in C, as ``metadata``).""")

    @property
    def ctx_param_name(self) -> str | None:
        """The name of the function's ``Context`` parameter, if it has one."""
        return self._ctx_param

    @property
    def real_fn(self) -> Callable[..., Any]:
        return self._fn or self._async_fn  # type: ignore[return-value]

    def _sync_from_async(self, *args: Any, **kwargs: Any) -> Any:
        return run_sync(self._async_fn(*args, **kwargs))  # type: ignore[misc]

    async def _async_from_sync(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)  # type: ignore[misc]

    def _prepare(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                 ctx: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Check the call against the schema; returns (arguments to pass, arguments as given)."""
        name = self._metadata.name
        if ctx is not None and self._ctx_param is None:
            kwargs, ctx = {**kwargs, "ctx": ctx}, None  # an ordinary parameter named `ctx`
        given = kwargs
        if self._ctx_required and ctx is None and not args and self._ctx_param not in kwargs:
            raise ValueError(f"tool `{name}` needs a workflow Context: call it with ctx=...")
        # every argument a parameter (the usual call): no comprehension to find none unknown
        unknown = [] if self._param_names.issuperset(kwargs) else [
            k for k in kwargs if k not in self._param_names and k not in self.partial_params]
        if unknown and not self._accepts_any_kwarg:
            raise ToolArgumentsError(
                f"invalid arguments for tool `{name}`: unexpected argument(s) "
                + ", ".join(f"`{k}`" for k in unknown),
                f"{self._fn_name}() got an unexpected keyword argument '{unknown[0]}'")
        schema = self._metadata.fn_schema
        if schema is not None and not args and schema is not DefaultToolFnSchema:
            data = {**self.partial_params, **kwargs}
            try:
                # schema.model_validate(data) without its frame, unless the schema has its own
                validated = (schema.__pydantic_validator__.validate_python(data)
                             if schema.model_validate.__func__ is _MODEL_VALIDATE  # type: ignore[attr-defined]
                             else schema.model_validate(data))
            except ValidationError as exc:
                raise ToolArgumentsError(_format_validation_error(name, exc),
                                         self._python_message(exc)) from None
            # {k: getattr(validated, k, v) for k, v in kwargs.items()}, without its frame
            kwargs = dict(zip(kwargs, map(getattr, repeat(validated), kwargs, kwargs.values()),
                              strict=True))
        prepared = {**self.partial_params, **kwargs}
        if ctx is not None:
            prepared[self._ctx_param] = ctx  # type: ignore[index]
        return prepared, given

    def _python_message(self, error: ValidationError) -> str | None:
        """Python's wording when every problem is a missing argument (else None)."""
        items = error.errors()
        if not items or any(i["type"] != "missing" or len(i["loc"]) != 1 for i in items):
            return None
        names = [str(i["loc"][0]) for i in items]
        positional = [n for n in names if n not in self._keyword_only]
        if positional:
            return _missing_message(self._fn_name, positional, "positional")
        return _missing_message(self._fn_name, names, "keyword-only")

    def _output(self, raw: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolOutput:
        if isinstance(raw, ToolOutput):
            return raw
        # ToolOutput(...) validated without BaseModel.__init__'s frame: once per call
        return ToolOutput.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
            {"content": str(raw), "tool_name": self._metadata.name,
             "raw_input": {"args": args, "kwargs": kwargs}, "raw_output": raw})

    def call(self, *args: Any, ctx: Any = None, **kwargs: Any) -> ToolOutput:
        prepared, given = self._prepare(args, kwargs, ctx)
        return self._output(self.fn(*args, **prepared), args, given)

    async def acall(self, *args: Any, ctx: Any = None, **kwargs: Any) -> ToolOutput:
        prepared, given = self._prepare(args, kwargs, ctx)
        if self._async_fn is None:  # a sync function runs inline (no coroutine wrapping it)
            return self._output(self._fn(*args, **prepared), args, given)  # type: ignore[misc]
        return self._output(await self._async_fn(*args, **prepared), args, given)

    def __repr__(self) -> str:
        return f"FunctionTool(name={self._metadata.name!r})"
