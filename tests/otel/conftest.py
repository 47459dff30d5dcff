"""The OpenTelemetry tests run commands in-process (:func:`agentkit.cli.main`) inside
``tmp_path``, with none of this machine's OTel settings: an export goes only where a test says.
Exports are byte-stable here (``AGENTKIT_OTEL_STABLE=1``: the fixed epoch, ids from the runs'
names) unless a test takes the setting away to check the default (real time, unique ids).
No ``__init__.py`` here on purpose (tests/ directories are not packages); helpers are in
``otel_helpers``."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.cli import main
from otel_helpers import REPO, Outcome, Receiver


@pytest.fixture(autouse=True)
def no_otel_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                 "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                 "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                 "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTKIT_OTEL_STABLE", "1")
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """``cli("run", ...)``: exit code, stdout and stderr of the command."""

    def run(*argv: str | Path) -> Outcome:
        capsys.readouterr()
        out = io.StringIO()
        code = main([str(arg) for arg in argv], out=out)
        captured = capsys.readouterr()
        return Outcome(code, out.getvalue() + captured.out, captured.err)

    return run


@pytest.fixture
def bundled(tmp_path: Path) -> Callable[..., Path]:
    """``bundled("single_tool_call")``: a copy of a bundled scenario (with its snapshots) in
    ``tmp_path/scenarios``, so commands that write beside it leave the repository alone."""

    def copy(*names: str) -> Path:
        target = tmp_path / "scenarios"
        target.mkdir(exist_ok=True)
        for name in names:
            shutil.copy(REPO / "scenarios" / f"{name}.yaml", target)
            snapshots = REPO / "scenarios" / "__snapshots__" / name
            if snapshots.is_dir():
                shutil.copytree(snapshots, target / "__snapshots__" / name, dirs_exist_ok=True)
        return target / f"{names[0]}.yaml"

    return copy


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()
