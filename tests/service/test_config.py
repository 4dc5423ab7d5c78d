"""The settings (service/config.py): environment and flags, bad values refused, limits
carried into gRPC, the CPU limit of a cgroup, and the settings documented and listed by
``heka serve --help``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest

from service import config as cfg

ROOT = Path(__file__).resolve().parents[2]


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
        {"HEKA_MAX_ITERATIONS": "1000001"},  # beyond what a search may hold (ai.mcts_params)
        {"HEKA_MAX_MILLISECONDS": "nan"},
        {"HEKA_MAX_QUEUE_WAIT_SECONDS": "inf"},
        {"HEKA_SHUTDOWN_DELAY_SECONDS": "inf"},
        {"HEKA_MAX_REQUEST_BYTES": "99999999999"},
        {"HEKA_GRPC_PROCESSES": "300"},
        {"HEKA_WORKER_NICE": "50"},
        {"HEKA_PORT": "56101", "HEKA_METRICS_PORT": "56101"},
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
    assert cfg.load(None, {}).metrics_bind_host == "localhost"
    assert cfg.load(None, {"HEKA_HOST": "[::]"}).metrics_bind_host == "[::]"
    assert cfg.load(None, {"HEKA_HOST": "127.0.0.1"}).metrics_bind_host == "127.0.0.1"
    c = cfg.load(None, {"HEKA_HOST": "127.0.0.1", "HEKA_METRICS_HOST": "0.0.0.0"})
    assert c.metrics_bind_host == "0.0.0.0"


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
    settings = (ROOT / "docs" / "reference" / "settings.md").read_text()
    assert cfg.markdown_table() in settings, (
        "docs/reference/settings.md is stale: run `.venv/bin/python scripts/gen_reference.py`"
    )
    doc = (ROOT / "docs" / "operations.md").read_text()
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


def test_new_key_takes_no_setting(capsys: Any) -> None:
    """--new-key prints a key and exits; a setting beside it would be ignored, so it is refused."""
    from service.cli import main

    assert main(["serve", "--new-key", "--port", "-5", "--no-access-log"]) == 2
    assert "heka serve: --new-key prints a key and exits: no --port, --access-log" in capsys.readouterr().err
    assert main(["serve", "--new-key"]) == 0
    assert re.fullmatch(r"k1:[A-Za-z0-9_-]{43}\n", capsys.readouterr().out)


def test_a_metrics_dir_that_is_a_file_is_named_so(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(NotADirectoryError, match="it is a file, not a folder"):
        cfg.prepare_metrics_dir(str(afile))


def test_a_metrics_dir_loses_only_the_metric_files_at_start(tmp_path: Path, monkeypatch: Any) -> None:
    """The folder may hold other files (an application's SQLite *.db): only prometheus_client's
    own files of earlier processes are removed, whatever writes them."""
    monkeypatch.delenv(cfg.MULTIPROC_ENV, raising=False)
    stale = ["counter_12.db", "gauge_livesum_12.db", "gauge_all_7.db", "histogram_3.db", "summary_44.db"]
    kept = ["app.db", "counter.db", "counter_12.db.bak", "notes.txt", "histogram_x.db"]
    for name in stale + kept:
        (tmp_path / name).write_text("x")
    path, created = cfg.prepare_metrics_dir(str(tmp_path))
    assert (path, created) == (str(tmp_path), False)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)
    # The names are prometheus_client's: a counter it writes in this folder is one of them.
    from prometheus_client import values

    value_class = values.MultiProcessValue(process_identifier=lambda: 12)
    value_class("counter", "c", "c", (), (), "help").inc(1)
    value_class("gauge", "g", "g", (), (), "help", multiprocess_mode="livesum").inc(1)
    value_class("histogram", "h", "h", (), (), "help").inc(1)
    written = sorted(p.name for p in tmp_path.iterdir() if p.name not in kept)
    assert written and all(cfg.METRIC_FILE.fullmatch(name) for name in written), written


def test_bad_config_exits_2() -> None:
    from service.cli import main

    assert main(["serve", "--port", "-5"]) == 2
    # A metrics folder that is a file stops the start with a message, not a traceback.
    assert main(["serve", "--port", "0", "--metrics-port", "-1", "--metrics-dir", __file__]) == 2


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


def test_a_key_file_that_cannot_serve_is_refused_naming_it(tmp_path: Any) -> None:
    import base64

    from service.server import load_keys

    key = "k1:" + base64.b64encode(bytes(range(32))).decode()
    good, empty, binary = tmp_path / "good.key", tmp_path / "empty.key", tmp_path / "binary.key"
    good.write_text(key + "\n")
    empty.write_text("\n")
    binary.write_bytes(b"\xbe\xef")
    assert load_keys(cfg.load(None, {"HEKA_STATE_KEYS_FILE": str(good)})).keys
    # A byte-order mark (as Windows editors save UTF-8) is not part of the first key id.
    marked = tmp_path / "marked.key"
    marked.write_bytes(b"\xef\xbb\xbf" + key.encode() + b"\r\n")
    ring = load_keys(cfg.load(None, {"HEKA_STATE_KEYS_FILE": str(marked)}))
    assert ring.keys == load_keys(cfg.load(None, {"HEKA_STATE_KEYS_FILE": str(good)})).keys
    for env, message in [
        ({"HEKA_STATE_KEYS_FILE": str(empty)}, "holds no keys"),
        ({"HEKA_STATE_KEYS_FILE": str(binary)}, "not a text (UTF-8) file"),
        ({"HEKA_STATE_KEYS_FILE": str(tmp_path / "missing.key")}, "cannot read it (No such file"),
        ({"HEKA_STATE_KEYS_FILE": str(tmp_path)}, "is a folder"),
        ({"HEKA_STATE_KEYS_FILE": "/dev/zero"}, "larger than 65,536 bytes"),
        ({"HEKA_STATE_KEYS": key, "HEKA_STATE_KEYS_FILE": str(good)}, "not both"),
    ]:
        with pytest.raises(cfg.ConfigError, match=re.escape(message)):
            load_keys(cfg.load(None, env))
    # A key that does not parse names where it came from.
    garbage = tmp_path / "garbage.key"
    garbage.write_text("garbage\n")
    from service.envelope import KeyConfigError

    for env, message in [
        ({"HEKA_STATE_KEYS": "garbage"}, "HEKA_STATE_KEYS (--state-keys): key 1: each key must be written"),
        (
            {"HEKA_STATE_KEYS_FILE": str(garbage)},
            f"HEKA_STATE_KEYS_FILE (--state-keys-file) {garbage}: key 1: each key must be written",
        ),
        (
            {"HEKA_STATE_KEYS": "k1:***"},
            "HEKA_STATE_KEYS (--state-keys): key 1 ('k1'): secret is not valid base64",
        ),
        ({"HEKA_STATE_KEYS": f"{key},{key}"}, "HEKA_STATE_KEYS (--state-keys): key ids must be distinct"),
    ]:
        with pytest.raises(KeyConfigError, match=re.escape(message)):
            load_keys(cfg.load(None, env))


def test_an_empty_variable_is_unset_and_its_default_applies() -> None:
    """An empty value (a template's unset placeholder) means the default, for numbers and
    switches; a text setting takes the empty string; a malformed number is refused."""
    defaults = cfg.load(None, {})
    empty = cfg.load(None, {"HEKA_PORT": "", "HEKA_ACCESS_LOG": " ", "HEKA_METRICS_HOST": ""})
    assert (empty.port, empty.access_log, empty.metrics_host) == (
        defaults.port,
        defaults.access_log,
        "",
    )
    with pytest.raises(cfg.ConfigError, match="HEKA_PORT='5o051'"):
        cfg.load(None, {"HEKA_PORT": "5o051"})


@pytest.mark.parametrize(
    "setting", [s for s in cfg.SETTINGS if isinstance(s.default, str)], ids=lambda s: s.env
)
def test_text_settings_that_are_not_utf8_are_refused_naming_them(setting: Any) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates: every text setting refuses
    them by name, not with an encoding error of whatever uses it (an address, a path)."""
    with pytest.raises(cfg.ConfigError, match=re.escape(f"{setting.env} ({setting.flag}) is not UTF-8 text")):
        cfg.load(None, {setting.env: "a\udcffb"}).validate()


NUMBER_SETTINGS = [
    s for s in cfg.SETTINGS if isinstance(s.default, int | float) and not isinstance(s.default, bool)
]


@pytest.mark.parametrize("host", ["", " "])
def test_an_empty_host_is_refused_rather_than_every_address(host: str) -> None:
    with pytest.raises(cfg.ConfigError, match=re.escape("HEKA_HOST (--host) is empty: name the address")):
        cfg.load(None, {"HEKA_HOST": host})
    with pytest.raises(cfg.ConfigError, match=re.escape("HEKA_HOST (--host) is empty")):
        cfg.load(argparse.Namespace(host=host), {})


def test_the_metrics_host_in_messages_is_the_variable_it_came_from() -> None:
    assert cfg.load(None, {}).metrics_host_setting == "HEKA_HOST"
    assert cfg.load(None, {"HEKA_METRICS_HOST": "127.0.0.1"}).metrics_host_setting == "HEKA_METRICS_HOST"


@pytest.mark.parametrize("setting", [s for s in cfg.SETTINGS if s.parse is not str], ids=lambda s: s.env)
def test_a_value_that_does_not_parse_names_the_variable_and_what_it_takes(setting: cfg.Setting) -> None:
    """Text in a number or switch variable is refused naming the variable, the kind of value it
    takes and, for a number, its range; never a bare parser message."""
    with pytest.raises(cfg.ConfigError) as info:
        cfg.load(None, {setting.env: "zzz"})
    message = str(info.value)
    kind = "true or false" if isinstance(setting.default, bool) else "a whole number"
    if isinstance(setting.default, float):
        kind = "a number"
    assert message.startswith(f"{setting.env}='zzz': expected {kind}"), message
    if setting.name in cfg.RANGES:
        assert f"({cfg.range_text(setting.name)})" in message, message
    assert "literal" not in message and "could not convert" not in message


@pytest.mark.parametrize(
    "setting", [s for s in cfg.SETTINGS if isinstance(s.default, float)], ids=lambda s: s.env
)
def test_a_number_that_is_not_finite_names_the_setting_and_its_range(setting: cfg.Setting) -> None:
    for value in ("nan", "inf", "-inf"):
        with pytest.raises(cfg.ConfigError) as info:
            cfg.load(None, {setting.env: value})
        message = str(info.value)
        assert message.startswith(f"{setting.env} ({setting.flag})"), message
        assert cfg.range_text(setting.name) in message, message


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"HEKA_ENCRYPT_STATE": "maybe"}, "HEKA_ENCRYPT_STATE='maybe': expected true or false (a retired"),
        ({"HEKA_LOG_LEVEL": "LOUD"}, "HEKA_LOG_LEVEL (--log-level) is 'LOUD': expected DEBUG, INFO"),
    ],
)
def test_a_bad_text_value_names_the_setting_and_its_choices(env: dict[str, str], message: str) -> None:
    with pytest.raises(cfg.ConfigError, match=re.escape(message)):
        cfg.load(None, env)


def test_every_number_setting_has_a_range() -> None:
    assert {s.name for s in NUMBER_SETTINGS} == set(cfg.RANGES)


@pytest.mark.parametrize("setting", NUMBER_SETTINGS, ids=lambda s: s.env)
def test_a_number_outside_its_range_stops_the_start_naming_the_setting(setting: cfg.Setting) -> None:
    """Just outside either end of its range, every number setting is refused with a message
    that names its variable, its flag and the range, never an overflow inside gRPC."""
    low, high = cfg.RANGES[setting.name]
    step = 1 if isinstance(setting.default, int) else 0.5
    for value in (low - step, high + step, 10**15):
        with pytest.raises(cfg.ConfigError) as info:
            cfg.load(None, {setting.env: str(value)})
        message = str(info.value)
        assert f"{setting.env} ({setting.flag})" in message, message


def test_every_setting_at_the_top_of_its_range_starts_a_grpc_server() -> None:
    """The ranges are what gRPC takes: a server with every duration, size and queue at its
    largest starts (an overflow in a channel argument would raise here)."""
    from concurrent import futures

    import grpc

    from service.server import grpc_options

    top = {name: high for name, (_, high) in cfg.RANGES.items()}
    # Ports, processes and threads this machine must really have; the bot calls' caps stay
    # below the grace (which must let the longest one finish).
    for name in (
        "port",
        "metrics_port",
        "grpc_processes",
        "search_workers",
        "grpc_threads",
        "worker_nice",
        "max_milliseconds",
        "max_advance_seconds",
    ):
        top.pop(name)
    c = cfg.load(None, {f"HEKA_{name.upper()}": str(int(v)) for name, v in top.items()})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1), options=grpc_options(c, reuseport=False))
    try:
        assert server.add_insecure_port("127.0.0.1:0") > 0
        server.start()
    finally:
        server.stop(None)


def test_keepalive_is_off_or_no_more_often_than_clients_may_ping() -> None:
    from service.server import grpc_options

    off = dict(grpc_options(cfg.load(None, {"HEKA_KEEPALIVE_SECONDS": "0"}), reuseport=False))
    assert off["grpc.keepalive_time_ms"] == 2**31 - 1  # gRPC's "never"
    ten = dict(grpc_options(cfg.load(None, {"HEKA_KEEPALIVE_SECONDS": "10"}), reuseport=False))
    assert ten["grpc.keepalive_time_ms"] == ten["grpc.http2.min_ping_interval_without_data_ms"] == 10_000
    for storm in ("0.001", "1", "9.5"):
        with pytest.raises(cfg.ConfigError, match=r"must be 0 \(no keepalive pings\) or at least 10 s"):
            cfg.load(None, {"HEKA_KEEPALIVE_SECONDS": storm})
