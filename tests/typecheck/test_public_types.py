"""Typed users: agentkit's public constructors and factories pass a strict mypy, and a
mistake in a call to them is reported.

mypy runs through its API on two user modules with agentkit's imports followed silently
(their errors are the `mypy agentkit` CI step's business) and no cache: about 2 s.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import mypy.api
import pytest

from agentkit.agent.workflow.base_agent import BaseWorkflowAgent, WorkflowAgentOptions

from . import user_code

HERE = Path(__file__).parent
_ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")


@pytest.fixture(scope="module")
def mypy_errors() -> dict[str, set[tuple[int, str]]]:
    """(line, error code) of each error mypy --strict reports, by file name."""
    stdout, stderr, _ = mypy.api.run([
        "--strict", "--config-file", "", "--follow-imports=silent", "--cache-dir", os.devnull,
        "--no-error-summary", "--hide-error-context", "--no-pretty",
        str(HERE / "user_code.py"), str(HERE / "user_mistakes.py")])
    assert not stderr, stderr
    errors: dict[str, set[tuple[int, str]]] = {"user_code.py": set(), "user_mistakes.py": set()}
    for line in stdout.splitlines():
        if match := _ERROR.match(line):
            errors[Path(match["path"]).name].add((int(match["line"]), match["code"]))
        else:
            assert ": note: " in line, f"unexpected mypy output: {line}"
    return errors


@pytest.mark.slow  # mypy --strict in-process: seconds of CPU
def test_user_code_passes_strict_mypy(mypy_errors: dict[str, set[tuple[int, str]]]) -> None:
    assert mypy_errors["user_code.py"] == set()


@pytest.mark.slow  # user code type-checked and run
def test_user_code_runs() -> None:
    user_code.main()


@pytest.mark.slow  # mypy --strict in-process: seconds of CPU
def test_mypy_reports_each_mistake_in_a_public_constructor(
        mypy_errors: dict[str, set[tuple[int, str]]]) -> None:
    lines = (HERE / "user_mistakes.py").read_text(encoding="utf-8").splitlines()
    expected = {(number, match[1]) for number, text in enumerate(lines, 1)
                if (match := re.search(r"# E: ([a-z-]+)$", text))}
    assert len(expected) == 11
    assert mypy_errors["user_mistakes.py"] == expected


def test_workflow_agent_options_are_the_base_agent_keywords_with_their_types() -> None:
    # FunctionAgent/ReActAgent type their **options by WorkflowAgentOptions: it must not
    # drift from the parameters BaseWorkflowAgent.__init__ takes (its **fields carries a
    # subclass's own fields, which the subclass types itself)
    parameters = inspect.signature(BaseWorkflowAgent.__init__).parameters
    base = {name: p.annotation for name, p in parameters.items()
            if name != "self" and p.kind is not p.VAR_KEYWORD}
    options = {name: getattr(t, "__forward_arg__", t)
               for name, t in WorkflowAgentOptions.__annotations__.items()}
    assert options == base
