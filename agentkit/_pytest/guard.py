"""The network guard of a test (:mod:`agentkit._pytest.network` does the blocking): which tests
are guarded and why, the message that says what was blocked and how to record instead, and a
test that swallowed the refusal still failing.

Guarded are: every test with ``--block-network`` or the ini option ``agentkit_block_network =
true``; scenario items; tests using ``agentkit_llm``, ``run_scenario``, ``scripted_llm`` or
``agentkit_record_mode``, or marked ``agentkit_cassette``. Never guarded: recording runs and
tests marked ``live``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentkit._pytest.cassettes import MARKER as CASSETTE_MARKER
from agentkit._pytest.cassettes import cassette_for
from agentkit._pytest.items import ScenarioItem
from agentkit._pytest.network import LiveModelBlockedError, block_network
from agentkit._pytest.options import ALLOWED, is_recording, shown_path
from agentkit._pytest.outcomes import call_passed

__all__ = ["GUARDING_FIXTURES", "explain_blocked"]

#: fixtures whose use turns the network guard on for the test
GUARDING_FIXTURES = ("agentkit_llm", "run_scenario", "scripted_llm", "agentkit_record_mode")


_ATTEMPTS = pytest.StashKey[list[str]]()  # the connections it refused
_GUARDED = pytest.StashKey[str]()  # why the test's network is guarded


def _guard_reason(request: pytest.FixtureRequest) -> str | None:
    """Why this test's network is guarded (None: it is not)."""
    item, config = request.node, request.config
    if is_recording(config) or item.get_closest_marker("live"):
        return None
    if config.getoption("block_network"):
        return "--block-network"
    if config.getini("agentkit_block_network"):
        return "agentkit_block_network = true"
    if isinstance(item, ScenarioItem):
        return "a scenario"
    if item.get_closest_marker(CASSETTE_MARKER):
        return f"marked {CASSETTE_MARKER}"
    used = [name for name in GUARDING_FIXTURES if name in request.fixturenames]
    return f"it uses agentkit's `{used[0]}` fixture" if used else None


def _blocked(item: pytest.Item, targets: list[str], reason: str | None = None) -> str:
    """The guard's message: what was blocked and why, then how to record instead and how to
    allow the connection, one line each."""
    why = f" ({reason})" if reason else ""
    lines = [f"{item.nodeid} tried to connect to {', '.join(targets)}: agentkit blocks the "
             f"network in this test{why} so that no test reaches a live model by accident."]
    if isinstance(item, ScenarioItem):
        lines.append(f"- to record the scenario's model once and replay it offline: "
                     f"`pytest --record-mode=once {item.nodeid}`")
    else:
        cassette = shown_path(cassette_for(item), item.config.rootpath)
        lines.append("- to record the model once and replay it offline: take the LLM from the "
                     "`agentkit_llm` fixture (it records through your `live_llm` fixture) and "
                     f"run `pytest --record-mode=once {item.nodeid}` (writes {cassette})")
    host = targets[0].rsplit(":", 1)[0].strip("[]")
    lines.append(f"- to let the test reach {host}: pass --allowed-hosts={host}, or mark it "
                 "@pytest.mark.live")
    return "\n".join(lines)


@pytest.fixture(autouse=True)
def _agentkit_network_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    reason = _guard_reason(request)
    if reason is None:
        yield
        return
    item = request.node
    attempts = item.stash[_ATTEMPTS] = []
    item.stash[_GUARDED] = reason
    allowed = request.config.stash[ALLOWED]
    if item.get_closest_marker("agentkit_allow_loopback"):
        allowed = allowed.with_loopback()

    def refuse(host: str, target: str) -> str:
        attempts.append(target)
        return _blocked(item, [target], reason)

    with block_network(allowed, refuse):
        yield
    if attempts and call_passed(item):
        # the test swallowed the error; it still must not pass
        pytest.fail(_blocked(item, attempts, reason), pytrace=False)



def explain_blocked(item: pytest.Item, call: pytest.CallInfo[None],
                    report: pytest.TestReport) -> None:
    """When the test failed on another error after a refused connection (an SDK's "connection
    failed"), a section of ``report`` saying why it failed and how to record."""
    attempts = item.stash.get(_ATTEMPTS, [])
    if (report.when == "call" and report.failed and attempts and call.excinfo is not None
            and not call.excinfo.errisinstance(LiveModelBlockedError)):
        _add_section(report, "agentkit network guard",
                     _blocked(item, attempts, item.stash.get(_GUARDED, None)))


def _add_section(report: pytest.TestReport, title: str, text: str) -> None:
    if hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection(title, text)  # type: ignore[union-attr]
    else:
        report.sections.append((title, text))
