"""Framework agents whose own tools are plain ``def``s and ``async def``s, as each framework's
documentation writes them (pydantic-ai's ``@agent.tool_plain``, LlamaIndex's function tools,
the Agents SDK's ``@function_tool``, LangChain's ``@tool``): a run of them exits, under
``agentkit run``, pytest, pytest-xdist and ``agentkit serve``. Each command runs in a
subprocess with a timeout, so a process that never exits fails the test instead of hanging
the lane. (pydantic-ai runs a sync tool on an AnyIO worker thread, which kept the process
alive after the run until agentkit's loop ran the callback that stops it.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.frameworks, pytest.mark.agentkit_allow_loopback]

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds: far beyond a run (each imports four frameworks), even on a busy machine

AGENTS = '''\
from agents import Agent, function_tool
from langchain.agents import create_agent
from langchain_core.tools import tool
from llama_index.core.agent.workflow import FunctionAgent
from pydantic_ai import Agent as PydanticAgent

from agentkit.integrations.langgraph import langgraph_agent
from agentkit.integrations.llama_index import llama_index_agent
from agentkit.integrations.openai_agents import openai_agents_agent
from agentkit.integrations.pydantic_ai import pydantic_ai_agent


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


add_async.__name__ = "add"


def _pydantic_ai(function):
    def factory(context):
        agent = PydanticAgent(context.model)
        agent.tool_plain(function)
        return agent
    return pydantic_ai_agent(factory)


def _llama_index(function):
    return llama_index_agent(lambda context: FunctionAgent(llm=context.llm, tools=[function]))


def _openai_agents(function):
    return openai_agents_agent(lambda context: Agent(name="Assistant", model=context.model,
                                                     tools=[function_tool(function)]))


def _langgraph(function):
    return langgraph_agent(lambda context: create_agent(context.model, [tool(function)]))


pydantic_ai_sync, pydantic_ai_async = _pydantic_ai(add), _pydantic_ai(add_async)
llama_index_sync, llama_index_async = _llama_index(add), _llama_index(add_async)
openai_agents_sync, openai_agents_async = _openai_agents(add), _openai_agents(add_async)
langgraph_sync, langgraph_async = _langgraph(add), _langgraph(add_async)
'''
# pydantic-ai's sync tool last: what a run leaves pending, a later run on the same loop finishes
TYPES = [f"{framework}_{kind}" for framework in ("llama_index", "openai_agents", "langgraph",
                                                 "pydantic_ai") for kind in ("async", "sync")]
SCRIPT = """\
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
"""
#: a pydantic-ai agent with a sync tool in its own process, pointed at `agentkit serve`
CLIENT = '''\
import sys
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

agent = Agent(OpenAIChatModel("m", provider=OpenAIProvider(base_url=sys.argv[1], api_key="-")))


@agent.tool_plain
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


print(agent.run_sync("What is 2 + 3?").output)
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "own_tools.py").write_text(AGENTS, encoding="utf-8")
    types = "".join(f'{name} = {{ ref = "own_tools:{name}" }}\n' for name in TYPES)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "own-tools"\nversion = "0"\n\n[tool.agentkit]\n'
        f'scenarios = ["scenarios"]\n\n[tool.agentkit.agent_types]\n{types}', encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    agents = "".join(f"  {name}:\n{SCRIPT}" for name in TYPES)
    (tmp_path / "scenarios" / "adds.yaml").write_text(
        "format: 1\nname: adds\nturns:\n  - user: What is 2 + 3?\n"
        f'expect:\n  answer: {{contains: "5"}}\nagents:\n{agents}', encoding="utf-8")
    return tmp_path


def _environment() -> dict[str, str]:
    # when this suite runs under xdist, an inner session must not think it is a worker
    return {name: value for name, value in os.environ.items()
            if not name.startswith("PYTEST_XDIST_")}


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def test_agentkit_run_of_sync_and_async_tools_of_every_framework_exits(project):
    done = _run([sys.executable, "-m", "agentkit", "run", "--snapshots", "off"], project)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(TYPES)} passed, 0 failed" in done.stdout


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_pytest_of_sync_and_async_tools_of_every_framework_exits(project, workers):
    done = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snapshot-update",
                 *workers, "scenarios"], project)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(TYPES)} passed" in done.stdout


def test_agentkit_serve_answering_an_agent_with_a_sync_tool_exits(project):
    served = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "serve", "scenarios/adds.yaml", "--agent",
         "pydantic_ai_sync", "--trace-out", str(project / "trace.json")],
        cwd=project, env=_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert served.stdout is not None
        url = served.stdout.readline().strip()
        client = _run([sys.executable, "-c", CLIENT, url], project)
        served.send_signal(signal.SIGTERM)
        out, err = served.communicate(timeout=TIMEOUT)
    finally:
        if served.poll() is None:
            served.kill()
            served.communicate()

    assert (client.returncode, client.stdout) == (0, "2 + 3 = 5\n"), client.stderr
    assert served.returncode == 0, out + err  # SIGTERM is serve's stop; the run passed
    assert (project / "trace.json").is_file()
