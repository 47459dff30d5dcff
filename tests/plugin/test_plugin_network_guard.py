"""The network guard: no test reaches a live model unless recording is asked for or the test
is marked ``live``; local sockets keep working.

The outer tests that let an inner test connect are marked ``live`` themselves: the inner
session runs in this process, inside this test's own guard.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from plugin_project import write


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


def _connecting_test(pytester: pytest.Pytester, port: int, marker: str = "") -> None:
    write(pytester, "test_connect.py", f"""\
        import socket
        import pytest

        {marker}
        def test_connects():
            with socket.create_connection(("127.0.0.1", {port}), timeout=5):
                pass
        """)


def test_tcp_connection_fails_with_how_to_record_message(pytester: pytest.Pytester,
                                                         closed_port: int) -> None:
    _connecting_test(pytester, closed_port)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"E*LiveModelBlockedError: test_connect.py::test_connects tried to connect to "
        f"127.0.0.1:{closed_port}: agentkit blocks the network in tests so no test reaches a "
        "live model by accident. Record it once with --record-mode=once (then it replays "
        "offline), or mark the test @pytest.mark.live."])


@pytest.mark.live
def test_connection_to_a_listening_socket_is_blocked_too(pytester: pytest.Pytester,
                                                          listening_port: int) -> None:
    _connecting_test(pytester, listening_port)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E*LiveModelBlockedError: *--record-mode=once*"])


def test_blocked_connection_traceback_ends_in_the_test(pytester: pytest.Pytester,
                                                       closed_port: int) -> None:
    _connecting_test(pytester, closed_port)

    result = pytester.runpytest()

    result.stdout.no_fnmatch_line("*pytest_plugin.py*")


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

    result = pytester.runpytest()

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        f"test_swallow.py::test_swallows tried to connect to 127.0.0.1:{closed_port}: *"
        "--record-mode=once*"])


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

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E*RuntimeError: the server is unreachable",
                                 "*agentkit network guard*",
                                 "test_client.py::test_client tried to connect to *"
                                 "--record-mode=once*"])


@pytest.mark.live
def test_live_marker_allows_the_connection(pytester: pytest.Pytester,
                                           listening_port: int) -> None:
    _connecting_test(pytester, listening_port, marker="@pytest.mark.live")

    result = pytester.runpytest()

    result.assert_outcomes(passed=1)


@pytest.mark.live
def test_record_mode_once_allows_the_connection(pytester: pytest.Pytester,
                                                listening_port: int) -> None:
    _connecting_test(pytester, listening_port)

    result = pytester.runpytest("--record-mode=once")

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

    result = pytester.runpytest()

    result.assert_outcomes(passed=1)


@pytest.mark.agentkit_allow_loopback
def test_allow_loopback_marker_lets_a_test_reach_a_local_server(pytester: pytest.Pytester,
                                                                 listening_port: int) -> None:
    _connecting_test(pytester, listening_port, marker="@pytest.mark.agentkit_allow_loopback")

    result = pytester.runpytest()

    result.assert_outcomes(passed=1)


def test_allow_loopback_marker_still_blocks_other_hosts(pytester: pytest.Pytester) -> None:
    write(pytester, "test_connect.py", """\
        import socket
        import pytest

        @pytest.mark.agentkit_allow_loopback
        def test_connects():
            with socket.create_connection(("192.0.2.1", 80), timeout=5):
                pass
        """)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E*LiveModelBlockedError: *tried to connect to 192.0.2.1:80*"])
