"""Ctrl-C and SIGTERM end the ``agentkit`` command with one line and exit 130 and 143 in every
state: while the command's own modules are still being imported (the first second of any
command), while it runs, and after it finished while Python waits for a thread a tool left
running. No timing is involved: the process signals itself at the moment under test (a module
on the path in place of one the command imports, or a tool's thread)."""

from __future__ import annotations

import importlib.metadata
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import agentkit._console

REPO = Path(__file__).resolve().parents[2]
SIGNALS = [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")]

#: in place of a module the command imports: the process signals itself while importing it
SIGNALLING_MODULE = "import os, signal\nos.kill(os.getpid(), signal.{signal})\n"

#: a tool that leaves a thread running, which signals the process once the command is over
#: (the main thread has stopped: Python is waiting to join the threads still running)
LINGERING_TOOL = '''
import os
import signal
import threading
import time


def _signal_when_over():
    while threading.main_thread().is_alive():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.{signal})
    threading.Event().wait()  # never ends: only the signal ends the process


def add(a: int, b: int) -> int:
    """Add two integers (and leave a thread running)."""
    threading.Thread(target=_signal_when_over).start()
    return a + b
'''

SCENARIO = """\
format: 1
name: adding
tools:
  - ref: {tool}
turns:
  - user: What is 2 + 3?
agents:
  function_calling:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - "5"
"""


def _agentkit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120,
                          # a shell's background job starts with SIGINT ignored; a terminal not
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _scenario(tmp_path: Path, tool: str = "mocks.tools:add") -> str:
    (tmp_path / "s.yaml").write_text(SCENARIO.format(tool=tool), encoding="utf-8")
    return "s.yaml"


# argparse: imported with agentkit.cli, the first thing after the handlers are in place;
# yaml: imported on the way to the command (the scenario loader), before it runs
@pytest.mark.slow  # the whole command in a process of its own, signalled
@pytest.mark.parametrize("module", ["argparse", "yaml"])
@pytest.mark.parametrize("name, code, word", SIGNALS)
def test_a_signal_while_the_command_is_imported_ends_it_in_one_line(tmp_path, module, name,
                                                                    code, word):
    (tmp_path / f"{module}.py").write_text(SIGNALLING_MODULE.format(signal=name),
                                           encoding="utf-8")

    done = _agentkit(tmp_path, "run", _scenario(tmp_path), "--snapshots", "off")

    assert done.returncode == code, done.stdout + done.stderr
    assert done.stderr.splitlines() == [f"agentkit: {word} (files written before are intact)"]


@pytest.mark.slow  # the whole command in a process of its own, signalled
@pytest.mark.parametrize("name, code, word", SIGNALS)
def test_a_signal_after_the_command_while_a_tools_thread_runs_ends_the_process(tmp_path, name,
                                                                                code, word):
    (tmp_path / "lingering.py").write_text(LINGERING_TOOL.format(signal=name), encoding="utf-8")

    done = _agentkit(tmp_path, "run", _scenario(tmp_path, "lingering:add"), "--snapshots", "off")

    assert done.returncode == code, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout  # the command had finished
    assert "Traceback" not in done.stderr


def test_the_console_script_is_the_one_python_m_agentkit_runs():
    (script,) = [entry for entry in importlib.metadata.entry_points(group="console_scripts")
                 if entry.name == "agentkit"]

    assert script.load() is agentkit._console.run
