"""``heka replay`` deals a game exactly as a server did (docs/security.md: replays need the key)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from service_helpers import KEY1, KEY2

from service.cli import main
from service.config import Config
from service.envelope import KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb
from service.servicer import GameService


def _play(server: GameService, request: pb.CreateGameRequest, moves: int) -> tuple[list[int], str]:
    """Random moves through the servicer (in process); the action ids and the last token."""
    ctx: Any = None  # cheap calls do not use their context
    rng = random.Random(5)
    created = server.CreateGame(request, ctx)
    token, status, actions = created.state, created.status, []
    for _ in range(moves):
        if status.is_over:
            break
        listed = server.ListLegalActions(
            pb.ListLegalActionsRequest(state=token, viewer=status.current_player), ctx
        )
        actions.append(rng.choice(list(listed.actions)).id)
        applied = server.ApplyAction(
            pb.ApplyActionRequest(state=token, action_id=actions[-1], player=status.current_player), ctx
        )
        token, status = applied.state, applied.status
    return actions, token


@pytest.mark.parametrize("previous", [False, True])
def test_replay_deals_the_servers_game_and_reaches_its_state(
    tmp_path: Path, capsys: Any, monkeypatch: Any, previous: bool
) -> None:
    keys = KeyRing(parse_keys(f"{KEY2},{KEY1}"))
    server = GameService(Config(previous_state_versions=previous), keys, None)  # type: ignore[arg-type]
    request = pb.CreateGameRequest(game="osirium", num_players=4, seed=424242)
    request.options.osirium.teams = True
    actions, token = _play(server, request, 60)
    path = tmp_path / "actions.txt"
    path.write_text("# moves\n" + "\n".join(map(str, actions)) + "\n")
    monkeypatch.setenv("HEKA_STATE_KEYS", f"{KEY2},{KEY1}")
    monkeypatch.delenv("HEKA_STATE_KEYS_FILE", raising=False)
    args = [
        "replay",
        "--game",
        "osirium",
        "--players",
        "4",
        "--options",
        '{"teams": true}',
        "--seed",
        "424242",
        "--key-id",
        "k2",
        "--actions",
        str(path),
        "--quiet",
    ]
    if previous:
        args.append("--previous-state-versions")
    assert main(args) == 0
    out = capsys.readouterr().out
    final = out.rsplit("# serialized: ", 1)[1].strip()
    server_text = keys.open(token).serialized
    # The same state; the compatible server writes it in the previous version's text (which
    # has no move number).
    assert final.split(":", 2)[2] == server_text.split(":", 2)[2] + ("" if not previous else ";mv=60")
    assert final.endswith(";mv=60")
    # Another key deals another game: the replay no longer matches (or fails on a move).
    code = main([*args[:10], "k1", *args[11:]])
    out = capsys.readouterr().out
    assert code == 2 or out.rsplit("# serialized: ", 1)[1].strip() != final


def test_replay_reports_bad_input(capsys: Any, monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.delenv("HEKA_STATE_KEYS", raising=False)
    monkeypatch.delenv("HEKA_STATE_KEYS_FILE", raising=False)
    assert main(["replay", "--game", "aton", "--seed", "1"]) == 2
    assert "no key" in capsys.readouterr().err
    monkeypatch.setenv("HEKA_STATE_KEYS", KEY1)
    assert main(["replay", "--game", "aton", "--seed", "1", "--key-id", "nope"]) == 2
    assert "no key 'nope'" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("fly to the moon\n")
    assert main(["replay", "--game", "aton", "--seed", "1", "--actions", str(bad)]) == 2
    assert "step 1" in capsys.readouterr().err
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe")
    assert main(["replay", "--game", "aton", "--seed", "1", "--actions", str(binary)]) == 2
    assert f"--actions {binary}: not a text (UTF-8) file" in capsys.readouterr().err
    dashes = tmp_path / "dashes.txt"
    dashes.write_text("--1\n")  # not an id: action text, which names no action
    assert main(["replay", "--game", "aton", "--seed", "1", "--actions", str(dashes)]) == 2
    assert "step 1 ('--1')" in capsys.readouterr().err
    big = tmp_path / "big.txt"
    big.write_text("9" * 5000 + "\n")
    assert main(["replay", "--game", "aton", "--seed", "1", "--actions", str(big)]) == 2
    assert "step 1" in capsys.readouterr().err
    assert main(["replay", "--game", "aton", "--seed", "1", "--options", "{bad"]) == 2
    assert "heka replay: --options is not JSON" in capsys.readouterr().err
    # A seed no server returns (CreateGameResponse.seed is a uint64) is refused naming --seed.
    for seed, message in [
        ("-1", "got -1"),
        (str(2**64), f"got {2**64}"),
        ("0x10", "a seed is an integer, got '0x10'"),
    ]:
        with pytest.raises(SystemExit) as info:  # argparse's usage error
            main(["replay", "--game", "aton", "--seed", seed])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert "argument --seed" in err and message in err, err
    assert main(["replay", "--game", "aton", "--seed", str(2**64 - 1), "--quiet"]) == 0
    monkeypatch.delenv("HEKA_STATE_KEYS")
    assert main(["replay", "--game", "aton", "--seed", "1", "--state-keys-file", str(binary)]) == 2
    assert f"--state-keys-file {binary}: not a text (UTF-8) file" in capsys.readouterr().err
    empty, garbage = binary.with_name("empty.keys"), binary.with_name("garbage.keys")
    empty.write_text("\n")
    garbage.write_text("garbage\n")
    for path, message in [
        (empty, f"--state-keys-file {empty} holds no keys"),
        (garbage, f"--state-keys-file {garbage}: key 1: each key must be written key_id:base64_secret"),
    ]:
        assert main(["replay", "--game", "aton", "--seed", "1", "--state-keys-file", str(path)]) == 2
        assert message in capsys.readouterr().err
        assert main(["render", "--state", "abc", "--state-keys-file", str(path)]) == 2
        assert message in capsys.readouterr().err
