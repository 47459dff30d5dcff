"""docs/otel.md: every shell command of the guide runs. The offline ones run here, in a copy of
the project's scenarios; those that need Phoenix run in the otel lane
(tests/phoenix/test_phoenix_lane.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.pages import Shell

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "otel.md").read_text(encoding="utf-8")


def doc_commands() -> list[str]:
    """Every line of the guide's ```bash blocks, in order."""
    blocks = re.findall(r"```bash\n(.*?)```", DOC, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def needs_phoenix(command: str) -> bool:
    return "scripts/phoenix" in command or "$url" in command


def run_in_copy(commands: list[str], where: Path) -> None:
    """Run ``commands`` one by one in one bash, in a copy of the project's scenarios, mocks,
    pyproject.toml and scripts at ``where``, with this interpreter's agentkit on the PATH."""
    for name in ("scenarios", "mocks", "scripts"):
        shutil.copytree(REPO / name, where / name)
    shutil.copy(REPO / "pyproject.toml", where / "pyproject.toml")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(where)}
    for name in list(env):
        if name.startswith(("OTEL_", "PYTEST_XDIST", "PYTEST_CURRENT")):
            del env[name]
    script = "set -e\n" + "\n".join(commands) + "\n"
    result = subprocess.run(["bash", "-c", script], cwd=where, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def test_every_command_of_the_guide_is_offline_or_run_by_the_otel_lane():
    commands = doc_commands()
    lane = (REPO / "tests" / "phoenix" / "test_phoenix_lane.py").read_text(encoding="utf-8")

    assert len(commands) >= 8
    assert [c for c in commands if needs_phoenix(c)] == [
        'url=$(scripts/phoenix start)',
        'agentkit report --agents react,llm_compiler,coa,agent_workflow --out reports/latest '
        '--otlp-endpoint "$url/v1/traces"', "scripts/phoenix stop"]
    assert "needs_phoenix(" in lane


@pytest.mark.slow  # the guide's commands, end to end
def test_the_guides_offline_commands_run(shell: Shell):
    for name in ("scenarios", "mocks", "scripts"):
        shutil.copytree(REPO / name, shell.folder / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", shell.folder / "pyproject.toml")

    for command in (c for c in doc_commands() if not needs_phoenix(c)):
        code, output = shell(command)
        assert code == 0, f"{command}\n{output[-3000:]}"

    assert (shell.folder / "scenarios" / "imported_case.yaml").is_file()
    assert (shell.folder / "scenarios" / "imported_case_tools.py").is_file()
    assert (shell.folder / "spans.json").is_file()


def test_the_readme_links_the_guide():
    readme = (REPO / "README.md").read_text(encoding="utf-8")

    assert "(docs/otel.md)" in readme
