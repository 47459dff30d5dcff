"""examples/retail_desk/README.md, end to end (the slow lane: each command a fresh process, as a
user runs it): in a copy of the example, every shell command of the README that needs no live
model runs, with the exit status it gives (``# exits N``; 0 otherwise), and every output it
shows (a ```text block) is in what the command before it printed. The suite passes under
`agentkit run`, `agentkit report` and pytest (every scenario under every agent type it
declares); the two broken agents fail all three, each naming its reason: the rule it broke,
the state it left. The README's live block runs in the live lane
(tests/live/test_retail_desk_live.py)."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.docs.pages import ROOT, run

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "retail_desk"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
_EXITS = re.compile(r"\s+# exits (\d+)\b.*$")

RULE = ("rule 'changes only after the customer says yes' (never a `mutating` call before the "
        "user said something matching regex '(?i)\\\\byes\\\\b') broken: "
        'cancel_order({"order_id": "W1001"}) (turn 1')
STATE = ('state after the run: orders.W1004.address: expected equals "1 Harvard Yard, '
         'Cambridge", got "7 Cobol Lane, Arlington"')


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What each offline command of the README printed, by command, run in order in a copy
    of the example; each exits as the README says and prints what it shows. (The report the
    README writes is under "report.md".)"""
    folder = tmp_path_factory.mktemp("project") / "retail_desk"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    outputs: dict[str, str] = {}
    output = ""
    for kind, text in re.findall(r"```(bash|text)\n(.*?)```", README, flags=re.DOTALL):
        if kind == "text":
            missing = [line for line in text.splitlines() if line and line not in output]
            assert missing == [], f"not in the output of the command before:\n{output[-3000:]}"
            continue
        if text.startswith("# live"):
            continue
        for line in filter(str.strip, text.splitlines()):
            found = _EXITS.search(line)
            command = _EXITS.sub("", line)
            done = run(command, folder)
            output = done.stdout + done.stderr
            assert done.returncode == (int(found.group(1)) if found else 0), \
                f"{command}\n{output[-3000:]}"
            outputs[command] = output
    outputs["report.md"] = (folder / "reports" / "broken" / "report.md").read_text(
        encoding="utf-8")
    return outputs


def test_every_offline_command_of_the_readme_runs_as_it_says(ran: dict[str, str]):
    assert [command for command in ran if command != "report.md"] == [
        "agentkit run", "python -m pytest", "agentkit report --out reports/desk",
        "agentkit run broken --snapshots off",
        "agentkit report broken --out reports/broken --snapshots off",
        "python -m pytest -o agentkit_scenarios=broken broken"]


def test_the_suite_passes_every_scenario_under_every_agent_type_it_declares(
        ran: dict[str, str]):
    assert re.search(r"^49 passed, 0 failed$", ran["agentkit run"], re.M)
    assert ran["agentkit run"].count("PASS  ") == 49
    assert re.search(r"^=+ 49 passed in ", ran["python -m pytest"], re.M)
    assert ran["agentkit report --out reports/desk"].count("/12 passed") == 4


def test_run_report_and_pytest_fail_each_broken_agent_naming_why(ran: dict[str, str]):
    for command in ("agentkit run broken --snapshots off",
                    "agentkit report broken --out reports/broken --snapshots off",
                    "python -m pytest -o agentkit_scenarios=broken broken"):
        # pytest's summary repeats whole messages where the CI variable is set: left out
        shown = ran[command].split("short test summary info")[0]
        assert shown.count(RULE) == 2, command
        assert shown.count(STATE) == 2, command
    assert "0 passed, 4 failed" in ran["agentkit run broken --snapshots off"]
    assert "4 failed in " in ran["python -m pytest -o agentkit_scenarios=broken broken"]
    report = ran["report.md"]
    for run_name in ("cancels_before_confirming[desk_react]",
                     "forgets_the_database[desk_function_calling]"):
        assert f"### {run_name}: FAIL" in report
    assert RULE in report and STATE in report
