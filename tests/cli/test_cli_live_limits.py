"""An agent type's `max_tokens` and `timeout` reach the live model that records it (issue 33
item 6): sent with every request, bounding each call, located errors for bad values, and a
call the server is still serving is not sent again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.llms.mock import tool_call
from cli_helpers import ADDING, FAKE_URL, Outcome
from mocks.loopback_server import LoopbackServer, Reply, completion
from mocks.openai_server import FakeOpenAIServer
from tests.scenario_text import adding_scenario

RECORDED = "  function_calling:\n    recording: cassettes/adding.function_calling.yaml\n"


def _limited(write: Callable[[str, str], Path], limits: str) -> Path:
    assert RECORDED in ADDING
    return write("scenarios/adding.yaml", ADDING.replace(RECORDED, RECORDED + limits))


def test_max_tokens_of_an_agent_type_goes_with_every_request_it_records(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_openai_endpoint()
    path = _limited(write, "    max_tokens: 48\n")

    result = cli("record", path, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 0, result.out + result.err
    assert [request["max_tokens"] for request in server.requests] == [48, 48]


def test_without_max_tokens_no_request_carries_one(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_openai_endpoint()

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 0, result.out + result.err
    assert [("max_tokens" in request) for request in server.requests] == [False, False]


@pytest.mark.agentkit_allow_loopback
def test_a_call_past_the_agent_types_timeout_fails_once_and_is_not_sent_again(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path]) -> None:
    # a server still generating (a forced tool call without end): the client gives up at the
    # agent type's timeout and does not queue the same request behind it three more times
    path = _limited(write, "    timeout: 0.3\n")
    with LoopbackServer([Reply(body=completion("late"), stall=3.0)] * 4) as server:
        result = cli("record", path, "--agent", "function_calling",
                     "--base-url", server.url)

    assert result.code == 1
    assert len(server.requests) == 1
    assert "did not finish within total_timeout=0.3 s (1 attempt)" in result.out, result.out
    assert not (path.parent / "cassettes" / "adding.function_calling.yaml").exists()


@pytest.mark.parametrize(("limits", "message"), [
    ("    max_tokens: 0\n", "agents.function_calling.max_tokens: must be >= 1, got 0"),
    ("    max_tokens: lots\n", "agents.function_calling.max_tokens: expected a whole number, "
                               "got 'lots'"),
    ("    timeout: 0\n", "agents.function_calling.timeout: must be > 0, got 0"),
    ("    timeout: -5\n", "agents.function_calling.timeout: must be > 0, got -5"),
])
def test_a_bad_limit_is_an_error_at_its_line(cli: Callable[..., Outcome],
                                             write: Callable[[str, str], Path],
                                             limits: str, message: str) -> None:
    path = _limited(write, limits)
    line = ADDING.splitlines().index("    recording: cassettes/adding.function_calling.yaml") + 2

    result = cli("record", path, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 2
    assert f"{path}:{line}: {message}" in result.err, result.err


def test_eval_sends_each_agent_types_max_tokens_with_its_samples_requests(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    suite = write("scenarios/one.yaml", adding_scenario("one", """\
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    script: []
    max_tokens: 24
"""))
    server = fake_openai_endpoint([tool_call("add", a=2, b=3), "2 + 3 = 5"] * 2)

    result = cli("eval", suite.parent, "--agents",
                 "function_calling", "--models", "m1", "--samples", "2", "--concurrency", "1",
                 "--base-url", FAKE_URL)

    assert result.code == 0, result.out + result.err
    assert [request["max_tokens"] for request in server.requests] == [24] * 4
