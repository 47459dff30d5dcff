"""A hand-written cassette of a small MCP server `toy` (tools `echo` and `add`), and scenario
text using it: the offline tests replay it without any server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ECHO = {"name": "echo", "description": "Answer the text given.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}}
ADD = {"name": "add", "description": "Add two numbers.",
       "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                        "b": {"type": "number"}},
                       "required": ["a", "b"]}}


def listing(server: str = "toy", tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"request": {"method": "tools/list", "server": server},
            "response": {"tools": tools if tools is not None else [ECHO, ADD]}, "latency": 0.01}


def call(name: str, arguments: dict[str, Any], text: str, *, server: str = "toy",
         latency: float = 0.0, is_error: bool = False) -> dict[str, Any]:
    response: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        response["isError"] = True
    return {"request": {"method": "tools/call", "server": server,
                        "params": {"name": name, "arguments": arguments}},
            "response": response, "latency": latency}


def refused(name: str, arguments: dict[str, Any], message: str) -> dict[str, Any]:
    return {"request": {"method": "tools/call", "server": "toy",
                        "params": {"name": name, "arguments": arguments}},
            "error": {"code": -32602, "message": message}, "latency": 0.0}


def write_cassette(path: Path, exchanges: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"format": 2, "exchanges": [], "mcp_exchanges": exchanges},
                                   sort_keys=False), encoding="utf-8")
    return path


SCENARIO = """\
format: 1
name: toy
tools:
  - mcp: {name: toy, command: no-such-mcp-server-anywhere}
turns:
  - user: Echo hello.
trajectory:
  - call: echo
    args: {text: hello}
  - answer: "It said {$1}."
agents: [function_calling]
"""


def write_scenario(folder: Path, text: str = SCENARIO, *, name: str = "toy") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path
