"""The gRPC port listens on every address of HEKA_HOST or the start stops
(service/listen.py): a host name is never half-bound, as gRPC core alone would do when
one of its addresses is taken by another program."""

from __future__ import annotations

import errno
import re
import socket
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from service_helpers import KEY1, ServerProcess

from service import listen
from service.loadtest.local import ServerStartError, stop_all


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


IPV6 = _ipv6_loopback()
needs_ipv6 = pytest.mark.skipif(not IPV6, reason="this machine has no IPv6 loopback (::1) to bind")
each_loopback_taken = pytest.mark.parametrize(
    "taken", ["127.0.0.1", pytest.param("::1", marks=needs_ipv6)], ids=["ipv4-taken", "ipv6-taken"]
)
one_and_two_processes = pytest.mark.parametrize("processes", [1, 2], ids=["1-process", "2-processes"])


def _listener(host: str, port: int = 0, *, reuseport: bool = False) -> socket.socket:
    """Another program's listening socket."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuseport:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen()
    return sock


def _binds(host: str, port: int, *, reuseaddr: bool = True) -> bool:
    """Whether another program's socket (with SO_REUSEADDR, as servers set it, or without)
    can bind ``host:port`` and listen."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1 if reuseaddr else 0)
        try:
            sock.bind((host, port))
        except OSError as exc:
            assert exc.errno == errno.EADDRINUSE, exc
            return False
        sock.listen()
        return True


# -- resolving the host ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", [("127.0.0.1", True)]),
        ("[::1]", [("::1", True)]),
        ("0.0.0.0", [("0.0.0.0", True)]),
        ("[::]", [("::", False)]),
        ("localhost", [("127.0.0.1", False), ("::1", False)]),
        ("LOCALHOST", [("127.0.0.1", False), ("::1", False)]),
    ],
)
def test_a_host_resolves_to_the_addresses_to_bind(host: str, expected: list[tuple[str, bool]]) -> None:
    """Literals bind as given and must bind; the wildcard [::] may fall back to 0.0.0.0;
    localhost is both loopbacks, whichever of them /etc/hosts lists."""
    assert [(a.host, a.required) for a in listen.resolve(host)] == expected


def test_a_name_resolves_through_the_system_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each address once, in the resolver's order."""
    stream, v4, v6 = socket.SOCK_STREAM, socket.AF_INET, socket.AF_INET6
    answers = [
        (v6, stream, 6, "", ("2001:db8::5", 0, 0, 0)),
        (v4, stream, 6, "", ("192.0.2.5", 0)),
        (v4, stream, 6, "", ("192.0.2.5", 0)),  # the same address twice (two protocols)
    ]
    asked: list[Any] = []

    def getaddrinfo(host: str, *_args: Any, **_kwargs: Any) -> list[Any]:
        asked.append(host)
        return answers

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    addresses = listen.resolve("heka.example")
    assert asked == ["heka.example"]
    assert [(a.host, a.required) for a in addresses] == [("2001:db8::5", False), ("192.0.2.5", False)]
    assert [a.target(7) for a in addresses] == ["[2001:db8::5]:7", "192.0.2.5:7"]


def test_a_name_that_does_not_resolve_is_named() -> None:
    with pytest.raises(listen.ListenError, match=r"HEKA_HOST 'no-such-host\.invalid' does not resolve"):
        listen.reserve("no-such-host.invalid", 0)
    with pytest.raises(listen.ListenError, match=r"HEKA_METRICS_HOST 'no-such-host\.invalid' does not"):
        listen.reserve("no-such-host.invalid", 0, what="metrics port", setting="HEKA_METRICS_HOST")


@pytest.mark.parametrize("host", ["", "  ", "[]"])
def test_an_empty_host_is_refused_not_every_address(host: str) -> None:
    """Every address ([::]) is asked for by name: an empty host binds nothing."""
    with pytest.raises(listen.ListenError, match=r"HEKA_HOST is empty: name the address to bind"):
        listen.resolve(host)


# -- reserving one port on every address -------------------------------------------------


@needs_ipv6
def test_port_0_reserves_one_port_on_both_loopbacks() -> None:
    with listen.reserve("localhost", 0) as reservation:
        port = reservation.port
        assert port > 0
        assert reservation.targets == [f"127.0.0.1:{port}", f"[::1]:{port}"]
        # Held, not listening: a bind without SO_REUSEADDR (a program's own, or the port
        # the kernel picks for an outgoing connection) cannot take it before gRPC binds.
        assert not _binds("127.0.0.1", port, reuseaddr=False)
        assert not _binds("::1", port, reuseaddr=False)
    assert _binds("127.0.0.1", port, reuseaddr=False) and _binds("::1", port, reuseaddr=False)  # released


@each_loopback_taken
@pytest.mark.parametrize("shared", [False, True], ids=["one-process", "shared"])
def test_a_port_taken_on_one_address_is_refused_naming_it(taken: str, shared: bool) -> None:
    """Another program listening on one loopback address: the port is refused, with that
    address named, rather than reserved on the other address alone. A shared reservation
    refuses it too, even from a listener that allows SO_REUSEPORT."""
    with _listener(taken, reuseport=True) as other:
        port = other.getsockname()[1]
        named = listen.Address(taken, required=True).target(port)
        with pytest.raises(listen.ListenError, match=re.escape(f"cannot bind gRPC port {named}")):
            listen.reserve("localhost", port, shared=shared)
        free = "::1" if taken == "127.0.0.1" else "127.0.0.1"
        if free == "127.0.0.1" or IPV6:
            assert _binds(free, port)  # nothing left held on the other address


def test_port_0_tries_again_when_its_port_is_taken_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The port the first address got may be held on the second by another program: port 0
    then tries another port, and every socket of the failed try is closed."""
    real_bind = listen._bind
    opened: list[socket.socket] = []
    refused: list[int] = []

    def bind(address: listen.Address, port: int, shared: bool, what: str) -> socket.socket | None:
        if address.host == "::1" and not refused:
            refused.append(port)
            raise listen.ListenError(f"cannot bind gRPC port {address.target(port)}: Address already in use")
        sock = real_bind(address, port, shared, what)
        if sock is not None:
            opened.append(sock)
        return sock

    monkeypatch.setattr(listen, "_bind", bind)
    with listen.reserve("localhost", 0) as reservation:
        assert refused and reservation.port != refused[0]
        assert opened[0].fileno() == -1  # the first try's socket is closed
        assert all(sock.fileno() != -1 for sock in opened[1:])


def test_an_explicit_port_is_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    tries: list[int] = []
    real_try = listen._try

    def counting(
        addresses: list[listen.Address], port: int, shared: bool, what: str
    ) -> listen.Reservation | None:
        tries.append(port)
        return real_try(addresses, port, shared, what)

    monkeypatch.setattr(listen, "_try", counting)
    with _listener("127.0.0.1") as other:
        port = other.getsockname()[1]
        with pytest.raises(listen.ListenError, match=f"127.0.0.1:{port}"):
            listen.reserve("localhost", port)
    assert tries == [port]


def test_an_address_the_machine_lacks_is_left_out_unless_literal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name's address that cannot be bound here (IPv6 disabled) is left out; the
    wildcard [::] falls back to 0.0.0.0; a literal that cannot be bound stops the start."""
    real_socket = socket.socket

    def no_ipv6(family: int = socket.AF_INET, *args: Any, **kwargs: Any) -> socket.socket:
        if family == socket.AF_INET6:
            raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")
        return real_socket(family, *args, **kwargs)

    monkeypatch.setattr(listen.socket, "socket", no_ipv6)
    with listen.reserve("localhost", 0) as reservation:
        assert reservation.targets == [f"127.0.0.1:{reservation.port}"]
    with listen.reserve("[::]", 0) as reservation:
        assert reservation.targets == [f"0.0.0.0:{reservation.port}"]
    with pytest.raises(
        listen.ListenError, match=r"cannot bind gRPC port \[::1\]:0: Address family not supported"
    ):
        listen.reserve("[::1]", 0)


def test_a_shared_reservation_lets_several_processes_bind_the_port() -> None:
    """What the supervisor of several gRPC processes holds: each process binds and listens
    on the port with SO_REUSEPORT; a program without it is refused."""
    with listen.reserve("127.0.0.1", 0, shared=True) as reservation:
        port = reservation.port
        with _listener("127.0.0.1", port, reuseport=True), _listener("127.0.0.1", port, reuseport=True):
            assert not _binds("127.0.0.1", port)


# -- the server ----------------------------------------------------------------------------


@pytest.fixture
def started() -> Iterator[list[ServerProcess]]:
    servers: list[ServerProcess] = []
    yield servers
    stop_all(servers)
    for server in servers:
        server.log_path.unlink(missing_ok=True)


@each_loopback_taken
@one_and_two_processes
def test_heka_serve_refuses_a_port_taken_on_one_loopback(
    started: list[ServerProcess], taken: str, processes: int
) -> None:
    """The default host, localhost, with another program on one loopback address at the
    port: the start stops (exit 2), naming that address, instead of serving on the other
    loopback while clients of the taken one reach the other program."""
    with _listener(taken) as other:
        port = other.getsockname()[1]
        with pytest.raises(ServerStartError, match="exited with 2") as info:
            started.append(
                ServerProcess(
                    ["--grpc-processes", str(processes), "--search-workers", "1", "--port", str(port)],
                    {"HEKA_STATE_KEYS": KEY1},
                )
            )
    named = listen.Address(taken, required=True).target(port)
    assert f"cannot bind gRPC port {named}" in str(info.value)
    assert "Traceback" not in str(info.value)


@needs_ipv6
@one_and_two_processes
def test_heka_serve_on_localhost_answers_on_both_loopbacks(
    started: list[ServerProcess], processes: int
) -> None:
    """The default host listens on 127.0.0.1 and ::1, gRPC and metrics, so that every
    client's localhost reaches it."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    args = ["--grpc-processes", str(processes), "--search-workers", "1"]
    server = ServerProcess(args, {"HEKA_STATE_KEYS": KEY1})
    started.append(server)
    assert server.info["addresses"] == ["127.0.0.1", "[::1]"]
    assert server.info["metrics_addresses"] == ["127.0.0.1", "[::1]"]
    for host in ("127.0.0.1", "[::1]", "localhost"):
        with grpc.insecure_channel(f"{host}:{server.port}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=30)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, host
        url = f"http://{host}:{server.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert b"heka_grpc_server_started_total" in resp.read(), host


@each_loopback_taken
@one_and_two_processes
def test_heka_serve_refuses_a_metrics_port_taken_on_one_loopback(
    started: list[ServerProcess], taken: str, processes: int
) -> None:
    """The metrics endpoint binds the same way: a port taken on one of its addresses stops
    the start (exit 2, the address named, no traceback), with several gRPC processes too."""
    with _listener(taken) as other:
        port = other.getsockname()[1]
        args = ["--grpc-processes", str(processes), "--search-workers", "1", "--metrics-port", str(port)]
        with pytest.raises(ServerStartError, match="exited with 2") as info:
            started.append(ServerProcess(args, {"HEKA_STATE_KEYS": KEY1}))
    named = listen.Address(taken, required=True).target(port)
    assert f"cannot bind metrics port {named}" in str(info.value)
    assert "Traceback" not in str(info.value)
