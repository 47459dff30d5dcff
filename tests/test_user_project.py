"""agentkit in a user's own project, from the outside: a scratch project in a temporary folder,
run with the installed ``pytest`` and ``agentkit`` in subprocesses (as the user runs them).

The project has its own agent type declared in its pyproject.toml (with a trajectory
renderer), another one from an installed package's entry point, a scenario using both, a
trajectory scenario run under its own type and bundled ones, an unrelated test of a local HTTP
server, and a Kubernetes manifest under ``tests/data/scenarios/``. Installing agentkit must
not change the unrelated test or trip over the manifest, and the project's agent types must
work in pytest and in the command alike.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mocks.foreign_yaml import K8S_MANIFEST

# a whole project run by the installed pytest and agentkit in fresh processes
pytestmark = pytest.mark.slow

PYPROJECT = """\
[project]
name = "shop"
version = "0.1.0"

[tool.pytest.ini_options]
testpaths = ["tests", "scenarios"]

[tool.agentkit.agent_types]
shop_agent = { ref = "shop.agents:build_shop_agent", trajectory = "shop.agents:render" }
"""

AGENTS = '''
"""The shop's agent: function calling, one tool call at a time."""

from agentkit.agent import FunctionCallingAgent


def build_shop_agent(context):
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                           allow_parallel_tool_calls=False, **context.params)


def render(context):
    """A trajectory as this agent's script: one tool call per reply, then the answer."""
    from agentkit.llms.mock import ScriptedResponse, tool_call

    outputs, answer = context.outputs, context.trajectory.answer
    calls = [context.deferred(lambda call=call: ScriptedResponse(tool_calls=[
                 tool_call(call.name, **call.arguments(outputs))]), call.refs)
             for call in context.trajectory.calls]
    return [*calls, context.deferred(lambda: answer.render(outputs), answer.refs)]
'''

TOOLS = '''
def price(item: str) -> float:
    """The price of an item in euros."""
    return {"apple": 0.5, "pear": 0.75}[item]
'''

#: an installed package (its dist-info on the path) with an entry point `partner_agent`
PARTNER = '''
from agentkit.agent import ReActAgent


def build(context):
    return ReActAgent.from_tools(list(context.tools), llm=context.llm)
'''

SCENARIO = """\
format: 1
name: apple_price
tools:
  - ref: shop.tools:price
turns:
  - user: How much is an apple?
expect:
  answer: {contains: "0.5"}
  tool_calls:
    calls: [{name: price, args: {item: apple}}]
agents:
  shop_agent:
    script:
      - tool_calls: [{name: price, args: {item: apple}}]
      - An apple costs 0.5 euros.
  partner_agent:
    script:
      - "Thought: look it up\\nAction: price\\nAction Input: {\\"item\\": \\"apple\\"}"
      - "Thought: done\\nAnswer: An apple costs 0.5 euros."
"""

#: one trajectory for the shop's agent type and two bundled ones
TRAJECTORY = """\
format: 1
name: pear_price
tools:
  - ref: shop.tools:price
turns:
  - user: How much is a pear?
trajectory:
  - call: price
    args: {item: pear}
  - answer: "A pear costs {$1} euros."
agents: [shop_agent, react, llm_compiler]
"""

SERVER_TEST = '''
import http.server
import threading
import urllib.request


def test_local_http_server_answers():
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        assert urllib.request.urlopen(url, timeout=5).read() == b"hello"
    finally:
        server.shutdown()
'''

def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The scratch project and the environment to run in it (the partner package on the
    path, nothing of this repository)."""
    root = tmp_path_factory.mktemp("shop")
    _write(root, "pyproject.toml", PYPROJECT)
    _write(root, "shop/__init__.py", "")
    _write(root, "shop/agents.py", AGENTS)
    _write(root, "shop/tools.py", TOOLS)
    _write(root, "scenarios/apple_price.yaml", SCENARIO)
    _write(root, "scenarios/pear_price.yaml", TRAJECTORY)
    _write(root, "tests/test_server.py", SERVER_TEST)
    _write(root, "tests/data/scenarios/k8s.yaml", K8S_MANIFEST)
    site = tmp_path_factory.mktemp("site")
    _write(site, "partner_agents.py", PARTNER)
    _write(site, "partner_agents-1.0.dist-info/METADATA",
           "Metadata-Version: 2.1\nName: partner-agents\nVersion: 1.0\n")
    _write(site, "partner_agents-1.0.dist-info/entry_points.txt",
           "[agentkit.agent_types]\npartner_agent = partner_agents:build\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "OPENAI_", "AGENTKIT_"))}
    env["PYTHONPATH"] = str(site)
    # the project's snapshots, taken here: each test may run in a process of its own (xdist)
    taken = subprocess.run([str(Path(sys.executable).with_name("agentkit")), "run",
                            "--snapshot-update"], cwd=root, env=env, capture_output=True,
                           text=True, timeout=120, check=False)
    assert taken.returncode == 0, taken.stdout + taken.stderr
    return root, env


def _run(shop: tuple[Path, dict[str, str]], *argv: str) -> subprocess.CompletedProcess[str]:
    root, env = shop
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def _pytest(shop: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    return _run(shop, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args)


def _agentkit(shop: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    return _run(shop, str(Path(sys.executable).with_name("agentkit")), *args)


def test_pytest_passes_the_unrelated_test_skips_the_manifest_and_runs_the_scenario(shop):
    done = _pytest(shop, "--snapshot-update")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED tests/test_server.py::test_local_http_server_answers" in done.stdout
    assert "PASSED scenarios/apple_price.yaml::shop_agent" in done.stdout
    assert "PASSED scenarios/apple_price.yaml::partner_agent" in done.stdout
    for agent_type in ("shop_agent", "react", "llm_compiler"):
        assert f"PASSED scenarios/pear_price.yaml::{agent_type}" in done.stdout
    assert "k8s" not in done.stdout + done.stderr


def test_the_command_lists_and_runs_the_scenario_under_the_projects_agent_types(shop):
    listed = _agentkit(shop, "list")
    ran = _agentkit(shop, "run")

    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[:3] == [
        f"apple_price  ({Path('scenarios/apple_price.yaml')})",
        "  - shop_agent: script, 2 replies", "  - partner_agent: script, 2 replies"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [line.split()[:2] for line in ran.stdout.splitlines()[:5]] == [
        ["PASS", "apple_price[shop_agent]"], ["PASS", "apple_price[partner_agent]"],
        ["PASS", "pear_price[shop_agent]"], ["PASS", "pear_price[react]"],
        ["PASS", "pear_price[llm_compiler]"]]


def test_a_typo_in_the_agent_type_names_the_projects_types(shop):
    root, _ = shop
    typo = root / "scenarios" / "typo.yaml"
    typo.write_text(SCENARIO.replace("name: apple_price", "name: typo").replace(
        "  shop_agent:", "  shop_agnet:"), encoding="utf-8")
    try:
        ran = _agentkit(shop, "run", "scenarios/typo.yaml")
    finally:
        typo.unlink()

    assert ran.returncode == 2
    assert ("agents.shop_agnet: unknown agent type `shop_agnet`; did you mean `shop_agent`? "
            "(known: agent_workflow, coa, function_agent, function_calling, langgraph, "
            "li_function, li_react, llm_compiler, openai_agents, partner_agent, pydantic_ai, "
            "react, react_agent, react_multimodal, shop_agent;") in ran.stderr
