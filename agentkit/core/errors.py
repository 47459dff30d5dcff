"""The root of the errors agentkit's harness reports, sorted by what the user must do.

Every command (the pytest items, ``agentkit run``/``replay``/``record``/``report``) judges a
run and reports a problem by these four kinds, so none of them keeps its own list of what to
catch:

* :class:`BadInputError` -- a file, argument or setting is wrong (a malformed scenario or
  cassette, an import ref that does not import, an unknown agent type): fix the input.
  Commands exit 2.
* :class:`RecordingMismatchError` -- the recording no longer fits the agent (a request the
  cassette does not have, a script that ran out): the agent changed; re-record if that was
  meant. The run fails (exit 1).
* :class:`AgentFailedError` -- the user's own code failed (the agent type's factory raised):
  that run fails, the others go on (exit 1).
* :class:`InfrastructureError` -- what the run needs is not there (a live model server that
  does not answer, times out or keeps rate-limiting): nobody's code is at fault; reported
  apart from failures of the agent.

A class elsewhere joins a kind by deriving from it (``ScenarioError`` is a ``BadInputError``,
``CassetteMissError`` a ``RecordingMismatchError``); :func:`kind_of` tells the kind of any
exception.
"""

from __future__ import annotations

import functools
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

__all__ = ["HarnessError", "BadInputError", "RecordingMismatchError", "AgentFailedError",
           "InfrastructureError", "ErrorKind", "kind_of", "one_line", "UserCode"]

ErrorKind = Literal["input", "recording", "agent", "infrastructure"]


class HarnessError(Exception):
    """An error the harness reports about a run; ``kind`` says whose it is."""

    kind: ClassVar[ErrorKind] = "agent"
    user_code: UserCode | None = None
    """Where the user's code raised the exception behind this error (a factory's), if it
    did: its whole traceback is what verbose output shows."""


class BadInputError(HarnessError, ValueError):
    """A file, argument or setting is wrong; the message says where and how to fix it."""

    kind: ClassVar[ErrorKind] = "input"


class RecordingMismatchError(HarnessError):
    """A recording (cassette, script) no longer fits what the agent does."""

    kind: ClassVar[ErrorKind] = "recording"


class AgentFailedError(HarnessError):
    """The user's code (an agent type's factory) raised; the message names it."""

    kind: ClassVar[ErrorKind] = "agent"


class InfrastructureError(HarnessError):
    """A service the run needs failed (unreachable, timing out, rate-limiting)."""

    kind: ClassVar[ErrorKind] = "infrastructure"


def kind_of(error: BaseException) -> ErrorKind:
    """The kind of ``error``: its class's, or ``agent`` for anything else (an exception the
    agent's own code raised)."""
    return error.kind if isinstance(error, HarnessError) else "agent"


#: Every character :meth:`str.splitlines` breaks a line at, and how it is shown instead.
_BREAKS = {ord(char): repr(char)[1:-1]
           for char in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    """``text`` with its line breaks shown as escapes (``\\n``): a problem quoting the input
    (a key with a newline in it, an exception's multi-line message) stays one line of a
    report that lists one problem per line."""
    return text.translate(_BREAKS)


@functools.cache
def _not_users() -> tuple[str, ...]:
    """Where code that is not the user's lives: agentkit itself, the standard library and
    installed packages (a framework the user's agent runs on). Worked out on first use: it
    imports sysconfig and resolves each path, a system call per part."""
    import sysconfig

    return tuple({str(Path(__file__).resolve().parents[1]),
                  *(str(Path(path).resolve()) for name in ("stdlib", "platstdlib", "purelib",
                                                           "platlib")
                    if (path := sysconfig.get_paths().get(name)))})


def _users(frame: traceback.FrameSummary) -> bool:
    return _users_file(frame.filename)


@functools.lru_cache(maxsize=1024)
def _users_file(filename: str) -> bool:
    """Whether ``filename`` is the user's; once per file (a raising tool raises through the
    same frames at every replay, and resolving each path costs a system call per part)."""
    if filename.startswith("<"):  # <frozen ...>, <string>: no file of the user's
        return False
    return not str(Path(filename).resolve()).startswith(_not_users())


def _shown(filename: str) -> str:
    path, cwd = Path(filename), Path.cwd()
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else filename


@dataclass(frozen=True)
class UserCode:
    """Where the user's own code (a factory, a tool, the agent's own methods) raised an
    exception: its innermost frame outside agentkit, the standard library and installed
    packages (``at``: ``file:line in function``, the file relative to the current folder when
    under it) and the traceback of the user's frames (``traceback``: what ``-v`` shows)."""

    at: str
    traceback: str

    @classmethod
    def of(cls, error: BaseException | None) -> UserCode | None:
        """Where ``error`` was raised in the user's code; None when no frame of the user's
        raised it (or it is the harness's own error)."""
        if error is None or isinstance(error, HarnessError):
            return None
        frames = [frame for frame in traceback.extract_tb(error.__traceback__)
                  if _users(frame)]
        if not frames:
            return None
        last = frames[-1]
        text = "".join(["Traceback (user code, most recent call last):\n",
                        *traceback.format_list(frames),
                        *traceback.format_exception_only(type(error), error)])
        return cls(f"{_shown(last.filename)}:{last.lineno} in {last.name}", text.rstrip("\n"))
