"""The agentkit pytest plugin (entry point ``pytest11``). Installing agentkit changes nothing in
a project's other tests: everything here is opt-in, VCR-style.

* **Scenario files** are collected as test items, one per scenario × agent type
  (``scenarios/x.yaml::react``; its tags work with ``-k``), from the folders the project
  configures -- the ini option ``agentkit_scenarios``, else ``scenarios`` under
  ``[tool.agentkit]`` in pyproject.toml, else ``scenarios/`` at the rootdir -- and only YAML
  files that are agentkit's (:func:`agentkit.scenario._loader.is_scenario_file`): any other
  YAML file there is left alone. Run without paths, pytest collects those folders even when
  ``testpaths`` leaves them out (its header says so). Each item runs the scenario, checks its expectations and
  compares its trace with a syrupy snapshot (``__snapshots__/<file stem>/<agent type>.json``
  beside the file); ``--snapshot-update`` accepts a change.
* **Agent types** the project declares in ``[tool.agentkit.agent_types]`` are available (as
  to the ``agentkit`` command: :mod:`agentkit.scenario.project`), and so are those of
  installed packages' ``agentkit.agent_types`` entry points and of ``register_agent_type``
  in a conftest.py.
* ``--record-mode`` (none | once | new_episodes | all | rewrite) records against a live model:
  the ``live_llm`` fixture (by default the OpenAI backend with ``--agentkit-model`` and
  ``--agentkit-base-url``; define your own ``live_llm`` fixture to record with another
  model). Scenario items with a ``recording:`` record with
  :func:`agentkit.scenario.record.record_scenario`, as ``agentkit record`` does: cassette and
  recorded trace written together, only when the recording is good, and a missing snapshot is
  created from it; the scenario's LLM judges record through the ``judge_llm`` fixture, its
  simulated user through ``live_llm``. A plain test takes its LLM from the ``agentkit_llm``
  fixture: its own cassette (see :mod:`agentkit._pytest.cassettes`), recorded through
  ``live_llm`` and written only if the test passes, replayed offline afterwards.
* **Network guard**: in a guarded test, opening a TCP connection (a live model, by accident)
  fails with a message saying how to record instead. Guarded are: every test with
  ``--block-network`` or the ini option ``agentkit_block_network = true``; scenario items;
  tests using ``agentkit_llm``, ``run_scenario``, ``scripted_llm`` or
  ``agentkit_record_mode``, or marked ``agentkit_cassette``. Never guarded: recording runs
  (``--record-mode`` other than none) and tests marked ``live``. ``--allowed-hosts`` (and the
  ini option ``agentkit_allowed_hosts``) lets guarded tests reach the hosts given (names,
  addresses, networks; ``localhost`` means every loopback address); a test marked
  ``agentkit_allow_loopback`` may reach loopback addresses (a local server it starts).
* Teardown check: a strict ``ScriptedLLM`` created in a test that passed must have used its
  whole script, and a replayed ``agentkit_llm`` cassette all its exchanges
  (``@pytest.mark.agentkit_allow_unused_script`` opts out).
* Virtual time: ``@pytest.mark.agentkit_virtual_time`` (optionally ``(seed=N)``) runs the test
  inside :func:`agentkit.core.sim.simulation` (a fresh clock, seeded ids, virtual waits); an
  ``async def`` test then runs on a fresh virtual-time loop (:func:`agentkit.core.sim.run`),
  so concurrent simulated calls overlap as in the sync API. The plugin runs such a test
  itself, with or without pytest-asyncio (in any mode: an item pytest-asyncio prepared is
  run from its original coroutine function); its async fixtures, if any, stay on
  pytest-asyncio's own loop.

This module is the plugin's face: the hooks it implements, each handing over to a part under
:mod:`agentkit._pytest` (options, collection, items, snapshots, samples, the network guard,
fixtures, virtual time, OpenTelemetry), and the fixtures it registers.
"""


from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from agentkit._pytest.collection import (
    ScenarioFile,
    added_folders_header,
    collect_beside_testpaths,
    collect_file,
)
from agentkit._pytest.fixtures import (
    RecordingFailed,
    _agentkit_unused_script_check,
    agentkit_llm,
    agentkit_record_mode,
    judge_llm,
    live_llm,
    run_scenario,
    scripted_llm,
)
from agentkit._pytest.guard import _agentkit_network_guard, explain_blocked
from agentkit._pytest.items import ScenarioFailure, ScenarioItem
from agentkit._pytest.network import LiveModelBlockedError
from agentkit._pytest.options import (
    activate_project,
    add_markers,
    add_options,
    read_allowed_hosts,
)
from agentkit._pytest.otel import configure_otel
from agentkit._pytest.outcomes import keep_report
from agentkit._pytest.samples import DisagreementSummary
from agentkit._pytest.snapshots import SnapshotGuard
from agentkit._pytest.virtual_time import run_async_test, simulated

__all__ = ["LiveModelBlockedError", "RecordingFailed", "ScenarioFile", "ScenarioItem",
           "ScenarioFailure"]

#: The fixtures the plugin registers (pytest finds them on this module).
FIXTURES = (agentkit_record_mode, scripted_llm, live_llm, judge_llm, agentkit_llm, run_scenario,
            _agentkit_network_guard, _agentkit_unused_script_check)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    activate_project(early_config)
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    add_markers(config)
    config.pluginmanager.register(SnapshotGuard(config), "agentkit-snapshot-guard")
    config.pluginmanager.register(DisagreementSummary(), "agentkit-judge-disagreements")
    configure_otel(config)
    read_allowed_hosts(config)
    collect_beside_testpaths(config)


def pytest_report_header(config: pytest.Config) -> str | None:
    return added_folders_header(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return collect_file(file_path, parent)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with simulated(item):
        return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    return run_async_test(pyfuncitem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    keep_report(item, report)
    explain_blocked(item, call, report)
    return report
