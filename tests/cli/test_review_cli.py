"""`heka review` end to end: a `heka play --save` record and an `heka arena --json` file
reviewed in the terminal, the JSON it writes, and its errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ai.review import review_game as review_game_direct
from ai.review import reviewer
from engine.registry import get_game
from service.cli import main


def saved_game(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A whole Aton game played with `heka play` (always the first action) and saved."""
    path = tmp_path / "game.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 2000))
    code = main(["play", "--game", "aton", "--bots", "random", "--seed", "4", "--save", str(path)])
    out = capsys.readouterr().out
    assert code == 0 and f"game record written to {path}" in out
    return path


def test_a_saved_game_is_reviewed_with_each_move_and_the_seats_accuracy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved_game(monkeypatch, tmp_path, capsys)
    record = json.loads(path.read_text())
    assert record["record"] == "heka-game/1" and record["over"] and record["person"] == 0
    assert record["seats"] == ["you", "random"] and record["seed"] == 4
    # The record replays: its actions end the game dealt from its seed.
    state = get_game("aton").new_initial_state(2, 4, {})
    for a in record["actions"]:
        state.apply(a)
    assert state.is_terminal()

    out_json = tmp_path / "review.json"
    code = main(
        ["review", str(path), "--iterations", "40", "--seed", "3", "--json", str(out_json), "--no-progress"]
    )
    out = capsys.readouterr().out
    assert code == 0
    review = json.loads(out_json.read_text())
    assert review["seats"] == [0] and review["reviewer"] == "mcts:medium,iterations=40"
    direct = review_game_direct(
        get_game("aton").new_initial_state(2, 4, {}),
        record["actions"],
        seats=[0],
        who=reviewer("medium", 40),
        seed=3,
    )
    assert [m["move"] for m in review["moves"]] == [r.move for r in direct.moves]
    assert [m["grade"] for m in review["moves"]] == [r.grade for r in direct.moves]
    (summary,) = review["summary"]
    assert summary["name"] == "you" and summary["moves"] == len(direct.moves)
    assert summary["accuracy"] == pytest.approx(direct.summaries[0].accuracy, abs=1e-3)
    assert f"seat 0 (you): accuracy {direct.summaries[0].accuracy:.1f}" in out
    first = direct.moves[0]
    assert f"{first.move:>5}     0  {first.grade:<10}" in out


def test_the_review_is_the_same_on_several_processes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved_game(monkeypatch, tmp_path, capsys)
    outs = []
    for workers in ("1", "2"):
        target = tmp_path / f"r{workers}.json"
        args = [
            "review",
            str(path),
            "--all-seats",
            "--iterations",
            "30",
            "--workers",
            workers,
            "--json",
            str(target),
        ]
        assert main([*args, "--no-progress"]) == 0
        outs.append(json.loads(target.read_text())["moves"])
    assert outs[0] == outs[1] and {m["seat"] for m in outs[0]} == {0, 1}


def test_an_arena_game_is_reviewed_by_its_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arena = tmp_path / "arena.json"
    args = ["arena", "--game", "osirium", "--bots", "greedy,random", "--games", "2", "--seed", "5"]
    assert main([*args, "--json", str(arena), "--no-progress"]) == 0
    games = json.loads(arena.read_text())["games"]
    assert all(g["actions"] and len(g["actions"]) == g["plies"] for g in games)
    capsys.readouterr()
    code = main(["review", str(arena), "--index", "1", "--seat", "1", "--iterations", "20", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"seat 1 {games[1]['seats'][1]}" in out and "seat 1 (" in out and "accuracy" in out


def test_an_arena_team_game_is_reviewed_as_played_and_its_last_move_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`heka arena --teams` keeps teams beside the options: a review read only the options and
    graded a free-for-all game that was never played. A game must replay to its recorded
    winners, whatever else a record leaves out; `--from-move` takes the last move's number."""
    arena = tmp_path / "teams.json"
    args = ["arena", "--game", "osirium", "--players", "4", "--teams", "--bots", "random,greedy"]
    assert main([*args, "--games", "1", "--seed", "2", "--json", str(arena), "--no-progress"]) == 0
    data = json.loads(arena.read_text())
    game = data["games"][0]
    capsys.readouterr()
    last = len(game["actions"])
    review = ["review", str(arena), "--seat", "0", "--iterations", "5", "--no-progress"]
    assert main([*review, "--from-move", str(last), "--json", str(tmp_path / "r.json")]) == 0
    reviewed = json.loads((tmp_path / "r.json").read_text())
    assert [m["move"] for m in reviewed["moves"]] == [last] or reviewed["moves"] == []
    capsys.readouterr()
    dropped = tmp_path / "dropped.json"
    dropped.write_text(json.dumps({**data, "teams": False}))
    assert main(["review", str(dropped), "--seat", "0", "--no-progress"]) == 2
    assert "replays to winners" in capsys.readouterr().err


def test_bad_records_and_settings_exit_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps({"game": "aton", "players": 2, "games": [{"index": 0, "deal_seed": 1, "seats": []}]})
    )
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    path = saved_game(monkeypatch, tmp_path, capsys)
    record = json.loads(path.read_text())
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**record, "actions": [*record["actions"][:5], 10**6]}))
    cases = [
        ([str(old)], "no actions"),
        ([str(old), "--index", "3"], "no game of index 3"),
        ([str(junk)], "not a game record"),
        ([str(tmp_path / "missing.json")], "cannot read"),
        ([str(path), "--seat", "5"], "--seat must be 0..1"),
        ([str(path), "--index", "2"], "is a play record of one game: --index picks a game of an arena file"),
        ([str(path), "--preset", "godlike"], "unknown preset"),
        ([str(bad)], "move 6"),
    ]
    n = len(record["actions"])
    for name, change, message in [
        ("person7", {"person": 7}, "'person' 7 is not a seat of a 2-player game (0..1)"),
        ("person-1", {"person": -1}, "'person' -1 is not a seat"),
        ("text", {"actions": "123"}, "'actions' must be a list of action ids"),
        ("empty", {"actions": []}, "the game has no moves to review"),
        ("names", {"seats": ["you"]}, "'seats' must name each of the 2 seats"),
        ("seed", {"seed": 3.9}, "'seed' must be an integer, not 3.9"),
        ("seedtext", {"seed": "3"}, "'seed' must be an integer, not '3'"),
        ("players", {"players": "2"}, "'players' must be an integer, not '2'"),
        ("options", {"options": []}, "'options' must be an object, not []"),
    ]:
        changed = tmp_path / f"{name}.json"
        changed.write_text(json.dumps({**record, **change}))
        cases.append(([str(changed)], message))
    arena = json.loads(old.read_text())
    for name, games, message in [
        ("fraction", [{**arena["games"][0], "index": 0.7}], "'games[0].index' must be an integer, not 0.7"),
        (
            "textindex",
            [{**arena["games"][0], "index": "abc"}],
            "'games[0].index' must be an integer, not 'abc'",
        ),
        ("notobject", ["game"], "games[0] must be an object, not str"),
        ("noseats", [{"index": 0, "deal_seed": 1, "actions": [1]}], "the field 'seats' is missing"),
    ]:
        changed = tmp_path / f"arena-{name}.json"
        changed.write_text(json.dumps({**arena, "games": games}))
        cases.append(([str(changed)], message))
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\x00")
    cases += [
        ([str(path), "--from-move", str(n + 1)], f"--from-move {n + 1} is not a move of the game (0..{n})"),
        ([str(path), "--from-move", "-5"], "--from-move -5 is not a move of the game"),
        ([str(binary)], f"the record {binary}: not a text (UTF-8) file"),
        ([str(path), "--json", str(tmp_path)], f"cannot write --json {tmp_path}: it is a folder"),
    ]
    for args, message in cases:
        assert main(["review", *args, "--no-progress"]) == 2, args
        assert message in capsys.readouterr().err, args


@pytest.mark.parametrize("workers", [1, 2])
def test_a_missing_model_file_exits_2_naming_it(
    workers: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The expert reviewer's evaluation file (HEKA_MODEL_DIR) is missing: a message naming the
    file, exit 2, on one process or several."""
    path = saved_game(monkeypatch, tmp_path, capsys)
    monkeypatch.setenv("HEKA_MODEL_DIR", str(tmp_path / "no-models"))
    args = ["review", str(path), "--preset", "expert", "--iterations", "4", "--no-progress"]
    assert main([*args, "--workers", str(workers)]) == 2
    err = capsys.readouterr().err
    assert f"heka review: learned evaluation model {tmp_path / 'no-models' / 'aton-2p.json'}" in err, err
    assert "Traceback" not in err


def test_a_game_played_through_a_server_cannot_be_saved(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--server", "127.0.0.1:1", "--save", "x.json"]) == 2
    assert "ReviewGame" in capsys.readouterr().err


def test_a_seat_with_no_move_reviewed_gets_no_accuracy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved_game(monkeypatch, tmp_path, capsys)
    last = len(json.loads(path.read_text())["actions"]) - 1
    out_json = tmp_path / "review.json"
    args = ["review", str(path), "--from-move", str(last), "--all-seats", "--iterations", "5"]
    assert main([*args, "--no-progress", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "no moves reviewed" in out and "0 moves reviewed" not in out
    summary = json.loads(out_json.read_text())["summary"]
    assert any(s["moves"] == 0 and s["accuracy"] is None for s in summary)


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--iterations", "0", "must be 1..1,000,000, got 0"),
        ("--iterations", str(10**20), f"must be 1..1,000,000, got {10**20}"),
        ("--alternatives", "0", "must be 1..10, got 0"),
        ("--alternatives", "x", "a whole number 1..10, got 'x'"),
        ("--seed", "-1", "a seed is 0..2^64-1, got -1"),
    ],
)
def test_a_flag_out_of_range_is_refused_naming_it(
    flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["review", "record.json", flag, value])
    assert info.value.code == 2
    assert f"argument {flag}: {message}" in capsys.readouterr().err
