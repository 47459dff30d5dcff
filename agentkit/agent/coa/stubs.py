"""Function stubs for the reasoning prompt, from each tool's JSON schema.

The shape is LlamaIndex's, so prompts tuned for it keep working::

    def add(a: integer, b: integer):
       \"\"\"Add two integers.\"\"\"
        ...

Types are the JSON-schema names (``integer``, ``string``, ``array``...); a ``null``-able
``anyOf`` reads as its other type, several as ``Union[...]``; an argument that is not
required is ``Optional[T] = None``. The description loses the signature line a
``FunctionTool`` puts first (the stub is the signature).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["function_stub", "tool_stubs"]


def function_stub(name: str, schema: Mapping[str, Any], description: str = "") -> str:
    """The stub of one function with parameters ``schema`` (a JSON-schema object)."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    params = []
    for param, spec in properties.items():
        kind = _type_name(spec if isinstance(spec, Mapping) else {})
        params.append(f"{param}: {kind}" if param in required
                      else f"{param}: Optional[{kind}] = None")
    return f'def {name}({", ".join(params)}):\n   """{description}"""\n    ...'


def tool_stubs(tools: Sequence[Any]) -> str:
    """The stubs of ``tools`` (anything with ``.metadata``), one after another."""
    return "\n".join(function_stub(t.metadata.name, t.metadata.get_parameters_dict(),
                                   _description(t.metadata.name, t.metadata.description))
                     for t in tools)


def _description(name: str, description: str) -> str:
    first, _, rest = description.partition("\n")
    return rest.strip() if first.startswith(f"{name}(") else description.strip()


def _type_name(spec: Mapping[str, Any]) -> str:
    kind = spec.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
    else:
        kinds = [_type_name(s) for s in spec.get("anyOf") or spec.get("oneOf") or ()
                 if isinstance(s, Mapping) and s.get("type") != "null"]
    if not kinds:
        return "Any"
    return kinds[0] if len(kinds) == 1 else f"Union[{', '.join(kinds)}]"
