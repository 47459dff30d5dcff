"""The slips a new user hit in a travel-booking project of their own (issue 34), each from the
outside: one scratch project in a temporary folder, pytest run in subprocesses as the user
runs it, the ``agentkit`` command in-process (its own process adds only start-up time).

The project keeps its tests under ``testpaths = ["tests"]`` and its scenarios in
``scenarios/``; ``slips/`` holds scenarios broken one way each (a tool missing from the agent,
an expected call whose arguments were left out, a factory and a tool that raise, a typo in an
expected call, an agent stopped at its call limit), run by naming the folder."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentkit.cli import main
from mocks.loopback_server import LoopbackServer, Reply, completion

PYPROJECT = """\
[project]
name = "travel-desk"
version = "0.1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
asyncio_default_fixture_loop_scope = "function"

[tool.agentkit.agent_types]
travel_agent = { ref = "travel_desk.agents:build", trajectory = "function_calling" }
no_pay_agent = { ref = "travel_desk.agents:build_without_pay" }
broken_agent = { ref = "travel_desk.agents:build_broken" }
"""

TOOLS = '''
def search_flights(origin: str, destination: str) -> str:
    """Flights from origin to destination."""
    return "SK830 at 09:10"


def hold_seat(flight: str) -> str:
    """Hold a seat on a flight; returns the hold id."""
    return f"H-{flight}"


def pay(hold_id: str, card: str) -> str:
    """Pay for a held seat."""
    if card.startswith("4000"):
        raise ValueError(f"card {card} declined")
    return f"paid {hold_id}"
'''

AGENTS = '''
from agentkit.agent import FunctionCallingAgent


def build(context):
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm, **context.params)


def build_without_pay(context):
    tools = [tool for tool in context.tools if tool.metadata.name != "pay"]
    return FunctionCallingAgent.from_tools(tools, llm=context.llm)


def build_broken(context):
    settings = dict(context.params)
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                           retries=settings["retries"])
'''

TOOLS_HEADER = """\
format: 1
name: {name}
tools:
  - {{ref: "travel_desk.tools:search_flights", latency: 0.5}}
  - {{ref: "travel_desk.tools:hold_seat", latency: 0.5}}
  - {{ref: "travel_desk.tools:pay", latency: 0.5}}
"""

BOOK = TOOLS_HEADER.format(name="book") + """\
turns:
  - user: Book me SK830 and pay with card 4111.
expect:
  answer: {contains: "paid"}
  tool_calls:
    calls:
      - {name: hold_seat, args: {flight: SK830}}
      - {name: pay, args: {hold_id: H-SK830, card: "4111"}}
agents:
  travel_agent:
    script:
      - tool_calls: [{name: hold_seat, args: {flight: SK830}}]
      - tool_calls: [{name: pay, args: {hold_id: H-SK830, card: "4111"}}]
      - Booked and paid H-SK830.
"""

#: a test that runs the scenario by its path from the rootdir and asserts on the result
TEST_BOOK = '''
def test_booking_pays_the_held_seat(run_scenario):
    result = run_scenario("scenarios/book.yaml", "travel_agent")

    assert result.passed, result.problems
    assert [call.name for call in result.trace.tool_calls] == ["hold_seat", "pay"]
'''

#: the agent's factory leaves `pay` out
MISSING = TOOLS_HEADER.format(name="missing") + """\
turns:
  - user: Book SK830 and pay with card 4111.
agents:
  no_pay_agent:
    script:
      - tool_calls: [{name: hold_seat, args: {flight: SK830}}]
      - tool_calls: [{name: pay, args: {hold_id: H-SK830, card: "4111"}}]
      - Booked and paid H-SK830.
"""

#: the expected `pay` gives no args under `args: exact`; the card is declined (the tool raises)
DECLINED = TOOLS_HEADER.format(name="declined") + """\
turns:
  - user: Book SK830 and pay with card 4000.
expect:
  tool_calls:
    calls:
      - {name: hold_seat, args: {flight: SK830}}
      - {name: pay, error: {contains: declined}}
agents:
  travel_agent:
    script:
      - tool_calls: [{name: hold_seat, args: {flight: SK830}}]
      - tool_calls: [{name: pay, args: {hold_id: H-SK830, card: "4000"}}]
      - Your card was declined.
"""

#: the factory reads a param the scenario does not give
FACTORY = TOOLS_HEADER.format(name="factory") + """\
turns:
  - user: Hold SK830.
agents:
  broken_agent:
    script:
      - Held.
"""

#: a typo in an expected call's name (line 12)
TYPO = TOOLS_HEADER.format(name="typo") + """\
turns:
  - user: Hold SK830.
expect:
  tool_calls:
    calls:
      - {name: hold_seet, args: {flight: SK830}}
agents:
  travel_agent:
    script:
      - tool_calls: [{name: hold_seat, args: {flight: SK830}}]
      - Held.
"""

#: the model keeps searching; the agent stops at its third call
LOOP = TOOLS_HEADER.format(name="loop") + """\
turns:
  - user: Find me a flight to Oslo.
trajectory:
  - call: search_flights
    args: {origin: CPH, destination: OSL}
  - answer: "SK830 at 09:10"
agents:
  travel_agent:
    params: {max_function_calls: 3}
    script:
""" + "      - tool_calls: [{name: search_flights, args: {origin: CPH, destination: OSL}}]\n" * 4

#: recorded against a live model (the loopback server here)
RECORDED = """\
format: 1
name: rec
turns:
  - user: Is my flight on time?
expect:
  answer: {contains: "on time"}
agents:
  travel_agent:
    recording: cassettes/rec.yaml
"""


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text) if text.startswith("\n") else text, encoding="utf-8")


@pytest.fixture(scope="module")
def travel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The scratch project and the environment to run pytest in it (nothing of this
    repository's settings)."""
    root = tmp_path_factory.mktemp("travel")
    _write(root, "pyproject.toml", PYPROJECT)
    _write(root, "travel_desk/__init__.py", "")
    _write(root, "travel_desk/tools.py", TOOLS)
    _write(root, "travel_desk/agents.py", AGENTS)
    _write(root, "scenarios/book.yaml", BOOK)
    _write(root, "tests/test_book.py", TEST_BOOK)
    for name, text in (("missing", MISSING), ("declined", DECLINED), ("factory", FACTORY),
                       ("typo", TYPO), ("loop", LOOP)):
        _write(root, f"slips/{name}.yaml", text)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "OPENAI_", "AGENTKIT_"))}
    env["PYTHONPATH"] = str(root)
    return root, env


def _pytest(travel: tuple[Path, dict[str, str]], *args: str,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    root, env = travel
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd or root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture
def agentkit(travel: tuple[Path, dict[str, str]],
             monkeypatch: pytest.MonkeyPatch) -> object:
    """``agentkit(*argv) -> (exit code, output)``, in-process, in the project's folder."""
    root, _ = travel
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))

    def run(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stderr(out):
            code = main(list(argv), out=out)
        return code, out.getvalue()

    return run


# ------------------------------------------------------------- collection, run_scenario
@pytest.mark.slow  # pytest in a fresh process on the user's project
def test_pytest_collects_the_scenarios_that_testpaths_leaves_out_and_says_so(travel) -> None:
    done = _pytest(travel, "-rA", "--snapshot-update")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED tests/test_book.py::test_booking_pays_the_held_seat" in done.stdout
    assert "PASSED scenarios/book.yaml::travel_agent" in done.stdout
    assert ("agentkit: scenarios collected from scenarios too (testpaths leaves it out; name "
            "paths to run only those)") in done.stdout
    assert "slips" not in done.stdout


@pytest.mark.slow  # pytest in a fresh process on the user's project
def test_run_scenario_resolves_its_path_from_the_rootdir_run_from_a_subfolder(travel) -> None:
    root, _ = travel

    done = _pytest(travel, "-rA", "test_book.py", cwd=root / "tests")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED test_book.py::test_booking_pays_the_held_seat" in done.stdout


# ------------------------------------------------------------- what a failure says
def test_agentkit_run_names_the_cause_of_each_slip(agentkit) -> None:
    code, output = agentkit("run", "slips", "--snapshots", "off")

    assert code == 2  # the typo is bad input
    # a tool missing from the agent: what happened, no claim of a tool of its own
    assert ("the agent has no tool `pay` (it was offered search_flights, hold_seat): its 1 "
            "call of `pay` found no tool, so the scenario's `pay` never ran") in output
    assert "of its own" not in output
    # the part of the call that differs, with the args mode
    assert ("expected pay({}) -> error contains 'declined', got pay({\"card\": \"4000\", "
            "\"hold_id\": \"H-SK830\"}) -> error") in output
    assert ("the args differ (args: exact, and the entry gives none, so the call must have "
            "none; it has `hold_id`, `card`)") in output
    # user code that raised: its innermost frame
    assert "failed unexpectedly: \"Encountered error: card 4000 declined\" (raised at " \
           f"{Path('travel_desk/tools.py')}:15 in pay)" in output
    assert ("the agent type's factory travel_desk.agents:build_broken raised KeyError: "
            f"'retries' at {Path('travel_desk/agents.py')}:17 in build_broken") in output
    assert "Traceback" not in output
    # a typo in an expected call, located at load
    assert (f"{Path('slips/typo.yaml')}:12: expect.tool_calls.calls.0.name: unknown tool "
            "`hold_seet`; did you mean `hold_seat`?") in output
    # the call limit, said once; the repeated call once, with its count
    assert output.count("the agent stopped at its limit max_function_calls=3") == 1
    assert output.count("unexpected tool call search_flights") == 1
    assert ('unexpected tool call search_flights({"origin": "CPH", "destination": "OSL"}) (not '
            "in the trajectory) (2 times)") in output


def test_agentkit_run_verbose_shows_the_whole_user_traceback(agentkit) -> None:
    code, output = agentkit("run", "slips/factory.yaml", "slips/declined.yaml", "--snapshots",
                            "off", "--verbose")

    assert code == 1
    assert output.count("Traceback (user code, most recent call last):") == 2
    assert 'settings["retries"]' in output
    assert "KeyError: 'retries'" in output
    assert 'raise ValueError(f"card {card} declined")' in output


@pytest.mark.slow  # pytest in a fresh process on the user's project
def test_pytest_names_the_cause_of_each_slip_and_with_v_the_user_traceback(travel) -> None:
    done = _pytest(travel, "-o", "agentkit_scenarios=slips", "-v",
                   "--continue-on-collection-errors", "slips")

    output = done.stdout
    assert done.returncode == 1, output + done.stderr
    assert "the agent has no tool `pay`" in output and "of its own" not in output
    assert "the args differ (args: exact, and the entry gives none" in output
    assert f"(raised at {Path('travel_desk/tools.py')}:15 in pay)" in output
    assert f"at {Path('travel_desk/agents.py')}:17 in build_broken" in output
    # once per slip in the failures section; the summary below it repeats whole messages
    # when the CI variable is set (pytest does not shorten them there), so it is left out
    failures = output.split("short test summary info")[0]
    assert failures.count("Traceback (user code, most recent call last):") == 2
    assert 'settings["retries"]' in output
    assert 'raise ValueError(f"card {card} declined")' in output
    assert "typo.yaml:12: expect.tool_calls.calls.0.name: unknown tool `hold_seet`" in output
    assert failures.count("the agent stopped at its limit max_function_calls=3") == 1


# ------------------------------------------------------------- re-recording
@pytest.mark.slow  # four processes against a live (loopback) model; the plugin's hint is
@pytest.mark.agentkit_allow_loopback  # checked in the default run by test_plugin_recording.py
def test_every_re_record_hint_is_the_command_that_re_records_as_printed(travel,
                                                                        agentkit) -> None:
    root, env = travel
    scenario = root / "scenarios/rec.yaml"
    _write(root, "scenarios/rec.yaml", RECORDED)
    replies = [Reply(body=completion("Yes, SK830 is on time.")),
               Reply(body=completion("Yes, SK830 is on time today."))]
    try:
        with LoopbackServer(replies) as server:
            recorded = subprocess.run(
                [str(Path(sys.executable).with_name("agentkit")), "record", "scenarios/rec.yaml",
                 "--agent", "travel_agent", "--model", "local-model", "--base-url", server.url],
                cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
            assert recorded.returncode == 0, recorded.stdout + recorded.stderr
            scenario.write_text(RECORDED.replace("Is my flight", "Is flight SK830"),
                                encoding="utf-8")

            failed = _pytest(travel, "scenarios/rec.yaml")
            ran = agentkit("run", "scenarios/rec.yaml")
            replayed = agentkit("replay", "scenarios/rec.yaml")

            hint = _hint(failed.stdout)
            assert hint == ("pytest --record-mode=rewrite --agentkit-model local-model "
                            f"--agentkit-base-url {server.url} 'scenarios/rec.yaml::travel_agent'")
            command = ("agentkit record scenarios/rec.yaml --agent travel_agent --mode rewrite "
                       f"--model local-model --base-url {server.url}")
            assert _hint(ran[1]) == _hint(replayed[1]) == command
            rerecorded = _pytest(travel, *shlex.split(hint)[1:])  # records, then replays
            assert rerecorded.returncode == 0, rerecorded.stdout + rerecorded.stderr
    finally:
        for leftover in (scenario, root / "scenarios/cassettes/rec.yaml",
                         root / "scenarios/__snapshots__/rec/travel_agent.json"):
            leftover.unlink(missing_ok=True)


def _hint(output: str) -> str:
    return next(line.strip().removeprefix("to re-record: ") for line in output.splitlines()
                if "to re-record: " in line)
