"""The guides that build on the README's first project -- docs/your-agent.md and
docs/pytest.md -- run their commands in a copy of it, as they say."""

from __future__ import annotations

import textwrap

import pytest

from tests.docs.conftest import Ran
from tests.docs.pages import DOCS, Shell, commands, section, shown_files, write_files

#: docs/pytest.md records through ``live_llm``; here the live model is a script (no network)
SCRIPTED_LIVE_MODEL = textwrap.dedent('''\
    import pytest

    from agentkit.llms.mock import ScriptedLLM


    @pytest.fixture
    def live_llm():
        """Stands in for the root conftest.py's live model: the guide's commands run offline."""
        return ScriptedLLM([
            'Thought: I need the forecast.\\nAction: forecast\\nAction Input: {"city": "Oslo"}',
            "Thought: Rain.\\nAnswer: Yes, take an umbrella."])
    ''')


@pytest.mark.slow  # a guide's commands in a fresh project
def test_the_agent_type_guides_commands_list_run_and_report_the_first_project(
        first_project: list[Ran], shell: Shell):
    guide = (DOCS / "your-agent.md").read_text(encoding="utf-8")

    outputs = []
    for command in commands(guide):
        code, output = shell(command)
        assert code == 0, f"{command}\n{output[-3000:]}"
        outputs.append(output)

    assert "umbrella" in outputs[0] and "weather_agent" in outputs[0]
    assert "PASS  umbrella[weather_agent]" in outputs[1]
    assert "| umbrella" in (shell.folder / "reports" / "latest" / "report.md").read_text("utf-8")


@pytest.mark.slow  # the guide's commands, end to end
def test_the_pytest_guide_records_a_plain_test_then_replays_it_offline(
        first_project: list[Ran], shell: Shell):
    folder = shell.folder
    text = section(DOCS / "pytest.md", "Record a plain test: per-test cassettes")
    write_files(folder, shown_files(text))
    (folder / "tests" / "conftest.py").write_text(SCRIPTED_LIVE_MODEL, encoding="utf-8")
    cassette = folder / "tests" / "cassettes" / "test_agent" / "test_umbrella_advice.yaml"

    record, replay = commands(text)
    code, output = shell(record)
    assert code == 0, output[-3000:]
    assert cassette.is_file()
    (folder / "tests" / "conftest.py").unlink()  # offline: no live model at all
    code, output = shell(replay)

    assert code == 0, output[-3000:]
    assert "1 passed" in output
    assert "test: tests/test_agent.py::test_umbrella_advice" in cassette.read_text("utf-8")


def test_the_pytest_guide_asserts_on_a_scenario_run_with_run_scenario(
        first_project: list[Ran], shell: Shell):
    text = section(DOCS / "pytest.md", "Assert on a scenario's run: `run_scenario`")
    write_files(shell.folder, shown_files(text))

    (command,) = commands(text)
    code, output = shell(command)

    assert code == 0, output[-3000:]
    assert "1 passed" in output
