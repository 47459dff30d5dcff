"""The reference pages name what the code has: every command of `agentkit` and each of its
options (docs/reference/cli.md), every error class of the harness under its kind
(docs/reference/errors.md), and every option, ini option, marker and fixture of the pytest
plugin (docs/reference/pytest-plugin.md)."""

from __future__ import annotations

import contextlib
import importlib
import io
import pkgutil
import re

import pytest

import agentkit
from agentkit.core.errors import HarnessError
from tests.docs.pages import DOCS, section

CLI = DOCS / "reference" / "cli.md"
ERRORS = DOCS / "reference" / "errors.md"
PLUGIN = DOCS / "reference" / "pytest-plugin.md"


def _help(*argv: str) -> str:
    from agentkit.cli import main

    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, "--help"], out=out) == 0
    return out.getvalue()


def _commands() -> list[str]:
    listing = _help().split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^    ([a-z][\w-]*)", listing, flags=re.M)


def test_the_cli_page_has_a_section_per_command_naming_each_of_its_options():
    text = CLI.read_text("utf-8")
    missing = []
    for command in _commands():
        heading = f"### `agentkit {command}`\n"
        assert heading in text, f"docs/reference/cli.md has no section {heading.strip()}"
        part = text.split(heading, 1)[1].split("\n### ", 1)[0]
        options = set(re.findall(r"^  (?:-\w, )?(--[a-z][\w-]*)", _help(command), flags=re.M))
        options.discard("--help")
        missing += [f"{command} {option}" for option in sorted(options)
                    if not re.search(rf"(?<![\w-]){option}(?![\w-])", part)]

    assert len(_commands()) >= 10
    assert missing == []


def _harness_errors() -> set[type[HarnessError]]:
    for found in pkgutil.walk_packages(agentkit.__path__, "agentkit."):
        if not found.name.endswith("__main__"):  # the command line itself
            importlib.import_module(found.name)
    seen: set[type[HarnessError]] = set()
    todo = [HarnessError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return {error for error in seen if not error.__name__.startswith("_")}


def test_every_error_of_the_harness_is_named_under_its_kind():
    wrong = []
    for error in sorted(_harness_errors(), key=lambda e: e.__name__):
        kind_section = next(part for part in ERRORS.read_text("utf-8").split("\n## ")
                            if part.startswith(f"`{error.kind}`"))
        if f"`{error.__name__}`" not in kind_section:
            wrong.append(f"{error.__name__} ({error.kind})")

    assert wrong == []


def test_the_errors_page_has_a_section_per_kind_and_the_exit_codes():
    headings = re.findall(r"^## (.+)$", ERRORS.read_text("utf-8"), flags=re.M)

    assert [h.split(":")[0] for h in headings[:4]] == [
        "`input`", "`recording`", "`agent`", "`infrastructure`"]
    assert "| 130 |" in section(ERRORS, "Exit codes")


class _Recorder:
    """Stands in for pytest's parser and its option group: keeps what the plugin adds."""

    def __init__(self) -> None:
        self.options: list[str] = []
        self.ini: list[str] = []

    def getgroup(self, *args: object, **kwargs: object) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: object) -> None:
        self.options += names

    def addini(self, name: str, *args: object, **kwargs: object) -> None:
        self.ini.append(name)


def _agentkit_plugins(config: pytest.Config) -> list[object]:
    """The plugin modules agentkit registers (its entry point and any part it registers)."""
    return [plugin for plugin in config.pluginmanager.get_plugins()
            if getattr(plugin, "__name__", "").startswith("agentkit")]


def test_the_plugin_page_names_every_option_and_ini_option(pytestconfig: pytest.Config):
    recorded = _Recorder()
    for plugin in _agentkit_plugins(pytestconfig):
        if hasattr(plugin, "pytest_addoption"):
            plugin.pytest_addoption(recorded)
    text = PLUGIN.read_text("utf-8")

    assert recorded.options and recorded.ini
    assert [n for n in recorded.options if f"`{n}" not in section(PLUGIN, "Command-line options")] == []
    assert [n for n in recorded.ini if f"`{n}`" not in section(PLUGIN, "Ini options")] == []
    assert "--snapshot-update" in text


def test_the_plugin_page_names_every_marker(pytestconfig: pytest.Config):
    ours = [line.split(":")[0].split("(")[0] for line in pytestconfig.getini("markers")
            if line.startswith(("agentkit_", "live:"))]
    markers = section(PLUGIN, "Markers")

    assert len(ours) >= 5
    assert [m for m in ours if f"@pytest.mark.{m}" not in markers] == []


def test_the_plugin_page_names_every_fixture(request: pytest.FixtureRequest):
    names = sorted({name for plugin in _agentkit_plugins(request.config) for name in dir(plugin)
                    if not name.startswith("_")
                    and request._fixturemanager.getfixturedefs(name, request.node)})
    fixtures = section(PLUGIN, "Fixtures")

    assert len(names) >= 6
    assert [n for n in names if f"| `{n}` |" not in fixtures] == []


@pytest.mark.parametrize("command", ["coverage", "mutate", "judge calibrate", "suite", "suite bfcl",
                                     "suite agentdojo"])
def test_the_cli_page_shows_the_help_of_the_suite_commands_verbatim(
        command: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "100")  # the width the page's copy was taken at
    part = CLI.read_text("utf-8").split(f"### `agentkit {command}`\n", 1)[1]
    shown = part.split("```text\n", 1)[1].split("```", 1)[0]

    assert shown == _help(*command.split())
