"""The integrations as optional extras, in the default suite (no framework needed): a missing
extra is bad input naming the pip install, a version outside the tested range warns once, the
extras accept the tested ranges, and importing agentkit's integration modules imports no
framework."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

from agentkit.core.errors import BadInputError
from agentkit.integrations import _framework
from agentkit.integrations._framework import (
    Framework,
    FrameworkVersionWarning,
    MissingFrameworkError,
    Requirement,
)
from agentkit.integrations.langgraph import FRAMEWORK as LANGGRAPH
from agentkit.integrations.llama_index import FRAMEWORK as LLAMA_INDEX
from agentkit.integrations.openai_agents import FRAMEWORK as OPENAI_AGENTS
from agentkit.integrations.pydantic_ai import FRAMEWORK as PYDANTIC_AI

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = [LLAMA_INDEX, PYDANTIC_AI, OPENAI_AGENTS, LANGGRAPH]


def test_a_framework_not_installed_is_bad_input_naming_the_extra():
    framework = Framework("Nothing", "nothing", (
        Requirement("no-such-dist", "agentkit_no_such_module", "1", "2"),))

    with pytest.raises(MissingFrameworkError) as caught:
        framework.require("li_nothing")

    assert isinstance(caught.value, BadInputError)
    assert str(caught.value) == ("agent type 'li_nothing' needs no-such-dist: pip install "
                                 "'agentkit[nothing]'")


@pytest.mark.slow  # the command in a fresh interpreter
def test_the_command_exits_2_when_the_llama_index_extra_is_missing(tmp_path):
    # a llama_index package that cannot be imported stands for one that is not installed
    (tmp_path / "llama_index").mkdir()
    (tmp_path / "llama_index" / "__init__.py").write_text("raise ImportError('not here')\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("format: 1\nname: s\nturns:\n  - user: hi\nagents:\n"
                        "  li_function:\n    script: [hello]\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}

    done = subprocess.run([sys.executable, "-m", "agentkit.cli", "run", str(scenario),
                           "--snapshots", "off"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)

    assert done.returncode == 2, done.stdout + done.stderr
    assert ("agentkit: error: agent type 'li_function' needs llama-index-core: pip install "
            "'agentkit[llama-index]'") in done.stderr


def test_a_version_outside_the_tested_range_warns_once_naming_the_range(monkeypatch):
    monkeypatch.setattr(_framework, "_warned", set())
    framework = Framework("Pytest", "pytest-extra", (
        Requirement("pytest", "pytest", "0.1", "0.2"),))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        framework.require("x")
        framework.require("x")

    (warning,) = caught
    assert issubclass(warning.category, FrameworkVersionWarning)
    assert "(pytest>=0.1,<0.2)" in str(warning.message)
    assert "pip install 'agentkit[pytest-extra]'" in str(warning.message)


def test_a_version_inside_the_tested_range_does_not_warn(monkeypatch):
    monkeypatch.setattr(_framework, "_warned", set())
    framework = Framework("Pytest", "pytest-extra", (Requirement("pytest", "pytest", "1", "99"),))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        framework.require("x")


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=lambda f: f.extra)
def test_each_extra_accepts_the_range_its_integration_warns_outside_of(framework):
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]

    ranges = {re.split(r"[\[>=<]", spec)[0]: spec[re.search(r"[>=<]", spec).start():]
              for spec in extras[framework.extra]}

    assert ranges == {r.distribution: r.tested for r in framework.requirements}


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=lambda f: f.extra)
def test_each_range_reaches_up_to_the_next_major(framework):
    # a user's newer release in the same major is accepted, not downgraded (LlamaIndex's 0.x:
    # its minor releases are the breaking ones)
    for requirement in framework.requirements:
        major, minor, *_ = (*_framework._version(requirement.minimum), 0)
        zero_x = major == 0 and requirement.distribution.startswith("llama-index")
        assert _framework._version(requirement.below) == ((0, minor + 1) if zero_x
                                                           else (major + 1,)), requirement


def test_the_frameworks_extra_is_all_four():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]

    assert extras["frameworks"] == [
        f"agentkit[{','.join(f.extra for f in FRAMEWORKS)}]"]


@pytest.mark.slow  # a fresh interpreter importing every integration
def test_importing_the_integrations_imports_no_framework():
    code = ("import sys, agentkit.integrations.llama_index, agentkit.integrations.pydantic_ai, "
            "agentkit.integrations.openai_agents, agentkit.integrations.langgraph\n"
            "print(sorted(m for m in ('llama_index', 'pydantic_ai', 'agents', 'langgraph', "
            "'langchain_core') if m in sys.modules))")

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)

    assert done.stdout.strip() == "[]", done.stderr
