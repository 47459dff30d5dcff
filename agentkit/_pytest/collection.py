"""Scenario files collected as test items, one per scenario × agent type, from the folders the
project configures -- the ini option ``agentkit_scenarios``, else ``scenarios`` under
``[tool.agentkit]`` in pyproject.toml, else ``scenarios/`` at the rootdir -- and only YAML files
that are agentkit's (:func:`agentkit.scenario._loader.is_scenario_file`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit._pytest.items import ScenarioItem, scenario_test
from agentkit._pytest.options import project_of
from agentkit.core.errors import HarnessError
from agentkit.harness import load
from agentkit.scenario._loader import ScenarioError, is_scenario_file

__all__ = ["collect_file", "ScenarioFile"]

_NOT_SCENARIOS = frozenset({"__snapshots__", "cassettes"})


def _scenario_folders(config: pytest.Config) -> list[Path]:
    configured = config.getini("agentkit_scenarios")
    return list(configured) if configured else list(project_of(config).scenarios)


def _in_scenario_folder(file_path: Path, folders: list[Path]) -> bool:
    for folder in folders:
        if file_path.is_relative_to(folder):
            return not _NOT_SCENARIOS.intersection(file_path.relative_to(folder).parts)
    return False


def collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A scenario file in a scenario folder as a :class:`ScenarioFile` (None: any other file)."""
    if (file_path.suffix in (".yaml", ".yml")
            and _in_scenario_folder(file_path, _scenario_folders(parent.config))
            and is_scenario_file(file_path)):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    """A scenario file: one test per agent type it declares."""

    __module__ = "agentkit.pytest_plugin"  # where users import it from

    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        except HarnessError as exc:
            raise self.CollectError(str(exc)) from None
        for agent_type in scenario.agents:
            item = ScenarioItem.from_parent(self, name=agent_type,
                                            callobj=scenario_test(scenario, agent_type))
            item.extra_keyword_matches.update(scenario.tags)
            yield item
