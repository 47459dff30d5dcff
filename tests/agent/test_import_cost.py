"""What ``import agentkit.agent`` loads: only the agent stack, never a backend SDK, the
scenario/report layers, asyncio (loaded with the first event loop, by agentkit.core._simloop),
the rarer agents of the package face or modules only a rare input needs (the cold-import
budget, benchmarks/bench_agents.py); and the face still answers for every name it had."""

import json
import subprocess
import sys

import pytest

NOT_IMPORTED = [
    "openai", "httpx", "yaml", "tabulate", "deepdiff",  # backends, scenario files, reports
    "agentkit.llms.openai", "agentkit.scenario", "agentkit.report", "agentkit.workflow",
    "html",  # ReAct output with HTML entities only
    "mimetypes",  # images of an unknown type only
    # the event loop: imported on the first sync call or async wait (agentkit.core.sim)
    "asyncio", "ssl", "socket", "concurrent.futures", "selectors", "agentkit.core._simloop",
    # the face's rarer agents, imported when first asked for (agentkit.core.lazy)
    "agentkit.agent.custom", "agentkit.agent.react_multimodal", "agentkit.agent.runner.parallel",
    "agentkit.agent.pack",
]

#: ``agentkit.agent.__all__`` as it was before the face became lazy (issue 36): no name may
#: go missing or appear by accident.
PUBLIC = [
    "AgentChatResponse", "AgentRunner", "AgentState", "AgentWorker", "BaseAgent",
    "BaseAgentWorker", "BaseLlamaPack", "CustomSimpleAgentWorker", "FnAgentWorker",
    "FunctionCallingAgent", "FunctionCallingAgentWorker", "MultimodalReActAgent",
    "MultimodalReActAgentWorker", "ParallelAgentRunner", "QueryPipelineAgentWorker",
    "ReActAgent", "ReActAgentWorker", "ReActChatFormatter", "ReActOutputParser",
    "StreamingAgentChatResponse", "Task", "TaskState", "TaskStep", "TaskStepOutput",
]


def _run(program: str) -> str:
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True)
    return done.stdout


def _loaded_after(statement: str) -> set[str]:
    return set(_run(f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))").split())


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    return _loaded_after("import agentkit.agent")


@pytest.mark.parametrize("module", NOT_IMPORTED)
def test_import_agentkit_agent_does_not_import(loaded, module):
    assert module not in loaded


def test_the_check_sees_a_module_that_is_imported(loaded):
    assert "agentkit.agent.react" in loaded and "pydantic" in loaded


def test_the_face_answers_for_every_public_name_from_its_defining_module():
    names = _run("import agentkit.agent as face, json\n"
                 "print(json.dumps([sorted(face.__all__), sorted(set(face.__all__) & set(dir(face))),"
                 " {n: getattr(face, n).__module__ for n in face.__all__}]))")
    listed, in_dir, homes = json.loads(names)
    assert listed == sorted(PUBLIC) and in_dir == listed
    assert homes["ParallelAgentRunner"] == "agentkit.agent.runner.parallel"
    assert homes["FnAgentWorker"] == "agentkit.agent.custom.simple_function"
    assert homes["MultimodalReActAgentWorker"] == "agentkit.agent.react_multimodal.step"
    assert homes["BaseLlamaPack"] == "agentkit.agent.pack"


def test_a_lazy_name_imports_its_module_once_and_then_is_the_module_s_own():
    import agentkit.agent as face
    from agentkit.agent.runner.parallel import ParallelAgentRunner

    assert face.ParallelAgentRunner is ParallelAgentRunner
    assert "ParallelAgentRunner" in vars(face)  # kept: the next access is a plain lookup
    from agentkit.agent import runner

    assert runner.ParallelAgentRunner is ParallelAgentRunner


def test_star_import_and_an_unknown_name_behave_as_on_an_eager_face():
    namespace: dict[str, object] = {}
    exec("from agentkit.agent import *", namespace)
    assert set(PUBLIC) <= set(namespace)
    import agentkit.agent as face

    with pytest.raises(AttributeError, match="has no attribute 'ReactAgent'"):
        face.ReactAgent


def test_the_event_loop_module_comes_with_the_first_chat():
    loaded = _loaded_after("import agentkit.agent\n"
                           "from agentkit.core.sim import run_sync\n"
                           "async def answer():\n    return 42\n"
                           "assert run_sync(answer()) == 42")
    assert {"asyncio", "agentkit.core._simloop"} <= loaded


def test_the_virtual_loop_is_still_found_on_agentkit_core_sim():
    from agentkit.core import _simloop, sim

    assert sim.VirtualTimeLoop is _simloop.VirtualTimeLoop
    assert sim.THREAD_WAIT == _simloop.THREAD_WAIT
    assert "VirtualTimeLoop" in dir(sim) and "VirtualTimeLoop" in sim.__all__


def test_a_react_text_with_an_html_entity_still_parses():
    from agentkit.agent.react.output_parser import ReActOutputParser

    step = ReActOutputParser().parse('Thought: t\nAction: tool\nAction Input: {&#34;a&#34;: 1}')
    assert step.action_input == {"a": 1}


def test_an_image_of_an_unknown_kind_still_gets_its_type_from_its_name():
    from agentkit.llms.types import ImageBlock

    assert ImageBlock(image=b"\x00\x01", path="photo.jpg").image_mimetype == "image/jpeg"
