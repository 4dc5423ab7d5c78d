"""The reflection-driven fuzzer (bench/fuzz_service.py), small and seeded, against a real
server: no request body, however broken, is answered UNKNOWN or INTERNAL."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from service_helpers import KEY1, ServerProcess

FUZZER = Path(__file__).resolve().parents[2] / "bench" / "fuzz_service.py"


@pytest.fixture(scope="module")
def fuzzer() -> Any:
    spec = importlib.util.spec_from_file_location("heka_fuzz_service", FUZZER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [11, 12])
def test_the_fuzzer_finds_no_unknown_or_internal(start_server: Any, fuzzer: Any, seed: int) -> None:
    server: ServerProcess = start_server(
        "--search-workers",
        "1",
        "--trusted-decode",  # DecodeState too
        "--max-iterations",
        "300",
        "--max-milliseconds",
        "300",
        "--max-advance-moves",
        "30",
        HEKA_STATE_KEYS=KEY1,
    )
    methods = fuzzer.discover(server.channel)
    names = {m.path for m in methods}
    assert "/heka.v1.GameService/ApplyAction" in names and "/grpc.health.v1.Health/Check" in names
    tokens = fuzzer.real_tokens(server.channel, methods)
    assert len(tokens) == 4
    report = fuzzer.run(
        server.channel, methods, seed=seed, calls_per_method=30, seconds=120, timeout=3.0, tokens=tokens
    )
    assert report.calls == 30 * len(methods), "stopped at the time limit"
    assert report.failed == 0, report.failures
    seen = {code for counter in report.codes.values() for code in counter}
    assert {"OK", "INVALID_ARGUMENT"} <= seen
    assert "CANCELLED" not in seen
    assert not [line for line in server.log_lines() if line.get("level") == "error"]
    assert server.stop() == 0


def test_the_fuzzer_is_reproducible(fuzzer: Any) -> None:
    """The same seed builds the same bodies."""
    from service.gen.heka.v1 import game_service_pb2 as pb

    method = fuzzer.Method("heka.v1.GameService", "AdvanceBots", pb.AdvanceBotsRequest, None, False, False)

    def bodies(seed: int) -> list[bytes]:
        import random

        gen = fuzzer.Generator(random.Random(seed), ["QUJD"])
        return [gen.body(method, kind) for kind in fuzzer.KINDS for _ in range(20)]

    assert bodies(5) == bodies(5)
    assert bodies(5) != bodies(6)


def test_the_fuzzer_reports_unknown_answers(fuzzer: Any) -> None:
    """Against a server whose handler raises (gRPC answers UNKNOWN), every call is a failure."""
    from concurrent import futures

    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb

    def broken(_request: Any, _context: Any) -> Any:
        raise RuntimeError("a bug")

    handler = grpc.method_handlers_generic_handler(
        "heka.v1.GameService", {"ListGames": grpc.unary_unary_rpc_method_handler(broken)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            method = fuzzer.Method(
                "heka.v1.GameService", "ListGames", pb.ListGamesRequest, pb.ListGamesResponse, False, False
            )
            report = fuzzer.run(
                channel, [method], seed=1, calls_per_method=10, seconds=60, timeout=5.0, tokens=[]
            )
    finally:
        server.stop(None)
    assert report.calls == 10 and report.failed == 10
    assert report.failures[0].startswith("UNKNOWN from /heka.v1.GameService/ListGames on call 0")
