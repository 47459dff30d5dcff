"""docs/integrations.md: every shell command of the guide runs (the install command is the one
.ci/run's frameworks lane runs; the others run here in a copy of examples/frameworks), and each
framework's agent and factory in the guide are the example project's, each factory returning the
user's agent in one line."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
AGENTS = (REPO / "examples" / "frameworks" / "framework_agents.py").read_text(encoding="utf-8")
SUPPORT = (REPO / "examples" / "frameworks" / "support_agents.py").read_text(encoding="utf-8")
INSTALL = 'pip install -e ".[frameworks]"'


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)


def doc_commands() -> list[str]:
    return [line for block in blocks("bash") for line in block.splitlines() if line.strip()]


def test_the_guides_install_command_is_the_one_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")

    assert doc_commands()[0] == INSTALL
    assert f".venv/bin/{INSTALL.replace('pip install', 'pip install -q')}" in ci


@pytest.mark.frameworks
def test_the_guides_commands_run_in_the_example_project(tmp_path):
    shutil.copytree(REPO / "examples" / "frameworks", tmp_path / "examples" / "frameworks",
                    ignore=shutil.ignore_patterns("__pycache__", "reports"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(REPO)}
    script = "set -e\n" + "\n".join(doc_commands()[1:]) + "\n"

    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "15 passed, 0 failed" in done.stdout
    report = (tmp_path / "examples" / "frameworks" / "reports" / "frameworks" / "report.md")
    runs = report.read_text().split("## Scenarios × agent types\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in runs.splitlines() if line.startswith("| trajectory")]
    assert {row.split("|")[2].strip() for row in rows} == {
        "function_agent", "react_agent", "li_function", "li_react", "pydantic_ai",
        "openai_agents", "langgraph", "my_llama_index", "my_pydantic_ai", "my_openai_agents",
        "my_langgraph"}


def test_each_agent_and_factory_in_the_guide_is_the_example_projects():
    python = blocks("python")

    assert len([block for block in python if block in AGENTS]) == 4  # one per framework
    for block in python:
        assert block in AGENTS or block in SUPPORT, block


def test_every_factory_of_the_example_project_returns_the_users_agent_in_one_line():
    factories = [node for source in (AGENTS, SUPPORT) for node in ast.parse(source).body
                 if isinstance(node, ast.FunctionDef) and node.decorator_list
                 and ast.unparse(node.decorator_list[0]).split("(")[0].endswith("_agent")]

    lines = {f.name: f.end_lineno - f.lineno + 1 + len(f.decorator_list) for f in factories}

    assert sorted(lines) == ["li_team", "my_langgraph", "my_llama_index", "my_openai_agents",
                             "my_pydantic_ai", "my_sdk_support", "my_support", "my_triage",
                             "sdk_team"]
    assert all(count == 3 for count in lines.values()), lines  # decorator, def, return
