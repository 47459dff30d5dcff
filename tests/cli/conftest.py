"""CLI tests call :func:`agentkit.cli.main` in-process on scenario files in ``tmp_path``.

``record`` runs against a respx fake OpenAI endpoint (:mod:`mocks.openai_server`), which the
OpenAI backend the command builds reaches like any server at ``--base-url``.
No ``__init__.py`` here on purpose (tests/ directories are not packages).
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main
from agentkit.llms.mock import tool_call
from cli_helpers import ADDING, FAKE_URL, Outcome
from mocks.openai_server import FakeOpenAIServer


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Commands never see the machine's OpenAI settings."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTKIT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """``cli("run", "path", ...)`` runs the command; returns its exit code, stdout, stderr."""

    def run(*argv: str | Path) -> Outcome:
        capsys.readouterr()
        out = io.StringIO()
        code = main([str(arg) for arg in argv], out=out)
        captured = capsys.readouterr()
        return Outcome(code, out.getvalue() + captured.out, captured.err)

    return run


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """``write(relative_path, text)`` writes a (dedented) file under ``tmp_path``."""

    def write_file(relative: str, text: str) -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write_file


@pytest.fixture
def adding(write: Callable[[str, str], Path]) -> Path:
    return write("scenarios/adding.yaml", ADDING)


@pytest.fixture
def fake_openai_endpoint() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """``serve(script, **options)``: a fake endpoint at ``FAKE_URL`` the CLI's OpenAI backend
    reaches; by default it answers `adding` with one `add` call and then "2 + 3 = 5"."""
    servers: list[FakeOpenAIServer] = []

    def serve(script: list[Any] | None = None, **options: Any) -> FakeOpenAIServer:
        script = [tool_call("add", a=2, b=3), "2 + 3 = 5"] if script is None else script
        server = FakeOpenAIServer(script, base_url=FAKE_URL, **options).start()
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.stop()
    for server in servers:
        server.assert_complete()
