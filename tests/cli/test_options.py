"""``--option NAME=VALUE`` (arena, simulate, render): typed values, and a bad value refused
by the game naming the option, never a bare parsing error."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from service.cli import main
from service.commands.options import local_server, parse_option_pairs, server_address


@pytest.mark.parametrize(
    ("pair", "value"),
    [
        ("teams=true", True),
        ("teams= False ", False),
        ("n=12", 12),
        ("n=-3", -3),
        ("n=--5", "--5"),  # not an integer: a string, which the game then judges
        ("n=1_000", "1_000"),
        ("n=\u0663", "\u0663"),  # a non-ASCII digit is no integer here
        ("n=-", "-"),
        ("name=aton", "aton"),
    ],
)
def test_option_values_are_typed_strictly(pair: str, value: object) -> None:
    assert parse_option_pairs([pair]) == [(pair.partition("=")[0].strip(), value)]


@pytest.mark.parametrize("value", ["--5", "-0", "1_000", "maybe"])
def test_a_bad_option_value_is_refused_naming_the_option(value: str, capsys: Any) -> None:
    args = ["simulate", "--game", "osirium", "--players", "4", "--option", f"teams={value}", "--games", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "option teams must be true or false" in err, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["train", "--bot", ""], "needs a value, not an empty string"),
        (["train", "--ray", ""], "needs a value, not an empty string"),
        (["play", "--server", ""], "expected HOST:PORT with a port 1..65535"),
    ],
)
def test_an_empty_value_is_an_error_not_the_default(args: list[str], message: str, capsys: Any) -> None:
    """An empty --bot trained with the default bot, an empty --ray or --server played locally."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert f"argument {args[1]}: {message}" in capsys.readouterr().err


def test_a_target_checked_twice_is_refused(capsys: Any) -> None:
    args = [
        "arena",
        "--ladder",
        "--game",
        "aton",
        "--check",
        "ai/ladders/aton-2p.json",
        "--targets",
        "100,200,100",
    ]
    assert main([*args, "--no-progress"]) == 2
    assert "--targets names 100 twice" in capsys.readouterr().err


@pytest.mark.parametrize(
    "target",
    ["127.0.0.1:50051", "[::1]:1", "localhost:65535", "heka.example:443", "dns:///heka:50051", "unix:/tmp/s"],
)
def test_a_server_address_is_host_and_port_or_a_grpc_target(target: str) -> None:
    assert server_address(target) == target


@pytest.mark.parametrize(
    "target",
    ["", "  ", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1", "::1:50051", "[::1]", ":50051",
     "heka:abc", "heka:５０"],
)  # fmt: skip
def test_a_server_address_without_a_port_1_to_65535_is_refused(target: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected HOST:PORT with a port 1\.\.65535"):
        server_address(target)


def test_the_clients_default_server_follows_heka_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """heka health and loadtest call the server heka serve starts on the same settings."""
    monkeypatch.delenv("HEKA_PORT", raising=False)
    assert local_server("127.0.0.1") == "127.0.0.1:50051"
    monkeypatch.setenv("HEKA_PORT", "50999")
    assert local_server("localhost") == "localhost:50999"
    monkeypatch.setenv("HEKA_PORT", "99999")
    with pytest.raises(ValueError, match=r"HEKA_PORT='99999': expected a port 1\.\.65535 \(or --target\)"):
        local_server("127.0.0.1")


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["health", "--target", "127.0.0.1:1", "--service", "\udcff"], "--service"),
        (["health", "--target", "h\udcff:5005"], "--target"),
        (["loadtest", "--target", "h\udcff:5005", "--duration", "1s"], "--target"),
        (["play", "--server", "h\udcff:5005"], "--server"),
        (
            ["health", "--target", "127.0.0.1:1", "--tls-ca", "ca.pem", "--tls-server-name", "x\udcff"],
            "--tls-server-name",
        ),
    ],
    ids=["health-service", "health-target", "loadtest-target", "play-server", "tls-server-name"],
)
def test_text_that_is_not_utf8_is_refused_naming_the_flag(args: list[str], flag: str, capsys: Any) -> None:
    """Bytes that are not UTF-8 reach argv as lone surrogates: a value sent on the wire with one
    raised UnicodeEncodeError with a traceback (exit 1, which `heka health` means as NOT_SERVING)."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and "not UTF-8 text" in err and "Traceback" not in err
