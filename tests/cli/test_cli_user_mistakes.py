"""No traceback for a user's mistake: an exception in the user's factory fails that run only,
naming the factory and the exception, while the other runs go on; the factory's own errors
are not blamed on `params:`; `history:` for an agent without a memory to set is an error
saying what the agent must provide; Ctrl-C and SIGTERM end a command with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import Outcome

REPO = Path(__file__).resolve().parents[2]

AGENTS = '''
from agentkit.agent import ReActAgent


def broken(context):
    raise ConnectionError("the vector store at db:5432 is down")


def strict(context):
    raise ValueError("temperature must be set in the environment")


class Plain:
    """An agent with chat() and nothing else."""

    chat_history = []

    def chat(self, message):
        return "hello"

    def stream_chat(self, message):
        raise NotImplementedError


def plain(context):
    return Plain()


def react(context):
    return ReActAgent.from_tools(list(context.tools), llm=context.llm)


class Agent:
    """A framework's agent (as the OpenAI Agents SDK's): no chat(), no chat_history."""

    name = "Booker"


def undecorated(context):
    return Agent()
'''

SCENARIO = """\
format: 1
name: {name}
tools:
  - ref: mocks.tools:add
turns:
  - user: What is 2 + 3?
agents:
  {agent}:
    script: ["Thought: done.\\nAnswer: 5"]
"""


@pytest.fixture
def project(write: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> Path:
    write("my_agents.py", AGENTS)
    write("pyproject.toml", """\
        [tool.agentkit.agent_types]
        broken = "my_agents:broken"
        strict = "my_agents:strict"
        plain = "my_agents:plain"
        mine = "my_agents:react"
        undecorated = "my_agents:undecorated"
        """)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(REPO))  # mocks.tools
    return tmp_path


def _scenario(write: Callable[[str, str], Path], name: str, agent: str, extra: str = "") -> Path:
    return write(f"scenarios/{name}.yaml", SCENARIO.format(name=name, agent=agent) + extra)


def test_a_factory_that_raises_fails_its_run_only_naming_the_factory_and_where_it_raised(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], project: Path) -> None:
    _scenario(write, "a_broken", "broken")
    _scenario(write, "b_fine", "mine")

    result = cli("run", "--snapshots", "off")

    assert result.code == 1
    assert "Traceback" not in result.out + result.err
    lines = result.out.splitlines()
    assert lines[0] == "ERROR  a_broken[broken]"
    assert lines[1] == ("      scenarios/a_broken.yaml:9: agents.broken: the agent type's factory "
                        "my_agents:broken raised ConnectionError: the vector store at db:5432 "
                        "is down at my_agents.py:6 in broken")
    assert lines[2].startswith("PASS  b_fine[mine]")
    assert lines[-1] == "1 passed, 0 failed, 1 could not run"


def test_a_factorys_own_value_error_is_not_blamed_on_params(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], project: Path) -> None:
    _scenario(write, "needs_env", "strict")

    result = cli("run", "--snapshots", "off")

    assert result.code == 1
    assert "params" not in result.out + result.err
    assert ("the agent type's factory my_agents:strict raised ValueError: temperature must be "
            "set in the environment") in result.out


def test_a_factory_returning_no_chat_agent_is_an_error_naming_the_factory_before_any_turn(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], project: Path) -> None:
    _scenario(write, "a_framework", "undecorated")
    _scenario(write, "b_fine", "mine")

    result = cli("run", "--snapshots", "off")

    assert result.code == 2
    assert "Traceback" not in result.out + result.err
    lines = result.out.splitlines()
    assert lines[0] == "ERROR  a_framework[undecorated]"
    assert lines[1].startswith("PASS  b_fine[mine]")
    assert ("agentkit: error: scenarios/a_framework.yaml:9: agents.undecorated: the agent "
            "type's factory my_agents:undecorated returned Agent, which has no `chat` or "
            "`chat_history`; a factory returns an agent with `chat`, "
            "`stream_chat` and `chat_history` (docs/your-agent.md) -- an agent of LlamaIndex, "
            "pydantic-ai, the OpenAI Agents SDK or LangGraph from a factory decorated with its "
            "framework's decorator (docs/integrations.md)") in result.err


@pytest.mark.parametrize("broken", ["factory", "file"])
def test_report_exits_as_run_does_on_bad_input(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], project: Path,
        broken: str) -> None:
    # docs/reference/errors.md: an `input` error -- a factory returning no agent, a malformed
    # scenario file -- is exit 2, whichever command meets it
    if broken == "factory":
        _scenario(write, "a_broken", "undecorated")
    else:
        _scenario(write, "a_broken", "mine", "expect:\n  answr: {contains: '5'}\n")
    _scenario(write, "b_fine", "mine")

    run = cli("run", "--snapshots", "off")
    report = cli("report", "--snapshots", "off", "--out", "reports/r")

    assert (run.code, report.code) == (2, 2), report.out + report.err
    assert "ERROR  a_broken" in report.out


@pytest.mark.agentkit_allow_unused_script  # `plain` answers without its model
def test_report_says_over_how_many_scenarios_in_the_singular_for_one(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], project: Path) -> None:
    write("scenarios/a_both.yaml", SCENARIO.format(name="a_both", agent="mine") +
          '  plain:\n    script: ["Thought: done.\\nAnswer: 5"]\n')
    _scenario(write, "b_mine", "mine")

    report = cli("report", "--snapshots", "off", "--out", "reports/r")

    assert ("(those totals are over the 1 scenario every compared agent type ran)"
            in report.out.splitlines()), report.out


def test_history_for_an_agent_without_a_memory_says_what_the_agent_must_provide(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], project: Path) -> None:
    _scenario(write, "remembers", "plain",
              "history:\n  - {role: user, content: Hi}\n  - {role: assistant, content: Hello}\n")

    result = cli("run", "--snapshots", "off")

    assert result.code == 2
    assert "Traceback" not in result.err
    assert ("agentkit: error: scenarios/remembers.yaml:11: history: agent type `plain` builds "
            "Plain, which has no `memory.set(messages)`; a scenario with `history:` needs an "
            "agent whose `memory` has `set(list[ChatMessage])`") in result.err


# Ctrl-C and SIGTERM: the tool stops its own process, so no timing is involved
STOPPING_TOOL = '''
import os
import signal


def add(a: int, b: int) -> int:
    """Add two integers (and stop the command, as Ctrl-C or a CI timeout would)."""
    os.kill(os.getpid(), signal.SIG{signal})
    return a + b
'''


@pytest.mark.slow  # the whole command in a process of its own, signalled
@pytest.mark.parametrize("signal_name, code, word", [("INT", 130, "interrupted"),
                                                     ("TERM", 143, "terminated")])
def test_a_stopped_command_says_so_in_one_line_and_keeps_the_earlier_report(
        write: Callable[[str, str], Path], tmp_path: Path, signal_name: str, code: int,
        word: str) -> None:
    write("stopping.py", STOPPING_TOOL.format(signal=signal_name))
    _scenario(write, "adding", "react").write_text(
        SCENARIO.format(name="adding", agent="react").replace("mocks.tools:add", "stopping:add")
        .replace('script: ["Thought: done.\\nAnswer: 5"]',
                 'script: ["Thought: add.\\nAction: add\\nAction Input: {\\"a\\": 2, \\"b\\": 3}",'
                 ' "Thought: done.\\nAnswer: 5"]'), encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".agentkit-report").write_text("")
    (tmp_path / "out" / "report.md").write_text("the earlier report\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}

    run = subprocess.run([sys.executable, "-m", "agentkit", "report", "scenarios", "--out",
                          "out", "--snapshots", "off"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120,
                         # a shell's background job starts with SIGINT ignored; a user's
                         # terminal does not
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    assert run.returncode == code, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [
        f"agentkit: {word} (files written before are intact)"]
    assert (tmp_path / "out" / "report.md").read_text() == "the earlier report\n"
