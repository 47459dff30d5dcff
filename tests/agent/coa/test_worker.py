"""The Chain-of-Abstraction worker and pack (agentkit.agent.coa): the reasoning call, running
the chain level by level, errors, the refine call, memory, sources, sync/async/stream."""

import asyncio
import re

import pytest

from agentkit.agent import AgentRunner, BaseLlamaPack
from agentkit.agent.coa import (
    REASONING_PROMPT_TEMPLATE,
    REFINE_REASONING_PROMPT_TEMPLATE,
    ChainLevelEvent,
    ChainParsedEvent,
    CoAAgentPack,
    CoAAgentWorker,
)
from agentkit.core.sim import Stopwatch, asleep, run_sync
from agentkit.instrumentation import AgentStepStartEvent, ToolCallEndEvent, collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.tools import FunctionTool, KeywordObjectRetriever

ran: list[str] = []


def add(a: int, b: int) -> int:
    """Add two integers."""
    ran.append("add")
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran.append("multiply")
    return a * b


async def lookup(city: str) -> str:
    """Today's weather in a city (takes 0.1 simulated seconds)."""
    await asleep(0.1)
    ran.append(f"lookup {city}")
    return f"{city}: sunny"


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def primes(n: int) -> list[int]:
    """The first n primes."""
    return [2, 3, 5, 7, 11][:n]


def total(numbers: list[int]) -> int:
    """The sum of some numbers."""
    ran.append(f"total {numbers!r}")
    return sum(numbers)


def final_answer(text: str) -> str:
    """Give the answer to the user verbatim."""
    return text


TOOLS = [FunctionTool.from_defaults(fn) for fn in (add, multiply, explode, primes, total)] + [
    FunctionTool.from_defaults(async_fn=lookup),
    FunctionTool.from_defaults(final_answer, return_direct=True)]

SALLY_CHAIN = ('Sally has [FUNC add(3, 2) = y1] apples, then [FUNC multiply("y1", 3) = y2] '
               "apples.")
FOUR_LOOKUPS = " ".join(f'[FUNC lookup("{city}") = y{n}]'
                        for n, city in enumerate(["Paris", "Rome", "Lima", "Oslo"], 1))


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    ran.clear()


def agent_for(*script, latency: float = 0.0, **kwargs) -> tuple[AgentRunner, ScriptedLLM]:
    llm = ScriptedLLM(list(script), latency=latency)
    return CoAAgentWorker.from_tools(TOOLS, llm=llm, **kwargs).as_agent(), llm


def refine_input(llm: ScriptedLLM) -> str:
    """The reasoning the refine call received."""
    prompt = llm.requests[1].messages[-1].content
    return prompt.split("Previous reasoning:\n", 1)[1].rsplit("\n\nResponse:\n", 1)[0]


def contents(outputs) -> list[str]:
    return [o.content for o in outputs]


# ================================================================ the happy path
# Tests taking `ask` run in every chat mode: chat, achat, stream_chat, astream_chat.
def test_a_chain_runs_its_calls_then_the_refine_call_answers(ask):
    agent, llm = agent_for(SALLY_CHAIN, "Sally has 15 apples.")

    response = ask(agent, "How many apples does Sally have?")

    assert str(response) == "Sally has 15 apples."
    assert (llm.calls, ran) == (2, ["add", "multiply"])
    assert [(o.tool_name, o.raw_input["kwargs"], o.content) for o in response.sources] == [
        ("add", {"a": 3, "b": 2}, "5"), ("multiply", {"a": 5, "b": 3}, "15")]


def test_the_refine_call_gets_the_question_and_the_filled_in_reasoning():
    agent, llm = agent_for(SALLY_CHAIN, "Sally has 15 apples.")

    agent.chat("How many apples?")

    assert llm.requests[1].messages[-1].content == REFINE_REASONING_PROMPT_TEMPLATE.format(
        question="How many apples?",
        prev_reasoning='Sally has [FUNC add(3, 2) = "5"] apples, then [FUNC multiply("5", 3) = '
                       '"15"] apples.')


def test_the_reasoning_prompt_is_one_user_message_after_the_memory_messages():
    agent, llm = agent_for("No functions needed.")
    history = [ChatMessage(role=MessageRole.USER, content="hi"),
               ChatMessage(role=MessageRole.ASSISTANT, content="hello")]

    agent.chat("What is 2 + 3?", chat_history=history)

    *before, prompt = llm.requests[0].messages
    assert before == history
    assert prompt.role == MessageRole.USER
    assert prompt.content.endswith("\nQuestion:\nWhat is 2 + 3?\n\nAbstract plan of reasoning:\n")
    assert ('Available functions:\n```python\ndef add(a: integer, b: integer):\n   """Add two '
            'integers."""\n    ...\ndef multiply(') in prompt.content


def test_the_refine_call_also_follows_the_memory_messages():
    agent, llm = agent_for(SALLY_CHAIN, "15.")
    history = [ChatMessage(role=MessageRole.USER, content="hi")]

    agent.chat("How many?", chat_history=history)

    assert llm.requests[1].messages[:-1] == history


def test_a_reply_without_func_is_the_answer_after_one_llm_call(ask):
    agent, llm = agent_for("Paris is the capital of France.")

    response = ask(agent, "Capital of France?")

    assert (str(response), llm.calls, response.sources) == (
        "Paris is the capital of France.", 1, [])


def test_calls_in_the_refine_reply_are_not_run():
    agent, _ = agent_for("[FUNC add(1, 1) = y1]", "It is [FUNC add(1, 1) = y2].")

    response = agent.chat("1 + 1?")

    assert (str(response), ran) == ("It is [FUNC add(1, 1) = y2].", ["add"])


def test_a_placeholder_argument_gets_the_raw_output_of_its_call():
    agent, _ = agent_for("[FUNC primes(3) = y1] sum to [FUNC total(y1) = y2]", "10")

    agent.chat("Sum of the first 3 primes?")

    assert ran == ["total [2, 3, 5]"]


def test_keyword_arguments_reach_the_tool():
    agent, _ = agent_for("[FUNC add(b=2, a=40) = y1]", "42")

    response = agent.chat("40 + 2?")

    assert response.sources[0].raw_input["kwargs"] == {"b": 2, "a": 40}
    assert response.sources[0].content == "42"


def test_a_chain_of_twelve_placeholders_fills_y1_without_touching_y10_to_y12():
    chain = " ".join(f"[FUNC add({n}, 0) = y{n}]" for n in range(1, 13)) + (
        ' [FUNC add(y1, "y10") = y13] so y1, y10, y11, y12.')
    agent, llm = agent_for(chain, "done")

    agent.chat("Add them")

    reasoning = refine_input(llm)
    assert reasoning.endswith('[FUNC add("1", "10") = "11"] so "1", "10", "11", "12".')


# ================================================================ memory and sources
def test_memory_gains_exactly_the_user_message_and_the_answer_per_chat(ask):
    agent, _ = agent_for(SALLY_CHAIN, "15 apples.", "Nothing to compute.")

    ask(agent, "How many apples?")
    ask(agent, "And now?")

    assert [(m.role, m.content) for m in agent.chat_history] == [
        (MessageRole.USER, "How many apples?"), (MessageRole.ASSISTANT, "15 apples."),
        (MessageRole.USER, "And now?"), (MessageRole.ASSISTANT, "Nothing to compute.")]


def test_the_first_step_outputs_the_filled_in_reasoning_and_is_not_last():
    agent, _ = agent_for(SALLY_CHAIN, "15 apples.")
    task = agent.create_task("How many apples?")

    first = agent.run_step(task.task_id)
    second = agent.run_step(task.task_id)

    assert (first.is_last, str(first)) == (False, 'Sally has [FUNC add(3, 2) = "5"] apples, '
                                                  'then [FUNC multiply("5", 3) = "15"] apples.')
    assert contents(first.output.sources) == ["5", "15"]
    assert (second.is_last, str(second)) == (True, "15 apples.")


# ================================================================ concurrency
def test_four_independent_calls_run_concurrently(ask):
    agent, _ = agent_for(FOUR_LOOKUPS, "All sunny.")
    watch = Stopwatch.start()

    ask(agent, "Weather in four cities?")

    assert (round(watch.wall, 6), round(watch.serial, 6)) == (0.1, 0.4)
    assert sorted(ran) == ["lookup Lima", "lookup Oslo", "lookup Paris", "lookup Rome"]


def test_levels_run_one_after_another():
    agent, _ = agent_for('[FUNC lookup("Paris") = y1] [FUNC lookup("Rome") = y2] '
                         "[FUNC lookup(y1) = y3]", "ok")
    watch = Stopwatch.start()

    agent.chat("Weather?")

    assert (round(watch.wall, 6), round(watch.serial, 6)) == (0.2, 0.3)


def test_llm_latency_adds_to_the_concurrent_calls():
    agent, _ = agent_for(FOUR_LOOKUPS, "All sunny.", latency=0.2)
    watch = Stopwatch.start()

    agent.chat("Weather?")

    assert round(watch.wall, 6) == 0.5  # 2 LLM calls x 0.2 s + one level of 0.1 s


# ================================================================ errors
def test_a_failing_call_makes_its_dependents_errors_without_running_them(ask):
    agent, llm = agent_for('[FUNC explode("boom") = y1] [FUNC add(y1, 1) = y2] '
                           "[FUNC multiply(y2, 2) = y3] [FUNC add(2, 2) = y4]", "Partly.")
    with collect_events() as events:
        response = ask(agent, "Compute")

    first, second, third, fourth = response.sources
    assert (first.is_error, first.content) == (True, "Error: boom")
    assert (second.is_error, second.content) == (
        True, "Error: input y1 failed, so FUNC #2 at line 1, column 29 "
              "(`[FUNC add(y1, 1) = y2]`) was not run")
    assert third.is_error and third.content.startswith("Error: input y2 failed, so FUNC #3")
    assert (fourth.is_error, fourth.content) == (False, "4")
    assert ran == ["add"]  # only y4 ran
    assert [e.tool_name for e in events if isinstance(e, ToolCallEndEvent)] == [
        "explode", "add", "add", "multiply"]  # level by level: y1 and y4, then y2, then y3
    assert '[FUNC add("Error: boom", 1) = "Error: input y1 failed' in refine_input(llm)


def test_an_unknown_function_is_an_error_naming_it_and_the_func():
    agent, _ = agent_for("[FUNC subtract(5, 3) = y1]", "Cannot.")

    (output,) = agent.chat("5 - 3?").sources

    assert (output.tool_name, output.is_error, output.content) == (
        "subtract", True, "Error: FUNC #1 at line 1, column 1 (`[FUNC subtract(5, 3) = y1]`): "
                          "No such tool named `subtract`.")


def test_too_many_arguments_are_an_error_naming_the_parameters():
    agent, _ = agent_for("[FUNC add(1, 2, 3) = y1]", "Cannot.")

    (output,) = agent.chat("1 + 2 + 3?").sources

    assert output.is_error and output.content.endswith(
        "add() takes 2 argument(s) (a, b) but 3 were given")


def test_the_same_argument_by_position_and_by_name_is_an_error():
    agent, _ = agent_for("[FUNC add(1, a=2) = y1]", "Cannot.")

    (output,) = agent.chat("?").sources

    assert output.is_error and output.content.endswith("add() got several values for a")


def test_arguments_the_tool_rejects_are_an_error_output():
    agent, _ = agent_for('[FUNC add("one", 2) = y1]', "Cannot.")

    (output,) = agent.chat("?").sources

    assert output.is_error and "`a`" in output.content and ran == []


def test_an_unparseable_func_is_an_error_and_the_rest_of_the_chain_runs(ask):
    agent, llm = agent_for("[FUNC add(1,, 2) = y1] [FUNC multiply(2, 3) = y2] "
                           "[FUNC add(y1, 1) = y3]", "Only 6.")

    response = ask(agent, "Compute")

    assert str(response) == "Only 6."
    assert [(o.tool_name, o.is_error) for o in response.sources] == [
        ("add", True), ("multiply", False), ("add", True)]
    assert response.sources[0].content == (
        "Error: FUNC #1 at line 1, column 1 (`[FUNC add(1,, 2) = y1]`): cannot parse the "
        "arguments: invalid syntax")
    assert refine_input(llm).startswith(
        '[FUNC add(1,, 2) = "Error: FUNC #1 at line 1, column 1')
    assert ran == ["multiply"]


def test_an_unterminated_func_is_an_error_and_memory_stays_sound():
    agent, llm = agent_for("First [FUNC add(2, 2) = y1], then [FUNC multiply(y1, 3", "4.")

    response = agent.chat("Compute")

    (_, unterminated) = response.sources
    assert unterminated.content.endswith("the argument list is not closed (no matching `)`)")
    assert refine_input(llm).endswith(
        '[FUNC multiply(y1, 3 = "Error: FUNC #2 at line 1, column 35 (`[FUNC multiply(y1, 3`): '
        'the argument list is not closed (no matching `)`)"')
    assert [m.content for m in agent.chat_history] == ["Compute", "4."]


@pytest.mark.parametrize(("chain", "where", "problem"), [
    ("[FUNC add(1, 2) = y1] [FUNC add(3, 4) = y1]", "FUNC #2 at line 1, column 23",
     "placeholder y1 is already defined by FUNC #1"),
    ("[FUNC add(1, 2) = y1] [FUNC add(y1, y3) = y2]", "FUNC #2 at line 1, column 23",
     "input y3 is not defined by any FUNC"),
    ("[FUNC add(y2, 1) = y1] [FUNC add(y1, 1) = y2]", "FUNC #2 at line 1, column 24",
     "is part of a dependency cycle: y2 -> y1 -> y2"),
])
def test_a_bad_chain_is_an_error_output_naming_the_problem_and_the_func(chain, where, problem):
    agent, _ = agent_for(chain, "Could not compute.")

    response = agent.chat("Compute")

    errors = [o.content for o in response.sources if o.is_error]
    assert any(problem in e and e.startswith(f"Error: {where}") for e in errors), errors
    assert str(response) == "Could not compute."
    assert [m.content for m in agent.chat_history] == ["Compute", "Could not compute."]


def test_a_func_without_a_name_is_an_error_under_no_tool_name():
    agent, _ = agent_for("[FUNC (1, 2) = y1]", "No.")

    (output,) = agent.chat("?").sources

    assert (output.tool_name, output.content) == (
        "unknown", "Error: FUNC #1 at line 1, column 1 (`[FUNC (1, 2) = y1]`): expected a "
                   "function name after `[FUNC`")


def test_an_llm_error_propagates_and_leaves_memory_untouched():
    agent, _ = agent_for(SALLY_CHAIN, RuntimeError("model down"))

    with pytest.raises(RuntimeError, match="model down"):
        agent.chat("How many apples?")

    assert agent.chat_history == []


# ================================================================ return_direct
def test_a_return_direct_call_is_the_answer_without_a_refine_call():
    agent, llm = agent_for('[FUNC add(2, 2) = y1] [FUNC final_answer("It is y1") = y2]')

    response = agent.chat("2 + 2?")

    assert (str(response), llm.calls) == ("It is y1", 1)
    assert [m.content for m in agent.chat_history] == ["2 + 2?", "It is y1"]


# ================================================================ async, stream, loops
def test_stream_chat_streams_the_refine_answer_in_the_models_chunks():
    agent, llm = agent_for(SALLY_CHAIN, "Sally has 15 apples.")

    stream = agent.stream_chat("How many apples?")
    deltas = list(stream.response_gen)

    assert deltas == ["Sally ", "has ", "15 ", "apples."]
    assert stream.response == "Sally has 15 apples."
    assert [r.stream for r in llm.requests] == [True, True]
    assert contents(stream.sources) == ["5", "15"]
    assert [m.content for m in agent.chat_history] == ["How many apples?", "Sally has 15 apples."]


def test_memory_is_written_when_the_streamed_answer_ends():
    agent, _ = agent_for(SALLY_CHAIN, "Sally has 15 apples.")

    stream = agent.stream_chat("How many apples?")

    assert agent.chat_history == []
    stream.get_response()
    assert len(agent.chat_history) == 2


def test_stream_chat_of_a_direct_answer_hands_out_the_models_chunks():
    agent, llm = agent_for("Paris is lovely.")

    stream = agent.stream_chat("Tell me about Paris")

    assert list(stream.response_gen) == ["Paris ", "is ", "lovely."]
    assert llm.calls == 1 and [m.content for m in agent.chat_history] == [
        "Tell me about Paris", "Paris is lovely."]


def test_astream_chat_streams_the_refine_answer():
    agent, _ = agent_for(SALLY_CHAIN, "Sally has 15 apples.")

    async def deltas():
        stream = await agent.astream_chat("How many apples?")
        return [d async for d in stream.async_response_gen()]

    assert run_sync(deltas()) == ["Sally ", "has ", "15 ", "apples."]


def test_stream_of_a_return_direct_answer_is_one_chunk():
    agent, _ = agent_for('[FUNC final_answer("Four.") = y1]')

    assert list(agent.stream_chat("2 + 2?").response_gen) == ["Four."]


def test_sync_chat_works_inside_a_running_event_loop():
    agent, _ = agent_for(SALLY_CHAIN, "Sally has 15 apples.")

    async def chat_from_a_coroutine():
        return str(agent.chat("How many apples?"))

    assert asyncio.run(chat_from_a_coroutine()) == "Sally has 15 apples."


def test_run_step_works_inside_a_running_event_loop():
    agent, _ = agent_for(FOUR_LOOKUPS, "sunny")

    async def steps():
        task = agent.create_task("Weather?")
        return [agent.run_step(task.task_id).is_last, agent.run_step(task.task_id).is_last]

    assert asyncio.run(steps()) == [False, True]


# ================================================================ events
def test_the_parsed_chain_and_each_level_go_on_the_bus_in_the_step():
    agent, _ = agent_for('[FUNC explode("x") = y1] [FUNC add(2, 2) = y2] [FUNC add(y1, 1) = y3]',
                         "ok")
    with collect_events() as events:
        agent.chat("Compute")

    step_span = next(e.span_id for e in events if isinstance(e, AgentStepStartEvent))
    (parsed,) = [e for e in events if isinstance(e, ChainParsedEvent)]
    levels = [e for e in events if isinstance(e, ChainLevelEvent)]
    assert parsed.span_id == step_span and parsed.chain.levels == ((1, 2), (3,))
    assert [(e.level, e.calls, e.failed, e.span_id) for e in levels] == [
        (0, ["y1", "y2"], ["y1"], step_span), (1, ["y3"], ["y3"], step_span)]


def test_a_direct_answer_emits_no_chain_event():
    agent, _ = agent_for("Just text.")
    with collect_events() as events:
        agent.chat("?")

    assert not [e for e in events if isinstance(e, (ChainParsedEvent, ChainLevelEvent))]


def test_a_level_event_says_when_the_level_started():
    agent, _ = agent_for(FOUR_LOOKUPS, "ok", latency=0.5)
    with collect_events() as events:
        agent.chat("Weather?")

    (level,) = [e for e in events if isinstance(e, ChainLevelEvent)]
    assert (level.started, round(level.time, 6)) == (0.5, 0.6)


# ================================================================ construction
def test_custom_prompt_templates_are_used():
    agent, llm = agent_for(SALLY_CHAIN, "15",
                           reasoning_prompt_template="Q={question}\nF={functions}",
                           refine_reasoning_prompt_template="{question}|{prev_reasoning}")

    agent.chat("How many?")

    assert llm.requests[0].messages[-1].content.startswith("Q=How many?\nF=def add(")
    assert llm.requests[1].messages[-1].content.startswith("How many?|Sally has [FUNC add")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"reasoning_prompt_template": "Q={question}"},
     "reasoning_prompt_template must use exactly {functions}, {question}: it lacks {functions}"),
    ({"refine_reasoning_prompt_template": "{question} {prev_reasoning} {x}"},
     "refine_reasoning_prompt_template must use exactly {prev_reasoning}, {question}: it has "
     "unknown field(s) {x}"),
    ({"reasoning_prompt_template": "{question} {functions} {"},
     "reasoning_prompt_template is not a valid str.format template"),
])
def test_a_bad_prompt_template_is_an_error_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        CoAAgentWorker.from_tools(TOOLS, llm=ScriptedLLM([]), **kwargs)


def test_from_tools_rejects_unknown_arguments():
    with pytest.raises(TypeError, match=r"unexpected arguments: \['max_iterations'\]"):
        CoAAgentWorker.from_tools(TOOLS, llm=ScriptedLLM([]), max_iterations=3)


def test_neither_tools_nor_a_retriever_is_an_error():
    with pytest.raises(ValueError, match=r"Either tools or tool_retriever must be provided\."):
        CoAAgentWorker.from_tools(llm=ScriptedLLM([]))


def test_no_llm_is_an_error():
    with pytest.raises(ValueError, match="CoAAgentWorker needs an `llm`"):
        CoAAgentWorker.from_tools(TOOLS)


def test_a_tool_retriever_picks_the_functions_offered():
    llm = ScriptedLLM(["No calls."])
    retriever = KeywordObjectRetriever(TOOLS, top_k=1)
    agent = CoAAgentWorker.from_tools(tool_retriever=retriever, llm=llm).as_agent()

    agent.chat("multiply these")

    prompt = llm.requests[0].messages[-1].content
    assert "def multiply(" in prompt and "def add(" not in prompt


def test_verbose_prints_the_functions_the_chain_and_the_answer(capsys):
    agent, _ = agent_for(SALLY_CHAIN, "15.", verbose=True)

    agent.chat("How many?")

    out = capsys.readouterr().out
    for title in ("Available Parsed Functions", "Generated Chain of Abstraction",
                  "Executing add with inputs {'a': 3, 'b': 2}", "Filled-in Reasoning",
                  "Final Response ====\n15."):
        assert title in out


def test_the_default_prompts_are_the_wire_format():
    assert REASONING_PROMPT_TEMPLATE.endswith(
        "Available functions:\n```python\n{functions}\n```\n\nQuestion:\n{question}\n\n"
        "Abstract plan of reasoning:\n")
    assert "[FUNC {{function_name}}({{input1}}, {{input2}}, ...) = {{output_placeholder}}]" in (
        REASONING_PROMPT_TEMPLATE)
    assert REFINE_REASONING_PROMPT_TEMPLATE.endswith(
        "Question:\n{question}\n\nPrevious reasoning:\n{prev_reasoning}\n\nResponse:\n")


# ================================================================ the pack
def test_the_pack_runs_a_chat():
    llm = ScriptedLLM([SALLY_CHAIN, "Sally has 15 apples."])
    pack = CoAAgentPack(TOOLS, llm)

    response = pack.run("How many apples?")

    assert str(response) == "Sally has 15 apples."
    assert [m.content for m in pack.agent.chat_history] == ["How many apples?",
                                                            "Sally has 15 apples."]


def test_the_pack_exposes_its_modules():
    llm = ScriptedLLM([])
    pack = CoAAgentPack(TOOLS, llm)

    modules = pack.get_modules()

    assert set(modules) == {"llm", "callback_manager", "agent_worker", "agent"}
    assert modules["llm"] is llm and isinstance(modules["agent_worker"], CoAAgentWorker)
    assert isinstance(modules["agent"], AgentRunner)
    assert modules["agent"].agent_worker is modules["agent_worker"]


def test_the_pack_passes_worker_and_runner_arguments_on():
    pack = CoAAgentPack(TOOLS, ScriptedLLM([]), agent_worker_kwargs={"verbose": True},
                        agent_runner_kwargs={"delete_task_on_finish": True})

    assert pack.agent_worker.verbose is True and pack.agent.delete_task_on_finish is True


def test_the_pack_is_a_llama_pack():
    assert isinstance(CoAAgentPack(TOOLS, ScriptedLLM([])), BaseLlamaPack)


def test_a_llama_pack_must_give_its_modules_and_run():
    class Half(BaseLlamaPack):
        def run(self, *args, **kwargs):
            return None

    assert Half.__abstractmethods__ == frozenset({"get_modules"})
    with pytest.raises(TypeError):
        Half()  # type: ignore[abstract]


def test_the_pack_needs_an_llm():
    with pytest.raises(ValueError, match="CoAAgentPack needs an `llm`"):
        CoAAgentPack(TOOLS)
