"""``pytest --record-mode=... --samples N`` on a judged scenario: the judge is asked once per
sample through the ``judge_llm`` fixture (with the sample's seed) and recorded with that
sample; the replay item judges every sample by its own recorded verdict, offline; a user's
agent that a change made wrong fails the item, its old verdicts never reused."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import yaml

from plugin_project import FAKE_URL, write
from tests.scenario_text import FUNCTION_CALLING_AGENT, WRONG_ANSWER_AGENT, adding_scenario

CASSETTE = "scenarios/cassettes/judged.my_agent.yaml"
RECORD = ("--record-mode=rewrite", f"--agentkit-base-url={FAKE_URL}", "--samples", "2")

#: While recording, a fake endpoint answers each sample: the agent's `add` call, its answer
#: (5, then 6), then a judge that reads the transcript it is shown.
CONFTEST = f'''
import pytest

from agentkit.llms.mock import tool_call
from mocks.openai_server import FakeOpenAIServer


def judge(messages, tools):
    if "Assistant: 2 + 3 = 5" in messages[-1]["content"]:
        return '{{"verdict": "pass", "reason": "It says 5."}}'
    return '{{"verdict": "fail", "reason": "It does not say 5."}}'


@pytest.fixture(autouse=True)
def fake_endpoint(request):
    if request.config.getoption("record_mode") == "none":
        yield None
        return
    script = [item for answer in ("2 + 3 = 5", "2 + 3 = 6")
              for item in (tool_call("add", a=2, b=3), answer, judge)]
    with FakeOpenAIServer(script, base_url="{FAKE_URL}") as server:
        yield server
'''

SCENARIO = adding_scenario("judged", """\
expect:
  answer: {judge: "says that 2 + 3 is 5"}
min_pass_rate: 0.5
agents:
  my_agent:
    recording: cassettes/judged.my_agent.yaml
""", tool="calc_tools:add")


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTKIT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    yield
    for name in [m for m in sys.modules if m.partition(".")[0] == "sampled_judged_agents"]:
        del sys.modules[name]


@pytest.fixture
def judged_project(project: pytest.Pytester) -> pytest.Pytester:
    write(project, "pyproject.toml", """\
        [tool.agentkit.agent_types]
        my_agent = "sampled_judged_agents:build"
        """)
    write(project, "sampled_judged_agents.py", FUNCTION_CALLING_AGENT)
    write(project, "scenarios/judged.yaml", SCENARIO)
    write(project, "conftest.py", CONFTEST)
    return project


def test_samples_record_a_verdict_per_sample_through_the_judge_fixture(
        judged_project: pytest.Pytester) -> None:
    result = judged_project.runpytest("scenarios/judged.yaml", *RECORD)

    result.assert_outcomes(passed=1)
    cassette = yaml.safe_load((judged_project.path / CASSETTE).read_text("utf-8"))
    judged = [(e["sample"], e["response"]["message"]["content"])
              for e in cassette["exchanges"] if e.get("role") == "judge"]
    assert judged == [(0, '{"verdict": "pass", "reason": "It says 5."}'),
                      (1, '{"verdict": "fail", "reason": "It does not say 5."}')]


@pytest.mark.slow  # an inner pytest session (pytester)
def test_the_replay_item_judges_each_sample_by_its_own_recorded_verdict_offline(
        judged_project: pytest.Pytester) -> None:
    judged_project.runpytest("scenarios/judged.yaml", *RECORD).assert_outcomes(passed=1)
    scenario = judged_project.path / "scenarios" / "judged.yaml"
    scenario.write_text(SCENARIO.replace("min_pass_rate: 0.5", "min_pass_rate: 0.99"), "utf-8")

    result = judged_project.runpytest("scenarios/judged.yaml")

    result.assert_outcomes(failed=1)  # sample 1's recorded verdict is a fail: 1 of 2 pass
    result.stdout.fnmatch_lines(["*failed on its samples (50% (1/2, 95% interval 9-91%)):*",
                                 "*sample 1 failed*says that 2 + 3 is 5*"])


@pytest.mark.slow  # an inner pytest session (pytester)
def test_the_replay_item_fails_a_users_agent_made_wrong_naming_the_judges_miss(
        judged_project: pytest.Pytester) -> None:
    judged_project.runpytest("scenarios/judged.yaml", *RECORD).assert_outcomes(passed=1)
    write(judged_project, "sampled_judged_agents.py", WRONG_ANSWER_AGENT)

    result = judged_project.runpytest("scenarios/judged.yaml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*sample 0: the recording no longer fits the agent: *(sample 0): no recorded verdict "
        "of the judge for expect.answer.judge (*judged.yaml:8): the transcript it saw changed*"])
    result.stdout.fnmatch_lines(["*+Assistant: about 4*"])


@pytest.mark.slow  # xdist workers are processes of their own
def test_a_passing_item_whose_judges_disagree_between_samples_is_listed_in_the_summary(
        judged_project: pytest.Pytester) -> None:
    judged_project.runpytest("scenarios/judged.yaml", *RECORD).assert_outcomes(passed=1)

    result = judged_project.runpytest("scenarios/judged.yaml", "-n", "2")

    result.assert_outcomes(passed=1)  # 1 of 2 samples pass, min_pass_rate 0.5
    result.stdout.fnmatch_lines([
        "*= agentkit: judges disagree between samples =*",
        "scenarios/judged.yaml::my_agent",
        "  judges disagree between samples on expect.answer.judge ('says that 2 + 3 is 5'):",
        "    sample 0: pass -- It says 5.",
        "    sample 1: fail -- It does not say 5."])


@pytest.mark.slow  # an inner pytest session (pytester)
def test_samples_whose_judges_agree_add_no_summary_section(
        judged_project: pytest.Pytester) -> None:
    lenient = CONFTEST.replace('"fail", "reason": "It does not say 5."',
                               '"pass", "reason": "An answer."')
    assert lenient != CONFTEST
    write(judged_project, "conftest.py", lenient)
    judged_project.runpytest("scenarios/judged.yaml", *RECORD).assert_outcomes(passed=1)

    result = judged_project.runpytest("scenarios/judged.yaml")

    result.assert_outcomes(passed=1)
    assert "judges disagree" not in result.stdout.str()


@pytest.mark.slow  # an inner pytest session (pytester)
def test_the_replay_item_fails_when_the_judge_of_4_of_5_samples_gave_no_verdict(
        judged_project: pytest.Pytester) -> None:
    unjudged = (CONFTEST
                .replace("""'{"verdict": "fail", "reason": "It does not say 5."}'""",
                         "'Hmm, hard to say.'")
                .replace('("2 + 3 = 5", "2 + 3 = 6")', '("2 + 3 = 5",) + ("2 + 3 = 6",) * 4'))
    assert unjudged.count("Hmm") == 1 and "* 4" in unjudged
    write(judged_project, "conftest.py", unjudged)
    scenario = judged_project.path / "scenarios" / "judged.yaml"
    scenario.write_text(SCENARIO.replace("min_pass_rate: 0.5\n", ""), "utf-8")
    judged_project.runpytest("scenarios/judged.yaml", "--record-mode=rewrite",
                             f"--agentkit-base-url={FAKE_URL}", "--samples", "5")

    result = judged_project.runpytest("scenarios/judged.yaml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*4 of 5 samples failed*",
                                 "*sample 1 failed*the judge's answer is not a verdict*"])
    assert "infrastructure" not in result.stdout.str()


@pytest.mark.slow  # an inner pytest session (pytester)
def test_an_item_whose_min_pass_rate_cannot_fail_at_its_samples_is_warned(
        judged_project: pytest.Pytester) -> None:
    judged_project.runpytest("scenarios/judged.yaml", *RECORD).assert_outcomes(passed=1)

    result = judged_project.runpytest("scenarios/judged.yaml")

    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*GateWarning: *min_pass_rate 50% cannot fail at 2 samples "
                                 "unless none passes*give at least 4 samples*"])
