"""The network guard is opt-in: off for a project's own tests unless asked for
(``--block-network``, ``agentkit_block_network = true``), on for scenario items and tests that
use agentkit's fixtures or marker. A guarded test that opens a TCP connection fails with a
message saying how to record instead; local sockets keep working; ``--allowed-hosts`` and
``agentkit_allow_loopback`` let guarded tests reach chosen hosts.

The inner sessions run in this process, inside this test's own guard (this repository sets
``agentkit_block_network``): an outer test whose inner test must really connect to a local
port is marked ``agentkit_allow_loopback`` itself.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit._pytest.network import AllowedHosts
from plugin_project import ini, write


@pytest.fixture
def listening_port() -> Iterator[int]:
    """A local TCP port that accepts connections."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        yield server.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    """A local TCP port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _connecting_test(pytester: pytest.Pytester, port: int, marker: str = "",
                     fixtures: str = "", host: str = "127.0.0.1") -> None:
    write(pytester, "test_connect.py", f"""\
        import socket
        import pytest

        {marker}
        def test_connects({fixtures}):
            with socket.create_connection(({host!r}, {port}), timeout=5):
                pass
        """)


# ----------------------------------------------------------------- off unless asked
@pytest.mark.agentkit_allow_loopback
def test_a_plain_test_reaching_a_local_server_is_not_guarded_by_default(
        pytester: pytest.Pytester, listening_port: int) -> None:
    _connecting_test(pytester, listening_port)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1)


def test_block_network_guards_every_test_and_says_how_to_record_it(
        pytester: pytest.Pytester, closed_port: int) -> None:
    _connecting_test(pytester, closed_port)

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"*agentkit.pytest_plugin.LiveModelBlockedError: test_connect.py::test_connects tried "
        f"to connect to 127.0.0.1:{closed_port}: agentkit blocks the network in this test "
        "(--block-network) so that no test reaches a live model by accident.",
        "*- to record the model once and replay it offline: take the LLM from the "
        "`agentkit_llm` fixture (it records through your `live_llm` fixture) and run "
        "`pytest --record-mode=once test_connect.py::test_connects` (writes "
        "cassettes/test_connect/test_connects.yaml)",
        "*- to let the test reach 127.0.0.1: pass --allowed-hosts=127.0.0.1, or mark it "
        "@pytest.mark.live"])


@pytest.mark.slow  # inner pytest sessions
def test_the_ini_option_guards_every_test(pytester: pytest.Pytester, closed_port: int) -> None:
    ini(pytester, "agentkit_block_network = true")
    _connecting_test(pytester, closed_port)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LiveModelBlockedError: *in this test "
                                 "(agentkit_block_network = true)*"])


@pytest.mark.slow  # an inner pytest session (pytester)
@pytest.mark.parametrize("fixture", ["agentkit_record_mode", "scripted_llm", "run_scenario"])
def test_a_test_using_an_agentkit_fixture_is_guarded(pytester: pytest.Pytester,
                                                     closed_port: int, fixture: str) -> None:
    _connecting_test(pytester, closed_port, fixtures=fixture)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*LiveModelBlockedError: *in this test (it uses agentkit's "
                                 f"`{fixture}` fixture)*"])


def test_a_test_marked_agentkit_cassette_is_guarded(pytester: pytest.Pytester,
                                                    closed_port: int) -> None:
    _connecting_test(pytester, closed_port, marker="@pytest.mark.agentkit_cassette")

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LiveModelBlockedError: *(marked agentkit_cassette)*"])


def test_a_scenario_item_is_guarded_and_told_to_record_the_scenario(
        project: pytest.Pytester, closed_port: int) -> None:
    write(project, "calc_tools.py", f"""\
        import socket

        def add(a: int, b: int) -> int:
            \"\"\"Add two integers (asking a server first).\"\"\"
            socket.create_connection(("127.0.0.1", {closed_port}), timeout=5).close()
            return a + b
        """)

    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*agentkit network guard*",
        "scenarios/adding.yaml::react tried to connect to "
        f"127.0.0.1:{closed_port}: agentkit blocks the network in this test (a scenario) so "
        "that no test reaches a live model by accident.",
        "- to record the scenario's model once and replay it offline: "
        "`pytest --record-mode=once scenarios/adding.yaml::react`"])


# ----------------------------------------------------------------- what stays open
@pytest.mark.agentkit_allow_loopback
@pytest.mark.parametrize("hosts", ["127.0.0.1", "localhost", "example.invalid, 127.0.0.0/8"])
def test_allowed_hosts_let_a_guarded_test_reach_them(pytester: pytest.Pytester,
                                                     listening_port: int, hosts: str) -> None:
    _connecting_test(pytester, listening_port)

    result = pytester.runpytest("--block-network", f"--allowed-hosts={hosts}")

    result.assert_outcomes(passed=1)


@pytest.mark.agentkit_allow_loopback
def test_allowed_hosts_can_be_set_in_the_ini_file(pytester: pytest.Pytester,
                                                  listening_port: int) -> None:
    ini(pytester, "agentkit_block_network = true", "agentkit_allowed_hosts = localhost")
    _connecting_test(pytester, listening_port)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1)


def test_allowed_hosts_do_not_open_other_hosts(pytester: pytest.Pytester) -> None:
    _connecting_test(pytester, 80, host="192.0.2.1")

    result = pytester.runpytest("--block-network", "--allowed-hosts=localhost")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LiveModelBlockedError: *tried to connect to 192.0.2.1:80*"])


@pytest.mark.agentkit_allow_loopback
def test_allow_loopback_marker_lets_a_guarded_test_reach_a_local_server(
        pytester: pytest.Pytester, listening_port: int) -> None:
    _connecting_test(pytester, listening_port, marker="@pytest.mark.agentkit_allow_loopback")

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(passed=1)


def test_allow_loopback_marker_still_blocks_other_hosts(pytester: pytest.Pytester) -> None:
    _connecting_test(pytester, 80, marker="@pytest.mark.agentkit_allow_loopback",
                     host="192.0.2.1")

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LiveModelBlockedError: *tried to connect to 192.0.2.1:80*"])


@pytest.mark.live
def test_live_marker_allows_the_connection(pytester: pytest.Pytester,
                                           listening_port: int) -> None:
    _connecting_test(pytester, listening_port, marker="@pytest.mark.live")

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(passed=1)


@pytest.mark.live
def test_record_mode_once_allows_the_connection(pytester: pytest.Pytester,
                                                listening_port: int) -> None:
    _connecting_test(pytester, listening_port)

    result = pytester.runpytest("--block-network", "--record-mode=once")

    result.assert_outcomes(passed=1)


def test_unix_sockets_and_socketpairs_are_not_blocked(pytester: pytest.Pytester,
                                                      tmp_path_factory: pytest.TempPathFactory
                                                      ) -> None:
    # a short path: AF_UNIX addresses are limited to ~100 bytes
    address = tmp_path_factory.mktemp("ux") / "s"
    write(pytester, "test_local.py", f"""\
        import socket

        def test_local_sockets():
            with socket.socket(socket.AF_UNIX) as server:
                server.bind({str(address)!r})
                server.listen(1)
                with socket.socket(socket.AF_UNIX) as client:
                    client.connect({str(address)!r})
                    client.sendall(b"ping")
                    connection, _ = server.accept()
                    with connection:
                        assert connection.recv(4) == b"ping"
            left, right = socket.socketpair()
            with left, right:
                left.sendall(b"pong")
                assert right.recv(4) == b"pong"
        """)

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(passed=1)


# ----------------------------------------------------------------- blocked attempts
def test_blocked_connection_traceback_ends_in_the_test(pytester: pytest.Pytester,
                                                       closed_port: int) -> None:
    _connecting_test(pytester, closed_port)

    result = pytester.runpytest("--block-network")

    result.stdout.no_fnmatch_line("*pytest_plugin.py*")
    result.stdout.no_fnmatch_line("*agentkit/_pytest/*")


def test_swallowed_connection_error_still_fails_the_test(pytester: pytest.Pytester,
                                                         closed_port: int) -> None:
    write(pytester, "test_swallow.py", f"""\
        import socket

        def test_swallows():
            try:
                socket.create_connection(("127.0.0.1", {closed_port}), timeout=5)
            except OSError:
                pass
        """)

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        f"test_swallow.py::test_swallows tried to connect to 127.0.0.1:{closed_port}: *",
        "- to record the model once*--record-mode=once*"])


def test_connection_error_wrapped_by_a_client_still_explains_the_block(
        pytester: pytest.Pytester, closed_port: int) -> None:
    write(pytester, "test_client.py", f"""\
        import socket

        def test_client():
            try:
                socket.create_connection(("127.0.0.1", {closed_port}), timeout=5)
            except OSError:
                raise RuntimeError("the server is unreachable") from None
        """)

    result = pytester.runpytest("--block-network")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*RuntimeError: the server is unreachable",
                                 "*agentkit network guard*",
                                 "test_client.py::test_client tried to connect to *",
                                 "- to record the model once*--record-mode=once*"])


# ----------------------------------------------------------------- allowed hosts
def test_allowed_hosts_parse_addresses_networks_and_names() -> None:
    allowed = AllowedHosts.parse(["10.0.0.0/8, api.example.test", " ", "::1"])

    assert allowed.allows("10.1.2.3") and allowed.allows("::1")
    assert allowed.allows("API.example.test")
    assert not allowed.allows("192.0.2.1") and not allowed.allows("127.0.0.1")


def test_localhost_allows_every_loopback_address() -> None:
    allowed = AllowedHosts.parse(["localhost"])

    assert allowed.allows("127.0.0.1") and allowed.allows("127.5.5.5") and allowed.allows("::1")
    assert not allowed.allows("192.0.2.1")


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "10.0.0.300", "http://api.example.test",
                                   "api.example.test:8080", "api.example.test/v1", "a..b",
                                   "-api.example.test", "x" * 64 + ".test"])
def test_an_entry_that_is_no_address_network_or_host_name_is_an_error_naming_it(
        entry: str) -> None:
    with pytest.raises(ValueError, match=rf"allowed hosts: '{re.escape(entry)}' is not an "
                                         r"address, a network \(10.0.0.0/8\) or a host name"):
        AllowedHosts.parse([f"api.example.test, {entry}"])


def test_a_trailing_dot_and_underscores_are_a_host_name() -> None:
    allowed = AllowedHosts.parse(["Example.COM., build_cache.internal"])

    assert allowed.names == ("example.com", "build_cache.internal")


@pytest.mark.slow  # property test at full size
@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=4))
def test_any_option_values_parse_or_are_an_error_naming_the_entry(values: list[str]) -> None:
    entries = [h.strip() for value in values for h in value.split(",") if h.strip()]
    try:
        allowed = AllowedHosts.parse(values)
    except ValueError as exc:
        assert any(str(exc).startswith(f"allowed hosts: {entry!r} is not an address")
                   for entry in entries), str(exc)
        return
    names = [e.lower().rstrip(".") for e in entries
             if e.lower() != "localhost" and e.lower().rstrip(".") in allowed.names]
    assert len(allowed.networks) + len(names) >= len(entries)


def test_a_bad_allowed_hosts_option_stops_pytest_with_a_usage_error(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_nothing.py", "def test_nothing():\n    pass\n")

    result = pytester.runpytest("--allowed-hosts=api.example.test:8080")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--allowed-hosts / agentkit_allowed_hosts: allowed hosts: "
                                 "'api.example.test:8080' is not an address*"])
