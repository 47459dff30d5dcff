"""OpenTelemetry export of a session (``--agentkit-otel-out``, ``--agentkit-otlp-endpoint``):
scenario items through the case runner's observers, plain tests from the bus events of their
call; under pytest-xdist each worker hands its spans to the controller, which writes the file."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from agentkit._pytest.items import ScenarioItem

__all__ = ["configure_otel"]

#: ``workeroutput`` keys a pytest-xdist worker hands the controller its spans and warnings in
_OTEL_SPANS, _OTEL_WARNINGS = "agentkit_otel_spans", "agentkit_otel_warnings"
#: a plain test's bus events, from its call to its report
_TEST_EVENTS = pytest.StashKey[list[Any]]()


def configure_otel(config: pytest.Config) -> None:
    """With ``--agentkit-otel-out`` or ``--agentkit-otlp-endpoint``: the session's export."""
    out, endpoint_option = (config.getoption("agentkit_otel_out"),
                            config.getoption("agentkit_otlp_endpoint"))
    if out is None and endpoint_option is None:
        return
    from agentkit.otel import OtelMissingError, require_sdk
    from agentkit.otel.export import OtelExport
    from agentkit.otel.settings import content_from_env, resolve_endpoint

    try:
        require_sdk("--agentkit-otel-out" if out is not None else "--agentkit-otlp-endpoint")
    except OtelMissingError as exc:
        raise pytest.UsageError(str(exc)) from None
    path = Path(out) if out is not None else None
    if path is not None and path.is_dir():
        raise pytest.UsageError(f"--agentkit-otel-out {out}: is a folder; give a file name")
    warnings: list[str] = []
    export = OtelExport(out=path, endpoint=resolve_endpoint(endpoint_option, {}),
                        content=config.getoption("agentkit_otel_content") or content_from_env(),
                        warn=warnings.append)
    config.pluginmanager.register(_OtelSession(config, export, warnings), "agentkit-otel")


class _OtelSession:
    """Exports the session's runs: scenario items through the judgement's observers, plain
    tests from the bus events of their call. Under pytest-xdist each worker builds its spans
    and sends them to the endpoint; the controller writes the one file."""

    def __init__(self, config: pytest.Config, export: Any, warnings: list[str]) -> None:
        self.config = config
        self.export = export
        self.warnings = warnings
        self.stack = ExitStack()
        self.worker = hasattr(config, "workerinput")
        self.lines: list[str] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.stack.enter_context(self.export.observing())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        if isinstance(item, ScenarioItem):
            return (yield)
        from agentkit.instrumentation import collect_events

        with collect_events() as events:
            try:
                return (yield)
            finally:
                item.stash[_TEST_EVENTS] = list(events)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        events = item.stash.get(_TEST_EVENTS, None)
        if report.when == "call" and events:
            from agentkit.otel.export import record_of_test

            failure = "" if report.passed else report.longreprtext.splitlines()[-1:]
            self.export.add(record_of_test(item.nodeid, events, passed=report.passed,
                                           failure="".join(failure)))
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        if output.get(_OTEL_SPANS):
            self.export.extra.append(output[_OTEL_SPANS])
        self.warnings += output.get(_OTEL_WARNINGS, [])

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stack.close()
        if self.worker:
            output = self.config.workeroutput  # type: ignore[attr-defined]
            if self.export.out is not None and self.export.records:
                output[_OTEL_SPANS] = self.export.encoded()
            out, self.export.out = self.export.out, None  # the controller writes the file
            self.lines = list(self.export.close().lines)
            self.export.out = out
            output[_OTEL_WARNINGS] = list(self.warnings)
            return
        self.lines = list(self.export.close().lines)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            terminalreporter.write_line(f"agentkit: {line}")
        for warning in dict.fromkeys(self.warnings):
            terminalreporter.write_line(f"agentkit: warning: {warning}", yellow=True)
