"""Running: the case runner (one run, or the N samples of a sampled recording, judged once)
over the scenario runner (:func:`~agentkit.scenario.runner.execute_scenario`, which judges
nothing)."""

from agentkit.harness._case import (
    Case,
    CaseResult,
    RunObserver,
    observing_runs,
    run_case,
    sample_count,
)

__all__ = ["Case", "CaseResult", "RunObserver", "observing_runs", "run_case", "sample_count"]
