"""The plugin's fixtures: ``scripted_llm``, ``run_scenario`` and ``agentkit_record_mode``."""

from __future__ import annotations

import pytest

from plugin_project import write


def test_scripted_llm_fixture_answers_with_its_script(pytester: pytest.Pytester) -> None:
    write(pytester, "test_llm.py", """\
        from agentkit.llms.mock import ScriptedLLM

        def test_script(scripted_llm):
            llm = scripted_llm(["hello", "bye"], name="greeter")
            assert isinstance(llm, ScriptedLLM)
            assert [llm.complete("a").text, llm.complete("b").text] == ["hello", "bye"]
        """)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1)


def test_run_scenario_fixture_returns_a_scenario_result(project: pytest.Pytester) -> None:
    write(project, "test_run.py", """\
        from agentkit.harness._runner import ScenarioResult

        def test_run(run_scenario):
            result = run_scenario("scenarios/adding.yaml", "react")
            assert isinstance(result, ScenarioResult)
            assert result.passed, result.problems
            assert result.trace.turns[0].response == "2 + 3 = 5"
            assert result.trace.totals().tool_calls == 1
        """)

    result = project.runpytest("test_run.py")

    result.assert_outcomes(passed=1)


def test_run_scenario_fixture_reports_unmet_expectations_as_problems(
        project: pytest.Pytester) -> None:
    path = project.path / "scenarios" / "adding.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Answer: 2 + 3 = 5", "Answer: 6"),
                    encoding="utf-8")
    write(project, "test_run.py", """\
        def test_run(run_scenario):
            result = run_scenario("scenarios/adding.yaml", "react")
            assert not result.passed
            assert result.problems == ["final answer '6' does not match contains '5'"]
        """)

    result = project.runpytest("test_run.py")

    result.assert_outcomes(passed=1)


def test_run_scenario_fixture_rejects_an_unknown_agent_type_while_recording(
        project: pytest.Pytester) -> None:
    write(project, "test_run.py", """\
        import pytest
        from agentkit.scenario._loader import ScenarioError

        def test_run(run_scenario):
            with pytest.raises(ScenarioError, match="has no agent type `reakt` "
                                                    "[(]it has react, function_calling[)]"):
                run_scenario("scenarios/adding.yaml", "reakt")
        """)

    result = project.runpytest("test_run.py", "--record-mode=once")

    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("options, expected", [((), "none"),
                                               (("--record-mode", "new_episodes"),
                                                "new_episodes")])
def test_agentkit_record_mode_fixture_is_the_record_mode_option(
        pytester: pytest.Pytester, options: tuple[str, ...], expected: str) -> None:
    write(pytester, "test_mode.py", f"""\
        def test_mode(agentkit_record_mode):
            assert agentkit_record_mode == {expected!r}
        """)

    result = pytester.runpytest("test_mode.py", *options)

    result.assert_outcomes(passed=1)


def test_unknown_record_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--record-mode=sometimes")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # the option, the value given and the choices; the words around them are argparse's
    result.stderr.fnmatch_lines(["*--record-mode*'sometimes'*none*once*new_episodes*all*rewrite*"])
