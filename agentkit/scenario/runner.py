"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._runner``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._runner import (
    ScenarioResult,
    cassette_path,
    execute_scenario,
    load,
    recording_files,
    run_all,
    run_scenario,
)

__all__ = ["cassette_path", "execute_scenario", "load", "recording_files", "run_all",
           "run_scenario", "ScenarioResult"]
