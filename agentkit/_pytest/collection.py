"""Scenario files collected as test items, one per scenario × agent type, from the folders the
project configures -- the ini option ``agentkit_scenarios``, else ``scenarios`` under
``[tool.agentkit]`` in pyproject.toml, else ``scenarios/`` at the rootdir -- and only YAML files
that are agentkit's (:func:`agentkit.scenario._loader.is_scenario_file`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit._pytest.items import ScenarioItem, fault_test, scenario_test
from agentkit._pytest.options import project_of, shown_path
from agentkit.core.errors import HarnessError
from agentkit.harness import fault_variants, load, offline_agent_types
from agentkit.scenario._loader import ScenarioError, is_scenario_file

__all__ = ["collect_file", "ScenarioFile", "collect_beside_testpaths", "added_folders_header"]

_NOT_SCENARIOS = frozenset({"__snapshots__", "cassettes"})
_ADDED = pytest.StashKey[list[Path]]()


def _scenario_folders(config: pytest.Config) -> list[Path]:
    configured = config.getini("agentkit_scenarios")
    return list(configured) if configured else list(project_of(config).scenarios)


def collect_beside_testpaths(config: pytest.Config) -> None:
    """When pytest runs without paths, ``testpaths`` gives them; the project's scenario
    folders that it leaves out are collected too (a project's tests and its scenarios are
    all its tests: a ``testpaths = ["tests"]`` written for the one must not silently drop the
    other). Paths given on the command line are collected as given."""
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return
    root = config.invocation_params.dir
    given = [(root / arg).resolve() for arg in config.args]
    added = [folder for folder in _scenario_folders(config)
             if folder.is_dir() and not any(folder.resolve().is_relative_to(path)
                                            for path in given)]
    config.args.extend(str(folder) for folder in added)
    config.stash[_ADDED] = added


def added_folders_header(config: pytest.Config) -> str | None:
    """The header line saying which scenario folders were collected beside ``testpaths``."""
    added = config.stash.get(_ADDED, [])
    if not added:
        return None
    shown = ", ".join(shown_path(folder, config.rootpath) for folder in added)
    return (f"agentkit: scenarios collected from {shown} too (testpaths leaves "
            f"{'it' if len(added) == 1 else 'them'} out; name paths to run only those)")


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
    """A scenario file: one test per agent type it declares, and with ``faults:`` one per
    fault variant and agent type that runs it offline (``react~lookup_order#1:timeout``)."""

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
        if scenario.faults is None:
            return
        try:
            variants = fault_variants(scenario)
        except HarnessError as exc:
            raise self.CollectError(str(exc)) from None
        for variant in variants:
            for agent_type in offline_agent_types(scenario):
                test = fault_test(scenario, variant, agent_type)
                item = ScenarioItem.from_parent(self, name=test.__name__, callobj=test)
                item.extra_keyword_matches.update([*scenario.tags, "faults"])
                yield item
