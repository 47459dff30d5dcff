"""What ``import agentkit.agent`` loads: only the agent stack, never a backend SDK, the
scenario/report layers or modules only a rare input needs (the cold-import budget,
benchmarks/bench_agents.py)."""

import subprocess
import sys

import pytest

NOT_IMPORTED = [
    "openai", "httpx", "yaml", "tabulate", "deepdiff",  # backends, scenario files, reports
    "agentkit.llms.openai", "agentkit.scenario", "agentkit.report", "agentkit.workflow",
    "html",  # ReAct output with HTML entities only
    "mimetypes",  # images of an unknown type only
]


def _loaded_after(statement: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", f"{statement}\nimport sys\n"
                           "print('\\n'.join(sys.modules))"],
                          capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    return _loaded_after("import agentkit.agent")


@pytest.mark.parametrize("module", NOT_IMPORTED)
def test_import_agentkit_agent_does_not_import(loaded, module):
    assert module not in loaded


def test_the_check_sees_a_module_that_is_imported(loaded):
    assert "agentkit.agent.react" in loaded and "pydantic" in loaded


def test_a_react_text_with_an_html_entity_still_parses():
    from agentkit.agent.react.output_parser import ReActOutputParser

    step = ReActOutputParser().parse('Thought: t\nAction: tool\nAction Input: {&#34;a&#34;: 1}')
    assert step.action_input == {"a": 1}


def test_an_image_of_an_unknown_kind_still_gets_its_type_from_its_name():
    from agentkit.llms.types import ImageBlock

    assert ImageBlock(image=b"\x00\x01", path="photo.jpg").image_mimetype == "image/jpeg"
