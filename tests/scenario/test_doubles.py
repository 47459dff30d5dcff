"""The runner asks a run's test doubles through their protocol (ModelDouble), not their class:
a double of the user's own has its leftovers reported and is excused like a script."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentkit.llms import ChatMessage, ChatResponse, FunctionCallingLLM, LLMMetadata, MessageRole
from agentkit.llms.base import LLMRequest
from agentkit.llms.mock import tool_call
from agentkit.scenario import ScenarioError, run_scenario
from tests.scenario_text import adding_scenario


class Queue(FunctionCallingLLM):
    """A double of the test's own (no agentkit double class): answers from a queue of
    replies, an exception being raised."""

    def __init__(self, *replies: ChatMessage | Exception) -> None:
        self.replies = list(replies)
        self.excused: str | None = None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="queue", is_chat_model=True,
                           is_function_calling_model=True)

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ChatResponse(message=reply)

    def leftovers(self) -> list[str]:
        return [f"the queue has {len(self.replies)} unused"] if self.replies else []

    def excuse(self, reason: str) -> None:
        self.excused = reason


CALL = ChatMessage(role=MessageRole.ASSISTANT, content="",
                   additional_kwargs={"tool_calls": [tool_call("add", a=2, b=3)]})
ANSWER = ChatMessage(role=MessageRole.ASSISTANT, content="2 + 3 = 5")
EXTRA = ChatMessage(role=MessageRole.ASSISTANT, content="never asked")


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "queue.yaml"
    path.write_text(adding_scenario("queue", textwrap.dedent("""\
        agents:
          function_calling:
            script: ["not used: the run is given its model"]
        """)), encoding="utf-8")
    return path


def test_a_double_of_its_own_class_gets_its_leftovers_reported(scenario: Path) -> None:
    double = Queue(CALL, ANSWER, EXTRA)

    result = run_scenario(scenario, llm=double)

    assert [(p.kind, str(p)) for p in result.problems] == [("leftover", "the queue has 1 unused")]
    assert result.doubles == [double]


def test_a_double_of_its_own_class_is_excused_when_the_run_stops(scenario: Path) -> None:
    double = Queue(CALL, RuntimeError("the model broke"), EXTRA)

    result = run_scenario(scenario, llm=double)

    assert double.excused is not None and "the run stopped" in double.excused
    assert "the model broke" in double.excused
    assert not result.verdict.has("leftover")


def test_a_double_excused_beforehand_has_no_leftovers_reported(scenario: Path) -> None:
    double = Queue(CALL, ANSWER, EXTRA)
    double.excuse("the test asks less on purpose")

    result = run_scenario(scenario, llm=double)

    assert result.passed, result.problems


def test_a_double_of_its_own_class_is_excused_when_the_run_never_starts(scenario: Path) -> None:
    scenario.write_text(scenario.read_text(encoding="utf-8").replace(
        "    script:", "    params: {no_such_option: 1}\n    script:"), encoding="utf-8")
    double = Queue(CALL, ANSWER)

    with pytest.raises(ScenarioError, match="no_such_option"):
        run_scenario(scenario, llm=double)

    assert double.excused is not None and double.excused.startswith("the run never started")
