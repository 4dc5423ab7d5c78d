"""Unit tests without a server: envelope, configuration, generated code, docs, remote play."""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from service_helpers import KEY1, KEY2, ServerProcess

from service import config as cfg
from service import protogen
from service.envelope import KeyConfigError, KeyRing, TokenError, new_secret_spec, parse_keys

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------------------
# Envelope
# ---------------------------------------------------------------------------------------


def test_seal_open_round_trip_plain_and_encrypted() -> None:
    for encrypt in (False, True):
        ring = KeyRing(parse_keys(KEY1), encrypt=encrypt)
        token = ring.seal("aton:1:some-state")
        opened = ring.open(token)
        assert opened.serialized == "aton:1:some-state"
        assert opened.key_id == "k1" and opened.encrypted == encrypt and opened.version == 2


def test_tokens_are_sealed_by_default_and_hold_no_readable_text() -> None:
    """Issue 12: a KeyRing encrypts unless told otherwise; two seals of one text differ
    (a fresh salt, so a fresh key, per token) and neither shows the text."""
    ring = KeyRing(parse_keys(KEY1))
    assert ring.encrypt
    text = "aton:2:r=1;hands=1234,4321"
    a, b = ring.seal(text), ring.seal(text)
    assert a != b and ring.open(a).serialized == ring.open(b).serialized == text
    for token in (a, b):
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        assert b"aton" not in raw and b"1234" not in raw
        assert ring.open(token).encrypted


def _v1_token(ring: KeyRing, text: str, *, encrypt: bool) -> str:
    """A token as the previous release sealed it (envelope version 1: encrypt-then-MAC)."""
    import hashlib
    import hmac
    import os

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = ring.signing
    kid = key.key_id.encode()
    header = b"HK" + bytes((1, 1 if encrypt else 0, len(kid))) + kid
    body = text.encode()
    if encrypt:
        nonce = os.urandom(12)
        body = nonce + AESGCM(key.enc_key).encrypt(nonce, body, header)
    tag = hmac.new(key.mac_key, header + body, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(header + body + tag).rstrip(b"=").decode()


def test_compatibility_mode_seals_the_previous_envelope() -> None:
    """During a rolling upgrade (previous_state_versions) the server seals envelope version 1,
    the only one the previous release opens; encrypted all the same."""
    from service.config import Config
    from service.server import load_keys

    ring = load_keys(Config(state_keys=KEY1, previous_state_versions=True))
    token = ring.seal("osirium:2:abc")
    opened = ring.open(token)
    assert (opened.version, opened.encrypted, opened.serialized) == (1, True, "osirium:2:abc")
    assert token.startswith(_v1_token(ring, "x", encrypt=True)[:4])  # "HK", 1, flags
    assert load_keys(Config(state_keys=KEY1)).open(token).serialized == "osirium:2:abc"
    assert load_keys(Config(state_keys=KEY1)).version == 2


def test_tokens_of_the_previous_release_still_open() -> None:
    ring = KeyRing(parse_keys(KEY1))
    for encrypt in (False, True):
        old = _v1_token(ring, "osirium:2:abc", encrypt=encrypt)
        opened = ring.open(old)
        assert (opened.serialized, opened.version, opened.encrypted) == ("osirium:2:abc", 1, encrypt)
        raw = bytearray(base64.urlsafe_b64decode(old + "=" * (-len(old) % 4)))
        raw[-40] ^= 1
        with pytest.raises(TokenError):
            ring.open(base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode())


def test_every_single_bit_flip_is_refused() -> None:
    ring = KeyRing(parse_keys(KEY1), encrypt=True)
    token = ring.seal("osirium:1:xyz")
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    for i in range(len(raw)):
        for bit in (0x01, 0x80):
            bad = bytearray(raw)
            bad[i] ^= bit
            with pytest.raises(TokenError):
                ring.open(base64.urlsafe_b64encode(bytes(bad)).rstrip(b"=").decode())


def test_every_truncation_is_refused() -> None:
    ring = KeyRing(parse_keys(KEY1))
    token = ring.seal("aton:1:abc")
    for n in range(len(token)):
        with pytest.raises(TokenError):
            ring.open(token[:n])


def test_tokens_outside_base64url_are_refused() -> None:
    """A token is base64url without padding: the standard alphabet's '+' and '/', padding,
    whitespace and anything else are refused, each with the message saying so."""
    ring = KeyRing(parse_keys(KEY1))
    token = ring.seal("aton:1:abc")
    assert ring.open(token).serialized == "aton:1:abc"
    for bad in (
        token[:-4] + "+" + token[-3:],
        token[:-4] + "/" + token[-3:],
        token[:-4] + "=" + token[-3:],
        token[:8] + " " + token[9:],
        token[:8] + "\n" + token[9:],
        token[:8] + "é" + token[9:],
        token + "=" * (-len(token) % 4 or 4),
    ):
        with pytest.raises(TokenError, match=r"not valid base64url text \(A-Z a-z 0-9 - _, no padding\)"):
            ring.open(bad)
    # A trailing line break (which a regular expression's `$` lets through) leaves the text
    # one character off the length its bytes need.
    with pytest.raises(TokenError, match="not valid base64url text"):
        ring.open(token + "\n")


def test_rotation_signs_with_first_key_and_verifies_all() -> None:
    old = KeyRing(parse_keys(KEY1))
    rotated = KeyRing(parse_keys(f"{KEY2},{KEY1}"))
    assert rotated.open(old.seal("a:1:x")).key_id == "k1"
    new_token = rotated.seal("a:1:x")
    assert rotated.open(new_token).key_id == "k2"
    with pytest.raises(TokenError, match="unknown to this server"):
        old.open(new_token)


def test_same_key_id_different_secret_is_refused() -> None:
    a = KeyRing(parse_keys(KEY1))
    b = KeyRing(parse_keys("k1:" + base64.b64encode(b"another secret of 32 bytes......").decode()))
    with pytest.raises(TokenError, match="integrity check"):
        b.open(a.seal("a:1:x"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "key_id:base64_secret"),
        ("k1:c2hvcnQ", "at least 16"),
        ("k1:***", "not valid base64"),
        ("bad id:" + base64.b64encode(b"x" * 32).decode(), "bad key id"),
        (f"{KEY1},{KEY1}", "distinct"),
    ],
)
def test_bad_key_specs(spec: str, message: str) -> None:
    with pytest.raises(KeyConfigError, match=message):
        KeyRing(parse_keys(spec))


def test_a_token_longer_than_the_bound_is_refused_before_decoding() -> None:
    from service.envelope import MAX_TOKEN_CHARS

    ring = KeyRing(parse_keys(KEY1))
    with pytest.raises(TokenError, match=f"{MAX_TOKEN_CHARS + 1} characters long"):
        ring.open("A" * (MAX_TOKEN_CHARS + 1))
    with pytest.raises(TokenError, match="not a heka state token"):  # at the bound: decoded
        ring.open("A" * MAX_TOKEN_CHARS)
    long_state = "aton:1:" + "x" * 5000  # a token of ~6,900 characters is still accepted
    assert ring.open(ring.seal(long_state)).serialized == long_state


def test_new_secret_spec_parses() -> None:
    (key,) = parse_keys(new_secret_spec("fresh"))
    assert key.key_id == "fresh"


# ---------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------


def test_config_from_env_and_flags() -> None:
    parser = argparse.ArgumentParser()
    cfg.add_arguments(parser)
    env = {
        "HEKA_PORT": "6000",
        "HEKA_METRICS_PORT": "9999",
        "HEKA_INSECURE_PLAINTEXT_TOKENS": "true",
        "HEKA_SEARCH_WORKERS": "3",
    }
    c = cfg.load(parser.parse_args([]), env)
    assert (c.port, c.metrics_port, c.insecure_plaintext_tokens, c.workers, c.search_capacity) == (
        6000,
        9999,
        True,
        3,
        3,
    )
    c = cfg.load(parser.parse_args(["--port", "7000", "--no-insecure-plaintext-tokens"]), env)
    assert (c.port, c.insecure_plaintext_tokens) == (7000, False)
    assert cfg.load(parser.parse_args([]), {}).insecure_plaintext_tokens is False
    assert cfg.load(parser.parse_args([]), {}).port == 50051
    assert cfg.load(parser.parse_args([]), {}).metrics_port == 9095


@pytest.mark.parametrize(
    "env",
    [
        {"HEKA_PORT": "x"},
        {"HEKA_PORT": "70000"},
        {"HEKA_INSECURE_PLAINTEXT_TOKENS": "maybe"},
        {"HEKA_ENCRYPT_STATE": "false"},  # retired: asked for readable tokens
        {"HEKA_MAX_ADVANCE_SECONDS": "0"},
        {"HEKA_MAX_ITERATIONS": "0"},
        {"HEKA_LOG_LEVEL": "LOUD"},
    ],
)
def test_bad_config_values(env: dict[str, str]) -> None:
    with pytest.raises(cfg.ConfigError):
        cfg.load(None, env)


@pytest.mark.parametrize(
    "env",
    [
        {"HEKA_MAX_REQUEST_BYTES": "0"},
        {"HEKA_MAX_CONCURRENT_RPCS": "-1"},
        {"HEKA_MAX_QUEUED_RPCS": "0"},
    ],
)
def test_bad_limits(env: dict[str, str]) -> None:
    with pytest.raises(cfg.ConfigError):
        cfg.load(None, env)


def test_the_metrics_host_defaults_to_the_grpc_host() -> None:
    assert cfg.load(None, {}).metrics_bind_host == "[::]"
    assert cfg.load(None, {"HEKA_HOST": "127.0.0.1"}).metrics_bind_host == "127.0.0.1"
    c = cfg.load(None, {"HEKA_HOST": "127.0.0.1", "HEKA_METRICS_HOST": "0.0.0.0"})
    assert c.metrics_bind_host == "0.0.0.0"


def test_metrics_bind_address_of_grpc_hosts() -> None:
    from service.metrics import bind_address

    assert bind_address("[::]") == "::"
    assert bind_address("[::1]") == "::1"
    assert bind_address("127.0.0.1") == "127.0.0.1"
    assert bind_address("localhost") == "localhost"
    assert bind_address("") == "0.0.0.0"


def test_grpc_options_carry_the_limits() -> None:
    from service.server import grpc_options

    c = cfg.load(None, {"HEKA_MAX_REQUEST_BYTES": "32768", "HEKA_MAX_QUEUED_RPCS": "5000"})
    options = dict(grpc_options(c, reuseport=False))
    assert options["grpc.max_receive_message_length"] == 32768
    assert options["grpc.max_send_message_length"] == 4 * 1024 * 1024
    assert options["grpc.server.max_pending_requests"] == 5000
    assert options["grpc.server.max_pending_requests_hard_limit"] == 5000
    assert options["grpc.http2.bdp_probe"] == 0


def test_every_setting_is_named_after_its_field_and_parses_its_own_default() -> None:
    """The settings are Config's fields (one declaration): each variable is HEKA_ and the
    field's name, and the parser its type gives reads the default written as text back
    (what an operator writes in the environment)."""
    for s in cfg.SETTINGS:
        assert s.env == "HEKA_" + s.name.upper(), s.name
        written = ("true" if s.default else "false") if isinstance(s.default, bool) else str(s.default)
        assert s.parse(written) == s.default, s.name
        assert s.help.endswith(".") or s.help.endswith(")"), s.name


def test_docs_list_every_setting_and_metric() -> None:
    doc = (ROOT / "docs" / "api.md").read_text()
    assert cfg.markdown_table() in doc, (
        "docs/api.md config table is stale: paste service.config.markdown_table()"
    )
    # every metric family service/metrics.py defines is documented (the list itself is the
    # deployment contract, pinned in tests/deploy/test_deploy_manifests.py)
    source = (ROOT / "service" / "metrics.py").read_text()
    defined = re.findall(r"(?:Counter|Gauge|Histogram|Summary)\(\s*\"(heka_[a-z_]+)\"", source)
    assert len(defined) >= 12
    for name in defined:
        assert name in doc, name


def test_serve_help_lists_every_flag(capsys: Any) -> None:
    from service.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for s in cfg.SETTINGS:
        assert s.flag in out and s.env in out


def test_bad_config_exits_2() -> None:
    from service.cli import main

    assert main(["serve", "--port", "-5"]) == 2


# ---------------------------------------------------------------------------------------
# Generated code
# ---------------------------------------------------------------------------------------


def test_generated_code_matches_proto() -> None:
    """Regenerating service/gen from proto/ changes nothing (run `make proto` if this fails)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "gen"
        protogen.generate(out)
        assert protogen.differences(out, protogen.GEN_ROOT) == []


def test_every_proto_field_and_enum_value_is_documented() -> None:
    """buf style: every message field, enum value and RPC carries a comment."""
    for path in protogen.proto_files():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            s = line.strip()
            declares = s.startswith("rpc ") or (
                s.endswith(";") and "=" in s and not s.startswith(("option", "syntax", "//"))
            )
            if declares:
                assert lines[i - 1].strip().startswith("//"), f"{path.name}:{i + 1} undocumented: {s}"
            if s.startswith("enum "):
                assert lines[i + 2].strip().endswith("_UNSPECIFIED = 0;"), f"{path.name}:{i + 1}: {s}"


# ---------------------------------------------------------------------------------------
# heka play --server
# ---------------------------------------------------------------------------------------


def test_remote_play_plays_a_game_to_the_end(server: ServerProcess) -> None:
    from service.remote_play import run_remote

    args = argparse.Namespace(
        server=server.address, game="aton", players=None, seat=1, bots="greedy", seed=4, teams=False
    )
    out = io.StringIO()
    code = run_remote(args, inp=io.StringIO("help\n" + "1\n" * 400), out=out)
    text = out.getvalue()
    assert code == 0
    assert "=== game over ===" in text
    assert "seat 0 (greedy)" in text


def test_remote_play_bot_settings() -> None:
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.remote_play import bot_settings

    assert bot_settings("mcts:hard").difficulty == pb.DIFFICULTY_HARD
    assert bot_settings("mcts:expert").difficulty == pb.DIFFICULTY_EXPERT
    s = bot_settings("mcts:iterations=50,ms=20,workers=2")
    assert (s.budget.iterations, s.budget.milliseconds, s.workers) == (50, 20.0, 2)
    assert bot_settings("greedy").kind == pb.BOT_KIND_GREEDY
    with pytest.raises(ValueError):
        bot_settings("alphazero")


def test_the_expert_difficulty_is_the_expert_preset() -> None:
    """DIFFICULTY_EXPERT: the mcts:expert spec (learned evaluation) with its preset budget."""
    from ai.mcts_params import parse_params
    from ai.presets import PRESETS
    from service.bots import bot_plan
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb

    config = Config()
    plan = bot_plan(pb.BotSettings(difficulty=pb.DIFFICULTY_EXPERT, seed=1), "bot", config)
    assert (plan.spec, plan.label) == ("mcts:expert", "mcts:expert")
    assert plan.iterations == PRESETS["expert"].iterations
    assert parse_params(plan.spec.partition(":")[2])[1].evaluation == "learned"


def test_state_cache_is_a_bounded_lru() -> None:
    from engine.registry import get_game
    from service.statecache import StateCache

    states = [get_game("aton").new_initial_state(2, seed=i) for i in range(3)]
    texts = [s.serialize() for s in states]
    cache = StateCache(2)
    cache.put("a", states[0], texts[0])
    cache.put("b", states[1], texts[1])
    assert cache.get("a") == (states[0], texts[0])  # "a" is now the most recent
    cache.put("c", states[2], texts[2])
    assert cache.get("b") is None and cache.get("a") == (states[0], texts[0]) and len(cache) == 2
    off = StateCache(0)
    off.put("a", states[0], texts[0])
    assert off.get("a") is None


def test_apply_action_caches_the_token_it_decoded_and_never_changes_the_cached_state() -> None:
    # A token another process issued: its first ApplyAction here decodes it and caches the
    # decoded state; the action is applied to a copy, so the cached state (and any answer
    # built from it later) is still the token's.
    from engine.registry import get_game
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService

    keys = KeyRing.ephemeral_ring()
    service = GameService(Config(), keys, None)  # type: ignore[arg-type]
    state = get_game("osirium").new_initial_state(3, seed=4)
    body = state.serialize()
    token = keys.seal(body)
    request = pb.ApplyActionRequest(
        state=token, action_id=state.legal_actions()[0], player=state.current_player()
    )
    context: Any = None
    assert service.states.get(token) is None
    first = service.ApplyAction(request, context)
    entry = service.states.get(token)
    assert entry is not None and entry[1] == body
    cached = entry[0]
    assert cached.serialize() == body
    second = service.ApplyAction(request, context)  # served from the cache
    assert service.states.get(token) == (cached, body) and cached.serialize() == body
    assert keys.open(first.state).serialized == keys.open(second.state).serialized != body
    assert list(first.events) == list(second.events)


# --- asyncio bridge ----------------------------------------------------------------------


class _FakeAioContext:
    def __init__(self, remaining: float | None) -> None:
        self.remaining = remaining
        self.done_callbacks: list[Any] = []

    def time_remaining(self) -> float | None:
        return self.remaining

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def add_done_callback(self, callback: Any) -> None:
        self.done_callbacks.append(callback)


def test_thread_context_runs_callbacks_when_the_call_ends() -> None:
    from service.asyncio_bridge import ThreadContext

    aio = _FakeAioContext(remaining=5.0)
    ctx = ThreadContext(aio)
    assert ctx.is_active() and ctx.peer() == "ipv4:127.0.0.1:1"
    remaining = ctx.time_remaining()
    assert remaining is not None and 4.0 < remaining <= 5.0
    fired: list[str] = []
    assert ctx.add_callback(lambda: fired.append("cancel search"))
    for callback in aio.done_callbacks:  # the call ends (done, cancelled or disconnected)
        callback(aio)
    assert fired == ["cancel search"] and not ctx.is_active()
    assert not ctx.add_callback(lambda: fired.append("too late"))  # the caller cancels itself
    assert fired == ["cancel search"]
    assert ThreadContext(_FakeAioContext(remaining=None)).time_remaining() is None


def test_async_service_runs_bot_calls_on_the_pool_and_cheap_calls_inline() -> None:
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from service.asyncio_bridge import BLOCKING, METHODS, SOMETIMES_BLOCKING, AsyncGameService, searches
    from service.gen.heka.v1 import game_service_pb2 as pb

    seen: list[tuple[str, str]] = []

    entered: list[str] = []

    class Recorder:
        def enter_queue(self, _context: Any) -> None:
            """A searching bot call takes its place in the queue on the loop, first."""
            entered.append(threading.current_thread().name)

        def __getattr__(self, name: str) -> Any:
            def method(_request: Any, _context: Any) -> str:
                seen.append((name, threading.current_thread().name))
                return name

            return method

    searching = [pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_MCTS))]
    random_only = [pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM))]
    requests: list[tuple[str, Any, bool]] = []  # (method, request, runs on the pool)
    for m in METHODS:
        request = getattr(pb, f"{m}Request")()
        requests.append((m, request, m in BLOCKING))
        if m in SOMETIMES_BLOCKING:  # with bots: on the pool only when a bot searches
            requests.append((m, getattr(pb, f"{m}Request")(bots=searching), True))
            requests.append((m, getattr(pb, f"{m}Request")(bots=random_only), False))
    with ThreadPoolExecutor(1, thread_name_prefix="bot-call") as pool:
        service = AsyncGameService(Recorder(), pool)  # type: ignore[arg-type]

        async def call_all() -> list[str]:
            return [await getattr(service, m)(r, _FakeAioContext(None)) for m, r, _ in requests]

        results = asyncio.run(call_all())
    assert results == [m for m, _, _ in requests]
    assert set(METHODS) >= BLOCKING | SOMETIMES_BLOCKING
    assert [thread.startswith("bot-call") for _, thread in seen] == [pooled for _, _, pooled in requests]
    # Every searching bot call entered the queue, on the event loop, not on the pool.
    # BotMove's default kind is MCTS (it searches); AdvanceBots without bots does not.
    searching_calls = [
        m for m, r, _ in requests if m == "BotMove" or (m in SOMETIMES_BLOCKING and searches(r))
    ]
    assert sorted(searching_calls) == ["ApplyAction", "BotMove", "CreateGame"]
    assert len(entered) == 3 and not any(t.startswith("bot-call") for t in entered)


@pytest.mark.parametrize(
    ("files", "limit"),
    [
        ({"cpu.max": "200000 100000\n"}, 2.0),
        ({"cpu.max": "150000 100000\n"}, 1.5),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
        ({"cpu.max": "garbage\n"}, None),
    ],
)
def test_cgroup_cpu_limit_reads_v2_and_v1(tmp_path: Any, files: dict[str, str], limit: float | None) -> None:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert cfg.cgroup_cpu_limit(str(tmp_path)) == limit


def test_auto_search_workers_follow_the_cgroup_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cfg, "cgroup_cpu_limit", lambda: 1.5)
    monkeypatch.setattr(cfg.os, "sched_getaffinity", lambda _pid: set(range(16)))
    assert cfg._cpus() == 2  # a 1.5-CPU pod on a 16-CPU node: 2 workers, not 16
    monkeypatch.setattr(cfg, "cgroup_cpu_limit", lambda: None)
    assert cfg._cpus() == 16


# --- interceptor: request decoding and the cap on concurrent calls -----------------------


def test_interceptor_decodes_refuses_garbage_and_counts_calls_until_their_task_ends() -> None:
    import asyncio

    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.interceptors import ServerInterceptor, _Refused

    interceptor = ServerInterceptor(access_log_enabled=False, max_concurrent_rpcs=2)
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, _context: request, request_deserializer=pb.GetViewRequest.FromString
    )
    deserialize = interceptor._deserializer("/heka.v1.GameService/GetView", handler, limited=True)
    body = pb.GetViewRequest(state="abc").SerializeToString()

    async def main() -> list[Any]:
        release = asyncio.Event()

        async def call(raw: bytes) -> Any:
            request = deserialize(raw)
            await release.wait()
            return request

        async def quick(raw: bytes) -> Any:
            return deserialize(raw)

        first = [asyncio.create_task(call(body)) for _ in range(2)]
        await asyncio.sleep(0)
        assert interceptor.active == 2
        over = await asyncio.create_task(quick(body))  # a third call
        first[1].cancel()  # a cancelled call frees its slot too
        await asyncio.gather(first[1], return_exceptions=True)
        await asyncio.sleep(0)
        assert interceptor.active == 1
        garbage = await asyncio.create_task(quick(b"\xff\xff\xff"))
        await asyncio.sleep(0)
        assert interceptor.active == 1  # the garbage call was counted until its task ended
        release.set()
        done = await first[0]
        await asyncio.sleep(0)
        return [over, garbage, done]

    over, garbage, done = asyncio.run(main())
    assert isinstance(over, _Refused) and over.error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over.error.reason == "overloaded" and over.error.retry_after == 0.25
    assert isinstance(garbage, _Refused) and garbage.error.reason == "bad_request_body"
    assert garbage.error.field == "" and "heka.v1.GetViewRequest" in garbage.error.message
    assert done == pb.GetViewRequest(state="abc")
    assert interceptor.active == 0


def test_retry_hints_carry_a_quota_failure_only_for_resource_exhausted() -> None:
    """A dead worker (UNAVAILABLE) says when to retry, but no quota failed; a full capacity
    (RESOURCE_EXHAUSTED) says both."""
    import grpc
    from google.rpc import error_details_pb2, status_pb2

    from service.errors import ServiceError, resource_exhausted

    def kinds(err: ServiceError) -> set[str]:
        proto = err.to_status()
        trailers = dict(proto.trailing_metadata)
        decoded = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
        names = set()
        for detail in decoded.details:
            for cls in (
                error_details_pb2.RetryInfo,
                error_details_pb2.QuotaFailure,
                error_details_pb2.ErrorInfo,
            ):
                if detail.Is(cls.DESCRIPTOR):
                    names.add(cls.__name__)
        return names

    dead = ServiceError(
        grpc.StatusCode.UNAVAILABLE, "a search worker died", reason="worker_died", retry_after=0.5
    )
    assert kinds(dead) == {"ErrorInfo", "RetryInfo"}
    assert kinds(resource_exhausted("busy", "capacity")) == {"ErrorInfo", "RetryInfo", "QuotaFailure"}


def test_a_bot_move_encodes_once_and_its_worker_decodes_without_checking_again(monkeypatch: Any) -> None:
    """Issue 14: one BotMove with apply opens its token once, hands the worker the token's
    own text (no encoding for the job) which the worker parses without checking again, and
    encodes once, for the new token. Issue 15: the server does not check it either: the
    token is of the current envelope version, so its tag proves a server of this release
    sealed it (the next test: earlier envelopes are checked)."""
    from engine.aton.game import AtonGame
    from engine.registry import get_game
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService
    from service.workers import SearchResult, run_search

    counts = {"encode": 0, "decode": 0, "checked": 0}
    real_serialize, real_deserialize = AtonGame.serialize_state, AtonGame.deserialize_state

    def serialize(self: Any, state: Any, *, version: int | None = None) -> str:
        counts["encode"] += 1
        return real_serialize(self, state, version=version)

    def deserialize(self: Any, data: str, *, validate: bool = True) -> Any:
        counts["decode"] += 1
        counts["checked"] += validate
        return real_deserialize(self, data, validate=validate)

    monkeypatch.setattr(AtonGame, "serialize_state", serialize)
    monkeypatch.setattr(AtonGame, "deserialize_state", deserialize)

    class InlinePool:  # the worker's own function, in this process
        def run(self, job: Any, timeout: float) -> SearchResult:
            return run_search(job)

    class Context:
        def time_remaining(self) -> None:
            return None

    keys = KeyRing.ephemeral_ring()
    service = GameService(Config(state_cache_size=0), keys, InlinePool())  # type: ignore[arg-type]
    token = keys.seal(real_serialize(get_game("aton"), get_game("aton").new_initial_state(2, seed=6)))
    counts.update(encode=0, decode=0, checked=0)
    bot = pb.BotSettings(kind=pb.BOT_KIND_GREEDY, seed=1)
    service._slot = lambda *_: contextlib.nullcontext()  # type: ignore[method-assign]
    resp = service.BotMove(pb.BotMoveRequest(state=token, bot=bot, apply=True), Context())
    assert resp.state and resp.action.text
    assert counts == {"encode": 1, "decode": 2, "checked": 0}


def _decode_counts(monkeypatch: Any) -> dict[str, int]:
    """Count the decodings of Aton and Osirium states, and those that check the invariants."""
    from engine.aton.game import AtonGame
    from engine.osirium.game import OsiriumGame

    counts = {"decode": 0, "checked": 0}
    for cls in (AtonGame, OsiriumGame):
        real = cls.deserialize_state

        def deserialize(self: Any, data: str, *, validate: bool = True, real: Any = real) -> Any:
            counts["decode"] += 1
            counts["checked"] += validate
            return real(self, data, validate=validate)

        monkeypatch.setattr(cls, "deserialize_state", deserialize)
    return counts


@pytest.mark.parametrize(("game", "players"), [("aton", 2), ("osirium", 3)])
def test_only_tokens_of_an_earlier_envelope_version_are_checked_again(
    monkeypatch: Any, game: str, players: int
) -> None:
    """Issue 15 (per-call budget): a token of this envelope version holds a state this release
    wrote (no one without the key can seal one), so opening it parses the text strictly and
    skips the invariant checks; a token of the previous envelope version (a server of the
    previous release, or one in compatibility mode) is checked in full, and so is a state of
    an earlier state version in any token (the codecs: tests/engine)."""
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService

    keys = KeyRing.ephemeral_ring()
    service = GameService(Config(state_cache_size=0), keys, None)  # type: ignore[arg-type]
    created = service.CreateGame(pb.CreateGameRequest(game=game, num_players=players, seed=3), None)
    current_token = created.state
    previous_token = KeyRing(keys.keys, version=1).seal(keys.open(current_token).serialized)
    counts = _decode_counts(monkeypatch)
    seat = created.status.current_player
    for token, checked in ((current_token, 0), (previous_token, 1)):
        counts.update(decode=0, checked=0)
        legal = service.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=seat), None)
        assert counts == {"decode": 1, "checked": checked}
        counts.update(decode=0, checked=0)
        service.ApplyAction(
            pb.ApplyActionRequest(state=token, action_id=legal.actions[0].id, player=seat), None
        )
        assert counts == {"decode": 1, "checked": checked}
