"""The suites lane (`pytest -m suites`, with the `agentdojo` package installed as
docs/suites.md says): AgentDojo's banking suite written by `agentkit suite agentdojo`; every
user task's reference trajectory passes under the built-in agent types; agentkit's verdicts
and scores equal AgentDojo's own (`run_task_with_pipeline`) on the same runs, right and
wrong, and `agentkit report` shows the same scores; slack's user tasks likewise; the page's
commands print what it shows."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.cli import main
from agentkit.harness import run_scenario
from agentkit.scenario import load_scenario
from agentkit.suites.agentdojo import DEFAULT_VERSION, SUITE_MODULES, Scores, scores
from agentkit.suites.agentdojo_world import ATTACK_SUCCEEDED, UTILITY_FAILED, load_suite, world
from tests.docs.pages import DOCS, Shell

pytestmark = pytest.mark.suites

# the page's AgentDojo section (BFCL's is run by tests/suites/test_suites_doc.py)
DOC = (DOCS / "suites.md").read_text(encoding="utf-8").split("\n## AgentDojo\n", 1)[1]
AGENT_TYPES = ("react", "function_calling", "function_agent", "react_agent")


@pytest.fixture(scope="module")
def banking(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("banking")
    out = io.StringIO()
    assert main(["suite", "agentdojo", "--suite", "banking", "--out", str(folder)],
                out=out) == 0, out.getvalue()
    return folder


@pytest.fixture(scope="module")
def suite() -> Any:
    return load_suite(SUITE_MODULES["banking"], DEFAULT_VERSION)


def test_every_user_task_and_injection_case_is_written(banking: Path, suite: Any) -> None:
    names = {path.stem for path in banking.glob("*.yaml")}

    assert len(suite.user_tasks) == 16 and len(suite.injection_tasks) == 9
    assert names == {*suite.user_tasks, *(f"{user}.{injection}" for user in suite.user_tasks
                                          for injection in suite.injection_tasks)}


def test_every_user_tasks_reference_passes_under_the_built_in_agent_types(
        banking: Path, suite: Any) -> None:
    failed = {}
    for task in suite.user_tasks:
        scenario = load_scenario(banking / f"{task}.yaml")
        for agent_type in AGENT_TYPES:
            result = run_scenario(scenario, agent_type)
            if result.problems:
                failed[f"{task}[{agent_type}]"] = [str(p) for p in result.problems]
    # five calls and then the answer: one step more than the react agent's five iterations
    assert list(failed) == ["user_task_15[react]"]
    assert "Reached max iterations" in failed["user_task_15[react]"][0]


def _agentdojo_verdict(suite: Any, state: dict[str, Any], calls: Sequence[Any],
                       answer: str) -> tuple[bool, bool, list[str]]:
    """AgentDojo's utility and security of a run making ``calls`` and answering ``answer``
    (its own pipeline runner, runtime and checks), and the outputs its tools gave."""
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import text_content_block_from_string

    outputs: list[str] = []

    class Replay(BasePipelineElement):  # type: ignore[misc]
        def query(self, query: str, runtime: Any, env: Any = None, messages: Any = (),
                  extra_args: Any = None) -> Any:
            said = [{"role": "user", "content": [text_content_block_from_string(query)]}]
            for call in calls:
                made = FunctionCall(function=call.name, args=dict(call.args))
                said.append({"role": "assistant", "tool_calls": [made],
                             "content": [text_content_block_from_string("")]})
                result, error = runtime.run_function(env, made.function, made.args)
                outputs.append(error if error else tool_result_to_str(result))
                said.append({"role": "tool", "tool_call": made, "tool_call_id": None,
                             "error": error,
                             "content": [text_content_block_from_string(outputs[-1])]})
            said.append({"role": "assistant", "tool_calls": None,
                         "content": [text_content_block_from_string(answer)]})
            return query, runtime, env, said, extra_args or {}

    injection = state["injection_task"]
    utility, security = suite.run_task_with_pipeline(
        Replay(), suite.user_tasks[state["user_task"]],
        suite.injection_tasks[injection] if injection else None, state["injections"])
    return utility, bool(security) if injection else False, outputs


def _with_trajectory(path: Path, folder: Path, steps: list[dict[str, Any]]) -> Path:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["trajectory"] = steps
    changed = folder / f"{path.stem}.changed.yaml"
    changed.write_text(yaml.safe_dump(data), encoding="utf-8")
    return changed


def _runs(banking: Path, suite: Any, folder: Path) -> list[tuple[str, Path]]:
    """Each scenario's reference run, one doing nothing, and (injection cases) one that also
    carries the injected goal out."""
    runs = []
    for path in sorted(banking.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        runs.append(("reference", path))
        runs.append(("nothing", _with_trajectory(path, folder / "nothing",
                                                 [{"answer": "Done."}])))
        injection = data["world"]["data"].get("injection_task")
        if injection:
            pre = world(**data["world"]["data"]).environment
            goal = [{"call": c.function, "args": dict(c.args)}
                    for c in suite.injection_tasks[injection].ground_truth(pre)]
            runs.append(("attacked", _with_trajectory(
                path, folder / "attacked", [*data["trajectory"][:-1], *goal,
                                            data["trajectory"][-1]])))
    return runs


def _their_scores(verdicts: list[tuple[bool, bool, bool]]) -> Scores:
    """AgentDojo's scores from its own verdicts: (an injection case, utility, security)."""
    users = [utility for injected, utility, _ in verdicts if not injected]
    attacked = [(utility, security) for injected, utility, security in verdicts if injected]

    def share(values: list[bool]) -> float | None:
        return sum(values) / len(values) if values else None

    return Scores(len(users), share(users), len(attacked), share([u for u, _ in attacked]),
                  share([s for _, s in attacked]))


def test_agentkits_verdicts_and_scores_equal_agentdojos_on_the_same_runs(
        banking: Path, suite: Any, tmp_path: Path) -> None:
    for sub in ("nothing", "attacked"):
        (tmp_path / sub).mkdir()
    results: dict[str, list[Any]] = {"reference": [], "nothing": [], "attacked": []}
    theirs: dict[str, list[tuple[bool, bool, bool]]] = {kind: [] for kind in results}
    differ = []
    for kind, path in _runs(banking, suite, tmp_path):
        # the workflow agent: a run carrying the goal out makes more calls than the
        # function-calling agent's limit of five
        result = run_scenario(load_scenario(path), "react_agent")
        problems = [str(p) for p in result.problems]
        others = [p for p in problems if UTILITY_FAILED not in p and ATTACK_SUCCEEDED not in p]
        assert others == [], (path.name, kind, others)
        state = result.trace.turns[-1].world["state"]
        calls = result.trace.tool_calls
        utility, attacked, outputs = _agentdojo_verdict(
            suite, state, calls, result.trace.turns[-1].response or "")
        ours = (not any(UTILITY_FAILED in p for p in problems),
                any(ATTACK_SUCCEEDED in p for p in problems))
        if ours != (utility, attacked) or outputs != [c.output for c in calls]:
            differ.append((path.name, kind, ours, (utility, attacked)))
        results[kind].append(result)
        theirs[kind].append((state["injection_task"] is not None, utility, attacked))
    assert differ == []
    measured = {kind: scores(results[kind]) for kind in results}
    assert measured == {kind: _their_scores(theirs[kind]) for kind in results}
    # agentkit report over the same scenarios shows the same scores (report.json's; the
    # Markdown and HTML tables render the same figures: tests/suites/test_agentdojo.py)
    folders = {"reference": banking, "nothing": tmp_path / "nothing",
               "attacked": tmp_path / "attacked"}
    for kind, folder in folders.items():
        out = tmp_path / f"report-{kind}"
        main(["report", "--agents", "react_agent", "--snapshots", "off", "--out", str(out),
              str(folder)], out=io.StringIO())
        shown = json.loads((out / "report.json").read_text(encoding="utf-8"))["agentdojo"]
        assert shown == [{"agent_type": "react_agent", **{
            key: round(value, 6) if isinstance(value, float) else value
            for key, value in asdict(measured[kind]).items()}}], kind
    print(measured)  # the figures docs/suites.md quotes (pytest -s)
    # the reference runs do every task and carry no injected goal out; doing nothing does five
    # of the sixteen tasks by AgentDojo's checks (those that only ask that nothing changed
    # and read the answer leniently) and no attack; carrying the goal out always succeeds
    reference, nothing, attacked = (measured[kind] for kind in ("reference", "nothing",
                                                                 "attacked"))
    assert (reference.utility, reference.attack_success_rate) == (1.0, 0.0)
    assert (nothing.utility, nothing.attack_success_rate) == (5 / 16, 0.0)
    assert attacked.attack_success_rate == 1.0


def test_slacks_user_tasks_pass_and_are_judged_as_agentdojo_judges_them(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["suite", "agentdojo", "--suite", "slack", "--injection-tasks", "none",
                 "--out", str(tmp_path / "slack")], out=out) == 0, out.getvalue()
    slack = load_suite(SUITE_MODULES["slack"], DEFAULT_VERSION)
    (tmp_path / "nothing").mkdir()
    differ, done = [], {"reference": 0, "nothing": 0}
    for path in sorted((tmp_path / "slack").glob("*.yaml")):
        for kind, run in (("reference", path), ("nothing", _with_trajectory(
                path, tmp_path / "nothing", [{"answer": "Done."}]))):
            for agent_type in ("function_agent", "react_agent"):
                result = run_scenario(load_scenario(run), agent_type)
                problems = [str(p) for p in result.problems]
                assert all(UTILITY_FAILED in p for p in problems), problems
                utility, _, outputs = _agentdojo_verdict(
                    slack, result.trace.turns[-1].world["state"], result.trace.tool_calls,
                    result.trace.turns[-1].response or "")
                if utility != (not problems) or outputs != [c.output
                                                            for c in result.trace.tool_calls]:
                    differ.append((path.stem, kind, agent_type, problems, utility))
                done[kind] += utility
    assert differ == []
    # every reference run does its task; doing nothing does not do them all
    assert done["reference"] == 2 * 21 and done["nothing"] < 2 * 21


def test_every_command_of_the_page_runs_and_prints_what_it_shows(shell: Shell) -> None:
    output, ran = "", 0
    for kind, text in re.findall(r"```(bash|text)\n(.*?)```", DOC, flags=re.DOTALL):
        if kind == "text":
            if "state after the run" in text:
                continue  # what a failed run says: test_agentdojo.py asserts those texts
            missing = [line for line in text.splitlines() if line and line not in output]
            assert missing == [], output
            continue
        for command in filter(str.strip, text.splitlines()):
            if command.startswith("pip "):
                continue  # the lane's environment has them (.ci/run installs them)
            code, printed = shell(command)
            assert code == 0, printed
            output += printed
            ran += 1
    assert ran == 2
