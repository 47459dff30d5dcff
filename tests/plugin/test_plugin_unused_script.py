"""Teardown check: a strict ScriptedLLM left with unused replies by a passing test is an error."""

from __future__ import annotations

import pytest

from plugin_project import write


def _test_leaving_a_reply_unused(pytester: pytest.Pytester, *, strict: bool = True,
                                 marker: str = "", ending: str = "") -> None:
    write(pytester, "test_script.py", f"""\
        import pytest
        from agentkit.llms.mock import ScriptedLLM

        {marker}
        def test_uses_one_of_two_replies():
            llm = ScriptedLLM(["first", "second"], strict={strict}, name="two-replies")
            assert llm.complete("hi").text == "first"
            {ending}
        """)


def test_unused_strict_script_errors_at_teardown(pytester: pytest.Pytester) -> None:
    _test_leaving_a_reply_unused(pytester)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1, errors=1)  # the test passed: the error is its teardown's
    result.stdout.fnmatch_lines([
        "ScriptedLLM 'two-replies' left 1 scripted response(s) unused (1 of 2 consumed); "
        "next unused: 'second'",
        "(strict=False or @pytest.mark.agentkit_allow_unused_script allows unused replies)"])


def test_failed_test_gets_no_unused_script_error(pytester: pytest.Pytester) -> None:
    _test_leaving_a_reply_unused(pytester, ending="assert False, 'the real failure'")

    result = pytester.runpytest()

    result.assert_outcomes(failed=1, errors=0)
    result.stdout.no_fnmatch_line("*left 1 scripted response(s) unused*")


def test_skipped_test_gets_no_unused_script_error(pytester: pytest.Pytester) -> None:
    _test_leaving_a_reply_unused(pytester, ending="pytest.skip('not today')")

    result = pytester.runpytest()

    result.assert_outcomes(skipped=1, errors=0)


def test_xfailed_test_gets_no_unused_script_error(pytester: pytest.Pytester) -> None:
    _test_leaving_a_reply_unused(pytester, marker="@pytest.mark.xfail(reason='known bug')",
                                 ending="assert False")

    result = pytester.runpytest()

    result.assert_outcomes(xfailed=1, errors=0)


def test_non_strict_script_may_leave_replies_unused(pytester: pytest.Pytester) -> None:
    _test_leaving_a_reply_unused(pytester, strict=False)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1, errors=0)


def test_allow_unused_script_marker_skips_the_check(pytester: pytest.Pytester) -> None:
    _test_leaving_a_reply_unused(pytester, marker="@pytest.mark.agentkit_allow_unused_script")

    result = pytester.runpytest()

    result.assert_outcomes(passed=1, errors=0)


def test_scripted_llm_fixture_scripts_are_checked_too(pytester: pytest.Pytester) -> None:
    write(pytester, "test_fixture.py", """\
        def test_uses_the_fixture(scripted_llm):
            llm = scripted_llm(["first", "second"], name="from-fixture")
            assert llm.complete("hi").text == "first"
        """)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["ScriptedLLM 'from-fixture' left 1 scripted response(s)*"])


def test_scenario_expecting_an_error_may_leave_replies_unused(project: pytest.Pytester) -> None:
    write(project, "scenarios/gives_up.yaml", """\
        format: 1
        name: gives_up
        tools:
          - ref: calc_tools:add
        turns:
          - user: What is 2 + 3?
        agents:
          react:
            params: {max_iterations: 1}
            script:
              - "Thought: add.\\nAction: add\\nAction Input: {\\"a\\": 2, \\"b\\": 3}"
              - "Thought: I can answer without using any more tools.\\nAnswer: 5"
            expect:
              error: {contains: Reached max iterations.}
        """)

    result = project.runpytest("scenarios/gives_up.yaml", "--snapshot-update")

    result.assert_outcomes(passed=1, errors=0)
