"""The verdict and the case runner import first in a fresh interpreter: the scenario runner
judges through agentkit.verdict, which reads agentkit.scenario's file-format modules, so no
module of that chain may pull the runner in while it loads."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow  # a fresh interpreter per module
@pytest.mark.parametrize("module", ["agentkit.verdict", "agentkit.harness",
                                    "agentkit.scenario.check", "agentkit.scenario.judge"])
def test_the_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_public_runner_names_import_from_the_scenario_package() -> None:
    from agentkit.harness._runner import run_scenario as runner_run_scenario
    from agentkit.scenario import Scenario, ScenarioResult, load_scenario, run_all, run_scenario

    assert run_scenario is runner_run_scenario
    assert all(callable(name) for name in (Scenario, ScenarioResult, load_scenario, run_all))
