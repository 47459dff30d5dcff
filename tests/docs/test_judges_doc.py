"""docs/judges.md: every offline command of the guide runs (in a copy of the project's live
scenarios), its live commands are the live lane's (tests/live/test_judges_live.py), and what it
quotes of the code is the code's."""

from __future__ import annotations

import re
import shutil

from agentkit.harness._llm_judge import JUDGE_PROMPT
from agentkit.harness._simulated_user import USER_PROMPT
from tests.docs.pages import ROOT, Shell

GUIDE = ROOT / "docs" / "judges.md"
TEXT = GUIDE.read_text(encoding="utf-8")


def _blocks() -> list[tuple[bool, list[str]]]:
    """Each ```bash block: whether it needs a live model (first line ``# live``), and its
    commands (comment lines left out)."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", TEXT, flags=re.DOTALL):
        lines = [line for line in block.splitlines() if line.strip()]
        found.append((bool(lines) and lines[0].startswith("# live"),
                      [line for line in lines if not line.startswith("#")]))
    return found


def test_the_guide_has_offline_commands_and_one_block_for_the_live_lane():
    live = [commands for needs_model, commands in _blocks() if needs_model]
    offline = [commands for needs_model, commands in _blocks() if not needs_model]

    assert len(live) == 2 and offline  # the recorded conversation, the injection set
    assert "test_the_guides_live_commands_record_a_simulated_conversation_that_replays" in (
        ROOT / "tests" / "live" / "test_judges_live.py").read_text(encoding="utf-8")


def test_every_offline_command_of_the_guide_runs(shell: Shell):
    for name in ("scenarios/live_roles", "mocks"):
        shutil.copytree(ROOT / name, shell.folder / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (shell.folder / "pyproject.toml").write_text('[project]\nname = "guide"\nversion = "0"\n')
    commands = [command for needs_model, block in _blocks() if not needs_model
                for command in block]

    for command in commands:
        code, output = shell(command)
        assert code == 0, f"{command}\n{output[-3000:]}"
    assert (shell.folder / "reports" / "judged" / "report.md").is_file()


def test_the_guide_quotes_the_judges_prompt_as_the_code_has_it():
    assert JUDGE_PROMPT.replace("{{", "{").replace("}}", "}") in TEXT


def test_the_guide_names_the_simulated_users_prompt_and_the_readme_links_the_guide():
    assert "USER_PROMPT" in TEXT and "{persona}" in USER_PROMPT
    assert "(docs/judges.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_guide_shows_a_disagreement_between_samples_as_the_commands_print_it():
    # tests/cli/test_cli_sampled_judges.py checks that the commands print exactly these lines
    assert ("      judges disagree between samples on expect.answer.judge ('says that 2 + 3 is "
            "5'):\n        sample 0: pass -- It says 5.\n        sample 1: fail -- It does not "
            "say 5.\n") in TEXT
