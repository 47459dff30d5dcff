"""The plugin's options, ini options and markers; the project it reads from pyproject.toml
(activated before conftest.py files load); whether the session records; how a path is shown."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path

import pytest

from agentkit._pytest.cassettes import MARKER as CASSETTE_MARKER
from agentkit._pytest.network import AllowedHosts
from agentkit.recording import RECORD_MODES
from agentkit.scenario.project import Project, ProjectError, activated, read_project

__all__ = ["add_options", "add_markers", "activate_project", "project_of", "read_allowed_hosts",
           "is_recording", "shown_path", "ALLOWED"]

#: The hosts guarded tests may reach (``--allowed-hosts``, ``agentkit_allowed_hosts``)
ALLOWED = pytest.StashKey[AllowedHosts]()
_PROJECT = pytest.StashKey[Project]()


def _read(config: pytest.Config) -> Project:
    inipath = config.inipath
    pyproject = (inipath if inipath is not None and inipath.name == "pyproject.toml"
                 else config.rootpath / "pyproject.toml")
    if not pyproject.is_file():
        return Project.bare(config.rootpath)
    try:
        return read_project(pyproject)
    except ProjectError as exc:
        raise pytest.UsageError(str(exc)) from None


def add_options(parser: pytest.Parser) -> None:
    """The command-line and ini options (``pytest_addoption``)."""
    group = parser.getgroup("agentkit", "agentkit scenarios, recordings and network guard")
    group.addoption("--record-mode", choices=RECORD_MODES, default="none",
                    help="how scenarios with a `recording:` and tests using `agentkit_llm` use "
                         "their cassette: none (replay only, the default), once, new_episodes, "
                         "all, rewrite. Anything but `none` talks to the live model of the "
                         "`live_llm` fixture.")
    group.addoption("--agentkit-model", default=None,
                    help="model the default `live_llm` records with (default: $AGENTKIT_MODEL "
                         "or gpt-4o-mini)")
    group.addoption("--agentkit-base-url", default=None,
                    help="OpenAI-compatible base URL the default `live_llm` records against "
                         "(default: $OPENAI_BASE_URL or OpenAI)")
    group.addoption("--samples", type=_samples_option, default=None, metavar="N",
                    help="with --record-mode: record N independent runs of each scenario with a "
                         "`recording:` into its cassette (sample i sampled with seed i, added to "
                         "the live model's own seed if it has one); replays always judge every "
                         "recorded sample")
    group.addoption("--agentkit-judge-model", default=None,
                    help="model the default `judge_llm` records LLM judges with when their "
                         "`judge:` names none (default: the `live_llm` model)")
    group.addoption("--block-network", action="store_true", default=False,
                    help="guard every test: opening a network connection fails (agentkit "
                         "guards scenario items and tests using its fixtures anyway)")
    group.addoption("--allowed-hosts", action="append", default=[], metavar="HOSTS",
                    help="comma-separated hosts guarded tests may connect to: names, "
                         "addresses, networks (10.0.0.0/8); `localhost` allows every loopback "
                         "address")
    group.addoption("--agentkit-otel-out", metavar="PATH", default=None,
                    help="write every scenario item's run, and every plain test's agent "
                         "calls, as OpenTelemetry spans (GenAI conventions) to PATH as "
                         "OTLP-JSON (needs pip install 'agentkit[otel]')")
    group.addoption("--agentkit-otlp-endpoint", metavar="URL", default=None,
                    help="send those spans to this OTLP/HTTP traces endpoint (one warning if "
                         "it cannot be reached)")
    group.addoption("--agentkit-otel-content", action="store_true", default=False,
                    help="also export message content, secrets redacted (default: "
                         "$OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)")
    parser.addini("agentkit_block_network", type="bool", default=False,
                  help="guard every test (as --block-network)")
    parser.addini("agentkit_allowed_hosts", type="args", default=[],
                  help="hosts guarded tests may connect to (as --allowed-hosts)")
    parser.addini("agentkit_scenarios", type="paths", default=[],
                  help="folders whose scenario files are collected (default: `scenarios` of "
                       "[tool.agentkit] in pyproject.toml, else scenarios/ at the rootdir)")


def _samples_option(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"give at least 1 sample, got {value}")
    return value


def activate_project(early_config: pytest.Config) -> None:
    """Read the project and activate its agent types until the session ends (before conftest.py
    files load: their register_agent_type calls override the project's table, and all of it
    is undone when the session ends -- pytester runs sessions in-process)."""
    project = _read(early_config)
    stack = ExitStack()
    stack.enter_context(activated(project))
    early_config.add_cleanup(stack.close)
    early_config.stash[_PROJECT] = project


def project_of(config: pytest.Config) -> Project:
    """The project :func:`activate_project` read."""
    return config.stash[_PROJECT]


def add_markers(config: pytest.Config) -> None:
    """The markers agentkit reads (``pytest --markers`` lists them)."""
    for line in (
            "live: the test talks to a live model (the network guard lets it)",
            "agentkit_allow_unused_script: do not fail the test when a strict ScriptedLLM or "
            "its agentkit_llm cassette has unused replies",
            "agentkit_allow_loopback: the network guard lets the test connect to loopback "
            "addresses (a local server)",
            f"{CASSETTE_MARKER}(path=None): guard the test's network; `path` names its "
            "agentkit_llm cassette (relative to the test file; default "
            "cassettes/<module>/<test>.yaml)",
            "agentkit_virtual_time(seed=0): run the test in an agentkit simulation; an async "
            "def test runs on a virtual-time loop, so simulated calls overlap"):
        config.addinivalue_line("markers", line)


def read_allowed_hosts(config: pytest.Config) -> None:
    """The hosts guarded tests may reach, from the ini option and ``--allowed-hosts``."""
    try:
        config.stash[ALLOWED] = AllowedHosts.parse([*config.getini("agentkit_allowed_hosts"),
                                                     *config.getoption("allowed_hosts")])
    except ValueError as exc:
        raise pytest.UsageError(f"--allowed-hosts / agentkit_allowed_hosts: {exc}") from None


def is_recording(config: pytest.Config) -> bool:
    """Whether the session records (a ``--record-mode`` other than ``none``)."""
    mode: str = config.getoption("record_mode")
    return mode != "none"


def shown_path(path: Path, root: Path) -> str:
    """``path`` as messages show it: relative to ``root`` (the rootdir) when it is under it."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
