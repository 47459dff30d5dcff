"""ReActChatFormatter: the message list a ReAct model sees (SPEC §5)."""

import json

import pytest

from agentkit.agent.react import (
    CONTEXT_REACT_CHAT_SYSTEM_HEADER,
    REACT_CHAT_SYSTEM_HEADER,
    ActionReasoningStep,
    ObservationReasoningStep,
    ReActChatFormatter,
    ResponseReasoningStep,
    get_react_tool_descriptions,
)
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, MessageRole


def roles(messages: list[ChatMessage]) -> list[MessageRole]:
    return [m.role for m in messages]


def test_tool_description_block_uses_the_exact_markers(add_tool):
    (block,) = get_react_tool_descriptions([add_tool])

    assert block == (f"> Tool Name: add\n"
                     f"Tool Description: {add_tool.metadata.description}\n"
                     f"Tool Args: {add_tool.metadata.fn_schema_str}\n")


def test_tool_args_are_the_json_schema_of_the_tool(add_tool):
    (block,) = get_react_tool_descriptions([add_tool])

    assert '"a"' in block and '"b"' in block and '"integer"' in block


def test_system_header_lists_every_tool_and_their_names(tools):
    (system,) = ReActChatFormatter.from_defaults().format(tools, chat_history=[])

    assert system.role == MessageRole.SYSTEM
    for block in get_react_tool_descriptions(tools):
        assert block in system.content
    assert "(one of add, multiply)" in system.content


def test_default_header_renders_its_json_examples_with_single_braces(tools):
    (system,) = ReActChatFormatter.from_defaults().format(tools, chat_history=[])

    assert '{"query": "weather in Paris", "days": 3}' in system.content
    assert "{{" not in system.content and "{tool_desc}" not in system.content


def test_default_header_teaches_the_wire_format_markers(tools):
    (system,) = ReActChatFormatter.from_defaults().format(tools, chat_history=[])

    for marker in ("Thought:", "Action:", "Action Input:", "Observation:", "Answer:"):
        assert marker in system.content


def test_messages_are_system_header_then_chat_history_then_reasoning(tools):
    history = [ChatMessage(role=MessageRole.USER, content="hi"),
               ChatMessage(role=MessageRole.ASSISTANT, content="hello"),
               ChatMessage(role=MessageRole.USER, content="what is 1 + 2?")]
    reasoning = [ActionReasoningStep(thought="add", action="add", action_input={"a": 1, "b": 2}),
                 ObservationReasoningStep(observation="3")]

    messages = ReActChatFormatter.from_defaults().format(tools, history, reasoning)

    assert roles(messages) == [MessageRole.SYSTEM, MessageRole.USER, MessageRole.ASSISTANT,
                               MessageRole.USER, MessageRole.ASSISTANT, MessageRole.USER]
    assert messages[1:4] == history
    assert [m.content for m in messages[4:]] == [
        'Thought: add\nAction: add\nAction Input: {"a": 1, "b": 2}', "Observation: 3"]


def test_observations_are_user_messages_by_default(tools):
    messages = ReActChatFormatter().format(tools, [], [ObservationReasoningStep(observation="3")])

    assert messages[-1] == ChatMessage(role=MessageRole.USER, content="Observation: 3")


def test_observations_use_a_custom_observation_role(tools):
    formatter = ReActChatFormatter.from_defaults(observation_role=MessageRole.TOOL)

    messages = formatter.format(tools, [], [ObservationReasoningStep(observation="3")])

    assert messages[-1] == ChatMessage(role=MessageRole.TOOL, content="Observation: 3")


def test_earlier_actions_and_answers_are_replayed_as_assistant_messages(tools):
    reasoning = [ActionReasoningStep(thought="t", action="add", action_input={}),
                 ResponseReasoningStep(thought="done", response="3")]

    messages = ReActChatFormatter().format(tools, [], reasoning)

    assert messages[1:] == [
        ChatMessage(role=MessageRole.ASSISTANT, content="Thought: t\nAction: add\nAction Input: {}"),
        ChatMessage(role=MessageRole.ASSISTANT, content="Thought: done\nAnswer: 3")]


def test_context_appears_in_the_system_header(tools):
    formatter = ReActChatFormatter.from_defaults(context="You are a calculator for ACME.")

    (system,) = formatter.format(tools, chat_history=[])

    assert formatter.system_header == CONTEXT_REACT_CHAT_SYSTEM_HEADER
    assert "You are a calculator for ACME." in system.content
    assert "{context}" not in system.content
    assert "> Tool Name: add" in system.content


def test_without_context_the_header_has_no_context_section(tools):
    formatter = ReActChatFormatter.from_defaults()

    (system,) = formatter.format(tools, chat_history=[])

    assert formatter.system_header == REACT_CHAT_SYSTEM_HEADER
    assert "## Context" not in system.content


def test_from_defaults_on_a_subclass_returns_the_subclass():
    class ShoutingFormatter(ReActChatFormatter):
        pass

    formatter = ShoutingFormatter.from_defaults(context="ctx")

    assert type(formatter) is ShoutingFormatter
    assert formatter.context == "ctx"


def test_a_subclass_built_by_from_defaults_keeps_its_overrides(tools):
    class TaggingFormatter(ReActChatFormatter):
        def format(self, tools, chat_history, current_reasoning=None):
            messages = super().format(tools, chat_history, current_reasoning)
            messages[0] = ChatMessage(role=MessageRole.SYSTEM, content="TAG " + messages[0].content)
            return messages

    (system,) = TaggingFormatter.from_defaults().format(tools, chat_history=[])

    assert system.content.startswith("TAG ")


def test_a_custom_header_with_literal_json_braces_formats_without_error(tools):
    header = 'Tools:\n{tool_desc}\nReply like {"answer": "...", "sure": true} with {tool_names}.'

    (system,) = ReActChatFormatter(system_header=header).format(tools, chat_history=[])

    assert system.content.startswith("Tools:\n> Tool Name: add")
    assert system.content.endswith('Reply like {"answer": "...", "sure": true} with add, multiply.')


def test_a_custom_header_with_literal_nested_json_keeps_every_brace(tools):
    header = 'Reply like {"answer": {"text": "...", "tags": {"lang": "en"}}} {tool_names}'

    (system,) = ReActChatFormatter(system_header=header).format(tools, chat_history=[])

    assert system.content == ('Reply like {"answer": {"text": "...", "tags": {"lang": "en"}}} '
                              "add, multiply")


def test_a_custom_header_with_escaped_braces_renders_them_single(tools):
    header = 'Use {{"a": 1}}. {tool_desc}'

    (system,) = ReActChatFormatter(system_header=header).format(tools, chat_history=[])

    assert system.content.startswith('Use {"a": 1}. > Tool Name: add')


def test_tool_descriptions_with_braces_are_inserted_verbatim(tools):
    header = "{tool_desc}"

    (system,) = ReActChatFormatter(system_header=header).format(tools, chat_history=[])

    assert system.content == "\n".join(get_react_tool_descriptions(tools))


def test_no_tools_gives_an_empty_tool_list():
    (system,) = ReActChatFormatter(system_header="[{tool_desc}|{tool_names}]").format(
        [], chat_history=[])

    assert system.content == "[|]"


def test_from_context_is_from_defaults_with_that_context(tools):
    formatter = ReActChatFormatter.from_context("You are a calculator for ACME.")
    expected = ReActChatFormatter.from_defaults(context="You are a calculator for ACME.")

    assert formatter.system_header == CONTEXT_REACT_CHAT_SYSTEM_HEADER
    assert formatter.format(tools, []) == expected.format(tools, [])


def test_from_context_on_a_subclass_returns_the_subclass():
    class ShoutingFormatter(ReActChatFormatter):
        pass

    assert type(ShoutingFormatter.from_context("ctx")) is ShoutingFormatter


def test_an_empty_context_leaves_no_placeholder_in_a_context_header(tools):
    (system,) = ReActChatFormatter.from_context("").format(tools, chat_history=[])

    assert "{context}" not in system.content


def _count_renders(monkeypatch) -> list[str]:
    renders: list[str] = []
    original = PromptTemplate.format

    def counting(self, **kwargs):
        renders.append(self.template)
        return original(self, **kwargs)

    monkeypatch.setattr(PromptTemplate, "format", counting)
    return renders


def test_the_header_is_rendered_once_for_the_same_tools(tools, monkeypatch):
    formatter = ReActChatFormatter.from_defaults()
    renders = _count_renders(monkeypatch)

    first = formatter.format(tools, [])[0].content
    second = formatter.format(list(tools), [])[0].content

    assert len(renders) == 1 and first == second


def test_the_header_is_rendered_again_for_other_tools(tools, add_tool):
    formatter = ReActChatFormatter.from_defaults()

    formatter.format(tools, [])
    (system,) = formatter.format([add_tool], [])

    assert "(one of add)" in system.content and "> Tool Name: multiply" not in system.content


def test_the_header_follows_a_changed_template_context_and_tool_description(tools):
    formatter = ReActChatFormatter.from_defaults(context="first")
    formatter.format(tools, [])

    formatter.system_header = "{context} | {tool_desc}"
    formatter.context = "second"
    tools[0].metadata.description = "adds two numbers, now documented"
    (system,) = formatter.format(tools, [])

    assert system.content.startswith("second | > Tool Name: add\n"
                                     "Tool Description: adds two numbers, now documented\n")


def test_the_system_message_is_reused_while_its_header_is_unchanged(tools):
    formatter = ReActChatFormatter.from_defaults()

    first = formatter.format(tools, [])[0]
    second = formatter.format(tools, [])[0]

    assert second is first


def test_a_system_message_changed_by_its_receiver_is_not_reused(tools):
    formatter = ReActChatFormatter.from_defaults()
    first = formatter.format(tools, [])[0]
    header = first.content

    first.content = "TAG " + header
    second = formatter.format(tools, [])[0]

    assert second is not first and second.content == header


def test_a_reasoning_step_seen_before_reuses_its_message(tools):
    formatter = ReActChatFormatter()
    action = ActionReasoningStep(thought="t", action="add", action_input={"a": 1})
    observation = ObservationReasoningStep(observation="1")

    earlier = formatter.format(tools, [], [action])
    later = formatter.format(tools, [], [action, observation])

    assert later[1] is earlier[1]
    assert later[2] == ChatMessage(role=MessageRole.USER, content="Observation: 1")


def test_a_replaced_reasoning_step_gets_a_new_message(tools):
    formatter = ReActChatFormatter()
    reasoning = [ObservationReasoningStep(observation="old")]
    formatter.format(tools, [], reasoning)

    reasoning[0] = ObservationReasoningStep(observation="new")
    messages = formatter.format(tools, [], reasoning)

    assert messages[-1].content == "Observation: new"


def test_a_changed_observation_role_applies_to_steps_seen_before(tools):
    formatter = ReActChatFormatter()
    reasoning = [ObservationReasoningStep(observation="3")]
    formatter.format(tools, [], reasoning)

    formatter.observation_role = MessageRole.TOOL
    messages = formatter.format(tools, [], reasoning)

    assert messages[-1] == ChatMessage(role=MessageRole.TOOL, content="Observation: 3")



def test_reasoning_that_does_not_extend_the_last_calls_is_formatted_whole(tools):
    formatter = ReActChatFormatter()
    formatter.format(tools, [], [ObservationReasoningStep(observation=str(n)) for n in range(3)])

    messages = formatter.format(tools, [], (ObservationReasoningStep(observation="other"),))

    assert [m.content for m in messages[1:]] == ["Observation: other"]


class _Opaque:
    def __str__(self) -> str:
        return "opaque"


@pytest.mark.parametrize("action_input", [
    {}, {"city": "Paris"}, {"text": "é \u2028 \" \\ \n", "list": [1, 2.5, None, True]},
    {"float": float("nan"), "big": 10**30, "inf": float("-inf")}, {"object": _Opaque()},
])
def test_an_action_replays_its_input_as_json_dumps_writes_it(action_input):
    step = ActionReasoningStep(thought="t", action="a", action_input=action_input)
    written = json.dumps(step.action_input, ensure_ascii=False, default=str)

    assert step.get_content() == f"Thought: t\nAction: a\nAction Input: {written}"
