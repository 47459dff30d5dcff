"""The network guard: while it is on, opening a TCP connection (to a live model, by accident)
raises :class:`LiveModelBlockedError`, except to the hosts allowed. Local sockets
(``AF_UNIX``, ``socketpair``) are never affected."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LiveModelBlockedError", "AllowedHosts", "block_network", "LOOPBACK"]

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: A DNS host name: dot-separated labels of letters, digits, hyphens (and underscores, which
#: some internal names use), none starting or ending with a hyphen; at most 253 characters.
_HOST_NAME = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*\.?",
                        re.IGNORECASE)
LOOPBACK: tuple[IPNetwork, ...] = (ipaddress.ip_network("127.0.0.0/8"),
                                   ipaddress.ip_network("::1/128"))


class LiveModelBlockedError(ConnectionError):
    """A test tried to reach the network (a live model) while it is blocked."""

    __module__ = "agentkit.pytest_plugin"  # where users import it from (as pytest does)


@dataclass(frozen=True)
class AllowedHosts:
    """Hosts a guarded test may connect to: addresses and networks (``10.0.0.0/8``), host
    names (resolved when a connection to an address not otherwise allowed is attempted), and
    ``localhost`` for every loopback address."""

    networks: tuple[IPNetwork, ...] = ()
    names: tuple[str, ...] = ()
    _resolved: dict[str, set[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def parse(cls, values: Iterable[str]) -> AllowedHosts:
        """From option values, each a comma-separated list (blank entries ignored). An
        entry that is neither an address, a network nor a host name (``10.0.0.0/33``,
        ``http://host``, ``host:8080``) is a ``ValueError`` naming it: read as a name it would
        never match, and the guard would refuse the host the user meant to allow."""
        networks: list[IPNetwork] = []
        names: list[str] = []
        for value in values:
            for host in (h.strip() for h in value.split(",")):
                if not host:
                    continue
                if host.lower() == "localhost":
                    networks += LOOPBACK
                    continue
                try:
                    networks.append(ipaddress.ip_network(host.strip("[]"), strict=False))
                except ValueError:
                    if len(host) > 253 or not _HOST_NAME.fullmatch(host) or _looks_numeric(host):
                        raise ValueError(
                            f"allowed hosts: {host!r} is not an address, a network (10.0.0.0/8) "
                            "or a host name (a scheme, port or path does not belong there)"
                        ) from None
                    names.append(host.lower().rstrip("."))
        return cls(tuple(networks), tuple(names))

    def with_loopback(self) -> AllowedHosts:
        return AllowedHosts(self.networks + LOOPBACK, self.names, self._resolved)

    def allows(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return host.lower() in self.names
        if any(address in network for network in self.networks):
            return True
        return any(str(address) in self._addresses(name) for name in self.names)

    def _addresses(self, name: str) -> set[str]:
        if name not in self._resolved:
            try:
                infos = socket.getaddrinfo(name, None)
            except OSError:
                infos = []
            self._resolved[name] = {str(info[4][0]).split("%", 1)[0] for info in infos}
        return self._resolved[name]


def _looks_numeric(host: str) -> bool:
    """An entry of digits, dots and a slash that is no valid address (``10.0.0.300``,
    ``10.0.0.0/33``): a mistyped address, not a name (no top-level domain is all digits)."""
    return host.rstrip(".").rsplit(".", 1)[-1].isdigit()


def _target(address: Any) -> tuple[str, str]:
    """(host, "host:port") of a connect() address."""
    if isinstance(address, tuple) and address:
        host = str(address[0])
        port = address[1] if len(address) > 1 else "?"
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return host, shown
    return str(address), str(address)


@contextmanager
def block_network(allowed: AllowedHosts, refuse: Callable[[str, str], str]) -> Iterator[None]:
    """Within: a TCP connection to a host ``allowed`` does not allow raises
    :class:`LiveModelBlockedError` with the message ``refuse(host, "host:port")`` returns."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def check(sock: socket.socket, address: Any) -> None:
        __tracebackhide__ = True
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return
        host, shown = _target(address)
        if not allowed.allows(host):
            raise LiveModelBlockedError(refuse(host, shown))

    def connect(sock: socket.socket, address: Any) -> None:
        __tracebackhide__ = True
        check(sock, address)
        original_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        __tracebackhide__ = True
        check(sock, address)
        return original_connect_ex(sock, address)

    # patching a C method: neither the assignment nor socket's private address type is typed
    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        socket.socket.connect = original_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
